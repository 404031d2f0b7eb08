import Foundation
import TrafficModel

/// A large response body written into a HAR entry a slice at a time, so that the journal of
/// a large download holds no copy of it beside the body itself: not its text, its base64,
/// nor a JSON document holding either (a 64 MB body kept under `--max-body-bytes` cost
/// three such copies). The entry is serialized with a stand-in where the body's string
/// goes, and the body is encoded between the two halves, as `HARExporter` would write it:
/// UTF-8 text as JSON text, anything else as base64 with `content.encoding`.
struct StreamedBody {
    /// A body's bytes, read a slice at a time: from memory, or from a file (the
    /// recording proxy's kept body past a megabyte), so that the file need not be read whole.
    struct Source {
        var count: Int
        var read: (Range<Int>) throws -> Data

        init(count: Int, read: @escaping (Range<Int>) throws -> Data) {
            self.count = count
            self.read = read
        }

        init(_ data: Data) {
            count = data.count
            read = { data[data.startIndex + $0.lowerBound ..< data.startIndex + $0.upperBound] }
        }
    }

    /// Bodies from this size are streamed; smaller ones go through `entryLine`.
    static let threshold = 1 << 20
    /// Bytes encoded at a time: a multiple of 3, so base64 slices join without padding.
    static let slice = 3 << 18

    /// The entry's JSON before the body's string (its opening quote included) and after it.
    let before: Data
    let after: Data
    let base64: Bool

    init(_ e: Exchange, body: Source, exporter: HARExporter, failure: String?, incomplete: String?, receivedBodyBytes: Int?) throws {
        base64 = !Self.isUTF8(body)
        var object = exporter.notedEntry(e, failure: failure, incomplete: incomplete, receivedBodyBytes: receivedBodyBytes, bodyText: false)
        let stand = "h5replay-streamed-body-\(UUID().uuidString)"
        if var response = object["response"] as? [String: Any], var content = response["content"] as? [String: Any] {
            content["text"] = stand
            if base64 { content["encoding"] = "base64" }
            response["content"] = content
            object["response"] = response
        }
        let json = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        guard let at = json.range(of: Data("\"\(stand)\"".utf8)) else { throw StreamError() }
        before = json[..<(at.lowerBound + 1)]
        after = json[(at.upperBound - 1)...]
    }

    struct StreamError: Error, CustomStringConvertible {
        var description: String { "the journal entry's body could not be placed" }
    }

    /// Hands `write` the body's string contents, JSON-escaped text or base64, a slice at a time.
    func write(_ body: Source, to write: (Data) throws -> Void) throws {
        if base64 {
            var start = 0
            while start < body.count {
                let end = min(start + Self.slice, body.count)
                try write(Base64.encode(try body.read(start..<end)))
                start = end
            }
            return
        }
        try Self.textSlices(body) { text in
            try write(Self.escaped(text))
            return true
        }
    }

    /// The text's JSON string contents, escaped byte for byte as JSONSerialization escapes
    /// the rest of the entry (`\"`, `\\`, `\b \t \n \f \r`, other controls as `\u00xx`,
    /// slashes and everything else as they are). Written here rather than by serializing each
    /// slice: JSONSerialization escaped a megabyte of NUL bytes one formatted number at a
    /// time, and that was the proxy's largest cost after its socket copies.
    static func escaped(_ text: String) -> Data {
        var text = text
        return text.withUTF8 { bytes in
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + bytes.count / 8)
            var run = 0
            for (i, byte) in bytes.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<i]))
                appendEscape(byte, to: &out)
                run = i + 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run...]))
            return Data(out)
        }
    }

    /// The escape JSONSerialization writes for a byte under 0x20, a quote or a backslash.
    static func appendEscape(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(byte)
        case 0x08: out.append(UInt8(ascii: "b"))
        case 0x09: out.append(UInt8(ascii: "t"))
        case 0x0A: out.append(UInt8(ascii: "n"))
        case 0x0C: out.append(UInt8(ascii: "f"))
        case 0x0D: out.append(UInt8(ascii: "r"))
        default:
            let hex: StaticString = "0123456789abcdef"
            out.append(UInt8(ascii: "u"))
            out.append(UInt8(ascii: "0"))
            out.append(UInt8(ascii: "0"))
            out.append(hex.utf8Start[Int(byte >> 4)])
            out.append(hex.utf8Start[Int(byte & 0xF)])
        }
    }

    /// Whether the body is written as text: UTF-8 without the control bytes that make
    /// `HARExporter` write base64.
    static func isUTF8(_ body: Source) -> Bool {
        (try? textSlices(body) { !HARExporter.hasBinaryControls($0.utf8) }) ?? false
    }

    /// The body as text, a slice at a time, each ending on a character boundary; throws
    /// `StreamError`, or stops, when a slice is not UTF-8.
    @discardableResult
    static func textSlices(_ body: Source, _ visit: (String) throws -> Bool) throws -> Bool {
        var start = 0
        while start < body.count {
            // One byte past the slice, to see whether the slice ends inside a character.
            let bytes = try body.read(start..<min(start + slice + 1, body.count))
            var end = min(slice, bytes.count)
            // Back to the start of a character: continuation bytes are 10xxxxxx.
            var back = 0
            while end < bytes.count, back < 4, bytes[bytes.startIndex + end] & 0xC0 == 0x80 { end -= 1; back += 1 }
            guard end > 0, let text = String(validating: bytes[bytes.startIndex..<bytes.startIndex + end], as: UTF8.self) else { throw StreamError() }
            guard try visit(text) else { return false }
            start += end
        }
        return true
    }
}
