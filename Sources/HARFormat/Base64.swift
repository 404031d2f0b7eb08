import Foundation

/// Base64 as RFC 4648 writes it (the standard alphabet, `=` padding, no line breaks),
/// a whole three-byte group at a time from a table. Foundation's encoder took about ten
/// instructions a byte: two thirds of the recording proxy's work for a large binary
/// download, whose kept bytes the journal writes as base64 (callgrind, docs/performance.md).
enum Base64 {
    static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The encoding of `data`, as `data.base64EncodedData()` gives it.
    static func encode(_ data: Data) -> Data {
        data.withUnsafeBytes { encode($0) }
    }

    /// The encoding of `data` as text, as `data.base64EncodedString()` gives it.
    static func string(_ data: Data) -> String {
        String(decoding: encode(data), as: UTF8.self)
    }

    /// Each 12 bits of input as its two output characters, the first in the low byte.
    static let pairs: [UInt16] = (0..<4096).map { UInt16(alphabet[$0 >> 6]) | UInt16(alphabet[$0 & 63]) << 8 }

    static func encode(_ bytes: UnsafeRawBufferPointer) -> Data {
        let count = bytes.count
        var out = Data(count: (count + 2) / 3 * 4)
        out.withUnsafeMutableBytes { (output: UnsafeMutableRawBufferPointer) -> Void in
            pairs.withUnsafeBufferPointer { (pairs: UnsafeBufferPointer<UInt16>) -> Void in
                var i = 0, j = 0
                // Four bytes read at once while four are there, three of them encoded.
                while i + 4 <= count {
                    let group = UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt32.self)) >> 8
                    output.storeBytes(of: pairs[Int(group >> 12)].littleEndian, toByteOffset: j, as: UInt16.self)
                    output.storeBytes(of: pairs[Int(group & 0xFFF)].littleEndian, toByteOffset: j + 2, as: UInt16.self)
                    i += 3
                    j += 4
                }
                tail(bytes, from: i, into: output, at: j)
            }
        }
        return out
    }

    /// The last one to three bytes, padded with `=` where a group is short.
    static func tail(_ bytes: UnsafeRawBufferPointer, from start: Int, into output: UnsafeMutableRawBufferPointer, at position: Int) {
        var i = start, j = position
        while i < bytes.count {
            let left = bytes.count - i
            let group = UInt32(bytes[i]) << 16 | (left > 1 ? UInt32(bytes[i + 1]) << 8 : 0) | (left > 2 ? UInt32(bytes[i + 2]) : 0)
            output[j] = alphabet[Int(group >> 18)]
            output[j + 1] = alphabet[Int(group >> 12 & 63)]
            output[j + 2] = left > 1 ? alphabet[Int(group >> 6 & 63)] : UInt8(ascii: "=")
            output[j + 3] = left > 2 ? alphabet[Int(group & 63)] : UInt8(ascii: "=")
            i += 3
            j += 4
        }
    }
}
