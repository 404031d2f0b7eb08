import Testing
@testable import HTTPWire

/// libdeflate decodes whole bodies first; zlib's stream decodes what it leaves. The two must
/// never differ: each case decodes with and without libdeflate, tolerant and strict, under
/// limits around the decoded size, and must give the same bytes, oddities and limit, or the
/// same failure.
@Suite("Whole-body decoding")
struct WholeBodyDecodingTests {
    typealias Compress = ContentDecoderTests

    /// Texts that compress well (one past eight times its input, so the output buffer must
    /// grow), that do not compress, and nothing.
    static let texts: [[UInt8]] = {
        var noise: [UInt8] = []
        var state: UInt32 = 2_463_534_242
        for _ in 0..<40_000 {
            state ^= state << 13; state ^= state >> 17; state ^= state << 5
            noise.append(UInt8(truncatingIfNeeded: state))
        }
        return [ContentDecoderTests.text, Array(String(repeating: "{\"id\":1,\"ok\":true}", count: 30_000).utf8), noise, []]
    }()

    /// A gzip member whose header carries a file name and a header CRC, right or wrong.
    static func gzipWithHeaderCRC(_ text: [UInt8], right: Bool) -> [UInt8] {
        let plain = Compress.compress(text, windowBits: 31)
        var member = Array(plain.prefix(10))
        member[3] = 0x0A  // FNAME, FHCRC
        member += Array("page.js".utf8) + [0]
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in member {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        let check = UInt16(truncatingIfNeeded: ~crc) ^ (right ? 0 : 0x5A5A)
        return member + [UInt8(check & 0xFF), UInt8(check >> 8)] + plain.dropFirst(10)
    }

    /// Each text in each coding, whole and spoiled in each way a capture spoils a body.
    static func cases() -> [(name: String, body: [UInt8], coding: String)] {
        var cases: [(name: String, body: [UInt8], coding: String)] = []
        for (t, text) in texts.enumerated() {
            for (wrapper, bits) in [("gzip", Int32(31)), ("zlib", 15), ("raw", -15), ("gzip-small-window", 25), ("zlib-small-window", 9), ("raw-small-window", -9)] {
                let coding = wrapper.hasPrefix("gzip") ? "gzip" : "deflate"
                let whole = Compress.compress(text, windowBits: bits)
                let name = "text \(t) \(wrapper)"
                cases.append((name, whole, coding))
                for cut in [1, 4, 9, whole.count / 2] where cut < whole.count {
                    cases.append(("\(name) less \(cut) bytes", Array(whole.dropLast(cut)), coding))
                }
                var flipped = whole
                flipped[flipped.count - 2] ^= 0x40  // the trailer's check or size, or the last block
                cases.append(("\(name) trailer flipped", flipped, coding))
                var middle = whole
                middle[middle.count / 2] ^= 0x10
                cases.append(("\(name) middle flipped", middle, coding))
                cases.append(("\(name) trailing bytes", whole + Array("xyz\r\n".utf8), coding))
                cases.append(("\(name) two members", whole + Compress.compress(Array("second".utf8), windowBits: bits), coding))
            }
            cases.append(("text \(t) gzip header CRC right", gzipWithHeaderCRC(text, right: true), "gzip"))
            cases.append(("text \(t) gzip header CRC wrong", gzipWithHeaderCRC(text, right: false), "gzip"))
        }
        return cases
    }

    static func describe(_ decoder: ContentDecoder, _ body: [UInt8], _ coding: String) -> String {
        do {
            let decoded = try decoder.decode(body, contentEncoding: coding)
            return "\(decoded.bytes.count) bytes \(decoded.bytes.hashValue) codings \(decoded.codings) oddities \(decoded.oddities.map(\.id)) limited \(decoded.limited ?? "-")"
        } catch {
            return "failure \(error.description) oddity \(error.oddity?.id ?? "-")"
        }
    }

    @Test("libdeflate and zlib give the same result for every body, limit and mode")
    func sameAsZlib() {
        var compared = 0
        for item in Self.cases() {
            let decodedSize = (try? ContentDecoder(tolerant: false).decode(item.body, contentEncoding: item.coding).bytes.count) ?? 0
            for tolerant in [true, false] {
                for limit in Set([64 << 20, decodedSize, max(1, decodedSize - 1), max(1, decodedSize / 3)]) {
                    var fast = ContentDecoder(maxDecodedBytes: limit, tolerant: tolerant)
                    var zlib = fast
                    fast.wholeBodies = true
                    zlib.wholeBodies = false
                    #expect(Self.describe(fast, item.body, item.coding) == Self.describe(zlib, item.body, item.coding), "\(item.name), tolerant \(tolerant), limit \(limit)")
                    compared += 1
                }
            }
        }
        #expect(compared > 500)
    }

    @Test("libdeflate decodes the usual bodies itself and leaves zlib the headers it reads otherwise")
    func whoDecodes() {
        let decoder = ContentDecoder()
        let text = Self.texts[1]
        for bits: Int32 in [31, 15, -15] {
            let whole = decoder.wholeInflate(Compress.compress(text, windowBits: bits), windowBits: bits == 31 ? 31 : bits == 15 ? 15 : -15, limit: 64 << 20)
            #expect(whole?.bytes == text, "window bits \(bits)")
        }
        #expect(decoder.wholeInflate(Self.gzipWithHeaderCRC(text, right: true), windowBits: 31, limit: 64 << 20)?.bytes == nil)
        #expect(decoder.wholeInflate(Compress.compress(text, windowBits: 9), windowBits: 15, limit: 64 << 20)?.bytes == nil)
        // Past the limit, zlib's stream stops at it and says so.
        #expect(decoder.wholeInflate(Compress.compress(text, windowBits: 31), windowBits: 31, limit: text.count - 1)?.bytes == nil)
        // Strict decoding reads a second gzip member: zlib's stream does that.
        let members = Compress.compress(text, windowBits: 31) + Compress.compress(text, windowBits: 31)
        #expect(ContentDecoder(tolerant: false).wholeInflate(members, windowBits: 31, limit: 64 << 20)?.bytes == nil)
        #expect(decoder.wholeInflate(members, windowBits: 31, limit: 64 << 20)?.bytes == text)
    }
}
