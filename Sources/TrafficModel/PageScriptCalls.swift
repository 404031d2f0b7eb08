import Foundation

/// Which API a page's own inline script calls each of its URLs with, read from the
/// document's HTML: `fetch("/api/pay", ...)` or `xhr.open("POST", "/api/order")`. On the
/// wire an XHR and a fetch look alike (both `Sec-Fetch-Dest: empty`, where a browser sends
/// it at all), yet bridges and plugins treat them apart (a bridge that patches only XHR,
/// a plugin that sends only fetch natively). A request the headers leave `ajax` takes the
/// API the document names for its URL; a URL the document calls both ways, or not at all,
/// stays `ajax`.
struct PageScriptCalls: Sendable {
    /// Per host and path (no query), the API the document's script calls it with; nil
    /// where it calls it both ways.
    private var calls: [String: Initiator?] = [:]

    /// The most calls kept from one document.
    static let kept = 256
    /// How much of a document is read for them.
    static let bytesRead = 1 << 20

    var isEmpty: Bool { calls.isEmpty }

    /// The calls in `html`, the body of the document at `url`.
    init(html: Data, url: String) {
        let bytes = [UInt8](html.prefix(Self.bytesRead))
        var i = 0
        while i < bytes.count, calls.count < Self.kept {
            // Only an `f` or a `.` starts a call.
            if bytes[i] == UInt8(ascii: "f") || bytes[i] == UInt8(ascii: "."), let (api, literal, end) = Self.call(in: bytes, at: i) {
                note(api, literal, against: url)
                i = end
            } else {
                i += 1
            }
        }
    }

    /// The API the document calls `target` with, nil when it names none or both.
    func api(for target: RequestTarget) -> Initiator? {
        calls[Self.key(target)] ?? nil
    }

    private mutating func note(_ api: Initiator, _ literal: String, against url: String) {
        guard let resolved = RequestTarget.resolve(literal, against: url), let target = RequestTarget(resolved) else { return }
        let key = Self.key(target)
        if let earlier = calls[key], earlier != api { calls[key] = .some(nil) } else { calls[key] = api }
    }

    /// Host, port and path: a call's URL names the resource, whatever its query.
    static func key(_ target: RequestTarget) -> String { "\(target.host):\(target.port)\(target.path)" }

    /// A call starting at `i`: `fetch(` then a quoted URL, or `.open(` then a quoted
    /// method, a comma and a quoted URL. Returns the API, the URL and where the call's
    /// text ends.
    static func call(in bytes: [UInt8], at i: Int) -> (Initiator, String, Int)? {
        if matches(bytes, at: i, "fetch(") {
            guard let (url, end) = quoted(bytes, from: i + 6) else { return nil }
            return (.fetch, url, end)
        }
        if matches(bytes, at: i, ".open(") {
            guard let (method, afterMethod) = quoted(bytes, from: i + 6), method.utf8.count <= 10 else { return nil }
            var j = skipSpace(bytes, from: afterMethod)
            guard j < bytes.count, bytes[j] == UInt8(ascii: ",") else { return nil }
            j += 1
            guard let (url, end) = quoted(bytes, from: j) else { return nil }
            return (.xhr, url, end)
        }
        return nil
    }

    static func matches(_ bytes: [UInt8], at i: Int, _ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard i + count <= bytes.count else { return false }
        return word.withUTF8Buffer { w in (0..<count).allSatisfy { bytes[i + $0] == w[$0] } }
    }

    static func skipSpace(_ bytes: [UInt8], from i: Int) -> Int {
        var j = i
        while j < bytes.count, bytes[j] == 0x20 || bytes[j] == 0x09 || bytes[j] == 0x0A || bytes[j] == 0x0D { j += 1 }
        return j
    }

    /// A string literal in single, double or back quotes (without `${`) at `i`, after
    /// spaces; its text and the index after its closing quote.
    static func quoted(_ bytes: [UInt8], from i: Int) -> (String, Int)? {
        let start = skipSpace(bytes, from: i)
        guard start < bytes.count, let quote = [UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "`")].first(where: { $0 == bytes[start] }) else { return nil }
        var j = start + 1
        while j < bytes.count, bytes[j] != quote, bytes[j] != 0x0A, j - start <= 2048 {
            if bytes[j] == UInt8(ascii: "\\") || (bytes[j] == UInt8(ascii: "$") && quote == UInt8(ascii: "`")) { return nil }
            j += 1
        }
        guard j < bytes.count, bytes[j] == quote, j > start + 1 else { return nil }
        return (String(decoding: bytes[(start + 1)..<j], as: UTF8.self), j + 1)
    }
}
