import Foundation
import TrafficModel

/// Writes a `Recording` as HAR 1.2 that Chrome and mitmproxy read back.
///
/// Response bodies that are not UTF-8, or hold control bytes no text has, are written
/// base64 (`content.encoding`); request
/// bodies that are not UTF-8 are written base64 with `"_encoding": "base64"` on
/// `postData`, which `HARImporter` reads back, so a round trip keeps every byte.
public struct HARExporter: Sendable {
    /// Whether a body holds control bytes no text has (NUL and the like; tab, line ends
    /// and form feed are text's): such a body is written base64 even when it is valid
    /// UTF-8. A megabyte of NUL bytes was six as JSON text, one and a third as base64.
    static func hasBinaryControls(_ bytes: some Sequence<UInt8>) -> Bool {
        bytes.contains { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0C && $0 != 0x0D }
    }

    public var toolVersion: String

    public init(toolVersion: String) {
        self.toolVersion = toolVersion
    }

    public func data(for recording: Recording) throws -> Data {
        let log: [String: Any] = [
            "version": "1.2",
            "creator": ["name": "h5replay", "version": toolVersion],
            "pages": [],
            "entries": recording.exchanges.map(entry),
        ]
        return try JSONSerialization.data(withJSONObject: ["log": log], options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    }

    /// One entry as a single line of JSON (no newline inside), for a journal written as
    /// exchanges complete. `failure` (why no response came) and `incomplete` (why a response
    /// stopped short: the upstream closed mid-body) go in `response._error`, where Chrome
    /// writes a failed or cut load's net error. `receivedBodyBytes`, when the body kept is
    /// only the first part of a longer one (over `--max-body-bytes`), is the whole length,
    /// written as `content._receivedBytes` with a `comment` saying where the body was cut.
    public func entryLine(_ e: Exchange, failure: String? = nil, incomplete: String? = nil, receivedBodyBytes: Int? = nil) throws -> Data {
        try JSONSerialization.data(withJSONObject: notedEntry(e, failure: failure, incomplete: incomplete, receivedBodyBytes: receivedBodyBytes), options: [.sortedKeys, .withoutEscapingSlashes])
    }

    /// `entryLine`'s object, the response body's text in it unless `bodyText` is false.
    func notedEntry(_ e: Exchange, failure: String?, incomplete: String?, receivedBodyBytes: Int?, bodyText: Bool = true) -> [String: Any] {
        var object = entry(e, bodyText: bodyText)
        if var response = object["response"] as? [String: Any] {
            if let error = failure ?? incomplete { response["_error"] = error }
            if let received = receivedBodyBytes, var content = response["content"] as? [String: Any] {
                content["_receivedBytes"] = received
                content["comment"] = "h5replay kept the first \(e.response.body.count) of \(received) body bytes received (--max-body-bytes)"
                response["content"] = content
            }
            object["response"] = response
        }
        return object
    }

    /// Chrome's `_webSocketMessages`: each message's direction, time in seconds since 1970,
    /// opcode, and data (text as it is; binary as base64, as Chrome writes it).
    static func webSocketMessages(_ messages: [WebSocketMessage]) -> [[String: Any]] {
        messages.map { message in
            let text = message.opcode == 1 ? String(validatingUTF8: message.data) : nil
            return ["type": message.direction.rawValue, "time": message.time, "opcode": message.opcode,
                    "data": text ?? Base64.string(message.data)]
        }
    }

    private func entry(_ e: Exchange) -> [String: Any] { entry(e, bodyText: true) }

    /// `bodyText` false leaves the response body's `text` out (`StreamedBody` writes it).
    func entry(_ e: Exchange, bodyText: Bool) -> [String: Any] {
        var request: [String: Any] = [
            "method": e.request.method,
            "url": e.request.url,
            "httpVersion": e.request.httpVersion,
            "headers": e.request.headers.map { ["name": $0.name, "value": $0.value] },
            "queryString": queryString(e.request.target?.query),
            "cookies": [],
            "headersSize": -1,
            "bodySize": e.request.body.count,
        ]
        if !e.request.body.isEmpty || e.request.method == "POST" || e.request.method == "PUT" || e.request.method == "PATCH" {
            var postData: [String: Any] = ["mimeType": e.request.headers.first("Content-Type") ?? ""]
            if let text = String(validatingUTF8: e.request.body) {
                postData["text"] = text
            } else {
                postData["text"] = Base64.string(e.request.body)
                postData["_encoding"] = "base64"
            }
            request["postData"] = postData
        }
        var content: [String: Any] = [
            "size": e.response.body.count,
            "mimeType": e.response.headers.first("Content-Type") ?? "",
        ]
        if !e.response.bodyMissing, bodyText {
            if !Self.hasBinaryControls(e.response.body), let text = String(validatingUTF8: e.response.body) {
                content["text"] = text
            } else {
                content["text"] = Base64.string(e.response.body)
                content["encoding"] = "base64"
            }
        }
        let response: [String: Any] = [
            "status": e.response.status,
            "statusText": e.response.statusText,
            "httpVersion": e.response.httpVersion,
            "headers": e.response.headers.map { ["name": $0.name, "value": $0.value] },
            "cookies": [],
            "content": content,
            "redirectURL": e.response.location ?? "",
            "headersSize": -1,
            "bodySize": e.response.encodedLength ?? -1,
        ]
        let millis = (e.duration * 1000 * 1000).rounded() / 1000
        var entry: [String: Any] = [
            "startedDateTime": ISODate.format(e.startedAt),
            "time": millis,
            "request": request,
            "response": response,
            "cache": [:] as [String: Any],
            "timings": Self.timings(e, millis: millis),
            "_resourceType": e.resourceType ?? resourceType(for: e.initiator),
        ]
        // E3 in Chrome's own words; the others under h5replay's key (E1 and E2 also
        // follow from the status and the headers when read back).
        switch e.evidenceGap {
        case .fromCache?: entry["_fromCache"] = "disk"
        case let gap?: entry["_evidenceGap"] = gap.rawValue
        case nil: break
        }
        if let connection = e.connectionID { entry["connection"] = connection }
        if let address = e.serverAddress { entry["serverIPAddress"] = address }
        if !e.webSocketMessages.isEmpty { entry["_webSocketMessages"] = Self.webSocketMessages(e.webSocketMessages) }
        return entry
    }

    private func queryString(_ query: String?) -> [[String: String]] {
        guard let query, !query.isEmpty else { return [] }
        return query.split(separator: "&", omittingEmptySubsequences: false).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
            return ["name": name, "value": value]
        }
    }

    /// Chrome's resource type names for an inferred initiator.
    /// Waiting until the response's head, then receiving the body; all waiting when the
    /// recording does not say when the head came (read back, the head at the end).
    static func timings(_ e: Exchange, millis: Double) -> [String: Any] {
        let wait = e.responseStart.map { min((max($0, 0) * 1000 * 1000).rounded() / 1000, millis) } ?? millis
        return ["send": 0, "wait": wait, "receive": ((millis - wait) * 1000).rounded() / 1000]
    }

    private func resourceType(for initiator: Initiator) -> String {
        switch initiator {
        case .navigation, .formSubmission: return "document"
        case .xhr: return "xhr"
        case .fetch: return "fetch"
        case .beacon: return "ping"
        case .script: return "script"
        case .stylesheet: return "stylesheet"
        case .image: return "image"
        case .font: return "font"
        case .media: return "media"
        case .prefetch: return "prefetch"
        case .websocket: return "websocket"
        case .eventSource: return "eventsource"
        case .ajax, .other, .native: return "other"
        }
    }
}
