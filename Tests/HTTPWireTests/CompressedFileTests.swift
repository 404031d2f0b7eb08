import Foundation
import Testing
@testable import HTTPWire

/// Recordings compressed whole (`.zhar`, `.har.gz`, `.pcap.gz`): told from what h5replay
/// reads uncompressed, and inflated as a stream with errors that name the place.
@Suite("Compressed recording files")
struct CompressedFileTests {
    static let har = Array(#"{"log":{"version":"1.2","creator":{"name":"t","version":"1"},"entries":[]}}"#.utf8)

    static func temporary(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-cf-\(getpid())-\(UUID().uuidString)-\(name)").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func inflated(_ bytes: [UInt8], _ wrapper: CompressedFile.Wrapper, limit: Int = 1 << 30) throws -> [UInt8] {
        try inflation(bytes, wrapper, limit: limit).bytes
    }

    static func inflation(_ bytes: [UInt8], _ wrapper: CompressedFile.Wrapper, limit: Int = 1 << 30) throws -> (bytes: [UInt8], result: CompressedFile.Inflated) {
        let input = try temporary("in", bytes)
        let output = input + ".out"
        defer {
            try? FileManager.default.removeItem(atPath: input)
            try? FileManager.default.removeItem(atPath: output)
        }
        let result = try CompressedFile.inflate(input, wrapper: wrapper, into: output, limit: limit)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: output)))
        #expect(result.bytes == bytes.count)
        return (bytes, result)
    }

    @Test("gzip and zlib headers are told apart from JSON, a byte-order mark, pcap and pcapng")
    func wrappers() {
        #expect(CompressedFile.wrapper(of: Data(ContentDecoderTests.compress(Self.har, windowBits: 31))) == .gzip)
        #expect(CompressedFile.wrapper(of: Data(ContentDecoderTests.compress(Self.har, windowBits: 15))) == .zlib)
        // zlib's four compression levels each write another second byte.
        for second: UInt8 in [0x01, 0x5E, 0x9C, 0xDA] { #expect(CompressedFile.wrapper(of: Data([0x78, second])) == .zlib) }
        let plain: [[UInt8]] = [Self.har, [0xEF, 0xBB, 0xBF, 0x7B], Array("  \n{".utf8), [0xD4, 0xC3, 0xB2, 0xA1], [0xA1, 0xB2, 0xC3, 0xD4], [0x0A, 0x0D, 0x0D, 0x0A], [0x1F, 0x8B], [0x78]]
        for bytes in plain { #expect(CompressedFile.wrapper(of: Data(bytes)) == nil, "\(bytes.prefix(4))") }
    }

    @Test("a file inflates whole, in blocks, and gzip members one after another are one file")
    func inflates() throws {
        // More than one read block, so a stream crosses block ends.
        var big: [UInt8] = []
        for k in 0..<300_000 { big += Array("entry \(k) ".utf8) }
        #expect(try Self.inflated(ContentDecoderTests.compress(big, windowBits: 31), .gzip) == big)
        #expect(try Self.inflated(ContentDecoderTests.compress(big, windowBits: 15), .zlib) == big)
        let half = big.count / 2
        let members = ContentDecoderTests.compress(Array(big[..<half]), windowBits: 31) + ContentDecoderTests.compress(Array(big[half...]), windowBits: 31)
        #expect(try Self.inflated(members, .gzip) == big)
        let gzip = ContentDecoderTests.compress(big, windowBits: 31)
        #expect(CompressedFile.head(of: Data(gzip), wrapper: .gzip, count: 6, whole: true) == (Data("entry ".utf8), nil))
        // Zero bytes after the end are padding, as `gzip -d` takes them.
        #expect(try Self.inflated(gzip + [UInt8](repeating: 0, count: 3 << 20), .gzip) == big)
    }

    @Test("a cut stream gives what inflated before the cut and says so; a corrupt, padded or too large one is an error naming the compressed byte or the limit")
    func failures() throws {
        let gzip = ContentDecoderTests.compress(Self.har, windowBits: 31)
        #expect(try Self.inflation(gzip, .gzip).result == CompressedFile.Inflated(bytes: Self.har.count, compressedBytes: gzip.count, endedEarly: false))
        // Cut inside the trailer: every byte inflated, the check never read.
        let cut = try Self.inflation(Array(gzip.prefix(gzip.count - 4)), .gzip)
        #expect(cut.bytes == Self.har && cut.result.endedEarly && cut.result.compressedBytes == gzip.count - 4)
        #expect(cut.result.endedEarlyText(.gzip) == "the gzip data ends early, after \(gzip.count - 4) compressed bytes (\(Self.har.count) inflated)")
        let early = try Self.inflation(Array(gzip.prefix(12)), .gzip)
        #expect(early.result.endedEarly && early.bytes.count < Self.har.count && Self.har.starts(with: early.bytes))
        var corrupt = gzip
        corrupt[gzip.count - 6] ^= 0xFF  // the CRC-32
        do {
            _ = try Self.inflated(corrupt, .gzip)
            Issue.record("a wrong CRC-32 inflated")
        } catch {
            #expect("\(error)".contains("corrupt at compressed byte") && "\(error)".contains("incorrect data check"), "\(error)")
        }
        #expect(CompressedFile.head(of: Data(gzip.prefix(10)), wrapper: .gzip, count: 64, whole: true).problem == "the gzip data ends early, after 10 compressed bytes (0 inflated)")
        var garbled = gzip
        garbled[10] = 0xFF  // a reserved block type
        #expect(CompressedFile.head(of: Data(garbled), wrapper: .gzip, count: 64, whole: true).problem == "the gzip data is corrupt at compressed byte 11: invalid block type")
        do {
            _ = try Self.inflated(gzip + [0, 0, 7], .gzip)
            Issue.record("a byte after the padding was taken")
        } catch {
            #expect("\(error)" == "bytes follow the end of the gzip stream at compressed byte \(gzip.count + 2)")
        }
        let zlib = ContentDecoderTests.compress(Self.har, windowBits: 15)
        do {
            _ = try Self.inflated(zlib + [1, 2, 3], .zlib)
            Issue.record("bytes after a zlib stream were taken")
        } catch {
            #expect("\(error)" == "3 bytes follow the end of the zlib stream at compressed byte \(zlib.count)")
        }
        do {
            _ = try Self.inflated(gzip, .gzip, limit: 10)
            Issue.record("the limit was passed")
        } catch {
            #expect("\(error)" == "it inflates to more than 10 bytes")
        }
    }
}
