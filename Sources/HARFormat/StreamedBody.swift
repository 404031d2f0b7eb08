import Foundation
import TrafficModel

/// A large response body written into a HAR entry a slice at a time, so that the journal of
/// a large download holds no copy of it beside the body itself: not its text, its base64,
/// nor a JSON document holding either (a 64 MB body kept under `--max-body-bytes` cost
/// three such copies). The entry is serialized with a stand-in where the body's string
/// goes, and the body is encoded between the two halves, as `HARExporter` would write it:
/// UTF-8 as JSON text, anything else as base64 with `content.encoding`.
struct StreamedBody {
    /// Bodies from this size are streamed; smaller ones go through `entryLine`.
    static let threshold = 1 << 20
    /// Bytes encoded at a time: a multiple of 3, so base64 slices join without padding.
    static let slice = 3 << 18

    /// The entry's JSON before the body's string (its opening quote included) and after it.
    let before: Data
    let after: Data
    let base64: Bool

    init(_ e: Exchange, exporter: HARExporter, failure: String?, incomplete: String?, receivedBodyBytes: Int?) throws {
        let body = e.response.body
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
    func write(_ body: Data, to write: (Data) throws -> Void) throws {
        if base64 {
            var start = body.startIndex
            while start < body.endIndex {
                let end = min(start + Self.slice, body.endIndex)
                try write(body[start..<end].base64EncodedData())
                start = end
            }
            return
        }
        try Self.textSlices(body) { text in
            // JSONSerialization escapes as the rest of the entry is escaped; the array's
            // `["` and `"]` are cut off.
            let json = try JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])
            try write(json.dropFirst(2).dropLast(2))
            return true
        }
    }

    static func isUTF8(_ body: Data) -> Bool {
        (try? textSlices(body) { _ in true }) ?? false
    }

    /// The body as text, a slice at a time, each ending on a character boundary; throws
    /// `StreamError`, or stops, when a slice is not UTF-8.
    @discardableResult
    static func textSlices(_ body: Data, _ visit: (String) throws -> Bool) throws -> Bool {
        var start = body.startIndex
        while start < body.endIndex {
            var end = min(start + slice, body.endIndex)
            // Back to the start of a character: continuation bytes are 10xxxxxx.
            var back = 0
            while end < body.endIndex, back < 4, body[end] & 0xC0 == 0x80 { end -= 1; back += 1 }
            guard end > start, let text = String(validating: body[start..<end], as: UTF8.self) else { throw StreamError() }
            guard try visit(text) else { return false }
            start = end
        }
        return true
    }
}
