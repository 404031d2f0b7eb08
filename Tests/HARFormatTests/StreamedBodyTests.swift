import Foundation
import Testing
import TrafficModel
@testable import HARFormat

@Suite("HAR journal: a large body streamed into its entry")
struct StreamedBodyTests {
    /// Bytes that are not UTF-8, over several slices.
    static let binary = Data((0..<(3 * StreamedBody.slice + 5)).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) })
    /// UTF-8 text whose characters (1 to 4 bytes) straddle every slice boundary, with
    /// characters JSON escapes: quotes, backslashes, line ends, tabs, form feeds, a slash.
    static let text: Data = {
        let unit = "a\"b\\c\nd\t\u{c}é漢😀</"
        var s = ""
        while s.utf8.count < 2 * StreamedBody.slice + 11 { s += unit }
        return Data(s.utf8)
    }()

    static func exchange(_ body: Data, sequence: Int) -> Exchange {
        Exchange(sequence: sequence, startedAt: 1_700_000_000 + Double(sequence), request: RecordedRequest(method: "GET", url: "https://a.example/big/\(sequence)"),
                 response: RecordedResponse(status: 200, headers: [HeaderField("Content-Type", "application/octet-stream")], body: body))
    }

    @Test("each streamed line is the line written whole, byte for byte, and reads back to the same body", arguments: ["binary", "text", "NUL bytes"])
    func sameLine(kind: String) throws {
        // NUL bytes are valid UTF-8 but no text: base64, not six bytes of escape each.
        let body = kind == "binary" ? Self.binary : kind == "text" ? Self.text : Data(count: StreamedBody.threshold + 7)
        #expect(body.count >= StreamedBody.threshold)
        #expect(StreamedBody.isUTF8(.init(body)) == (kind == "text"))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-streamed-\(UUID().uuidString).har").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let journal = try HARJournal(path: path, toolVersion: "test")
        let small = Self.exchange(Data("small".utf8), sequence: 0), large = Self.exchange(body, sequence: 1)
        try journal.append(small)
        try journal.append(large, receivedBodyBytes: body.count * 4)
        try journal.finish()
        let lines = try Data(contentsOf: URL(fileURLWithPath: path)).split(separator: UInt8(ascii: "\n"))
        let whole = try HARExporter(toolVersion: "test").entryLine(large, receivedBodyBytes: body.count * 4)
        #expect(lines.count == 4)
        #expect(lines.count == 4 && Data(lines[2]) == whole)
        let read = try HARImporter().recording(from: Data(contentsOf: URL(fileURLWithPath: path)), file: path, name: "big")
        #expect(read.exchanges.map(\.response.body) == [Data("small".utf8), body])
    }

    @Test("a slice of text is escaped as JSONSerialization escapes it, every ASCII character and some beyond")
    func escapedAsSerialized() throws {
        let text = String((0..<0x80).map { Character(UnicodeScalar(UInt8($0))) }) + "é\u{2028}漢😀 </script>" + String(repeating: "\u{0}", count: 5)
        let serialized = try JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])
        #expect(StreamedBody.escaped(text) == serialized.dropFirst(2).dropLast(2))
    }

    @Test("base64 is written as Foundation writes it, for every length of a group and a megabyte")
    func base64AsFoundation() {
        var generator = SystemRandomNumberGenerator()
        for count in Array(0...64) + [1 << 20, (1 << 20) + 1, (1 << 20) + 2] {
            let data = Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
            #expect(Base64.encode(data) == data.base64EncodedData(), "\(count) bytes")
            #expect(Base64.string(data) == data.base64EncodedString(), "\(count) bytes")
        }
        #expect(Base64.encode(Data(count: 7)) == Data(count: 7).base64EncodedData())
    }
}
