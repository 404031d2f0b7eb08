import CookieJar
import Foundation
import ReportStore
import TrafficModel
import WebViewEmulation

/// `h5replay show`: a recording's exchanges, where each cookie came from, and the import
/// diagnostics, as a table or as JSON.
///
/// The JSON contract (extend it, never break it): `{"recording": {...}, "exchanges":
/// [{sequence, startedAt, initiator, frame, method, url, status, bodyKind,
/// requestBodyLength, requestBodySHA256, responseBodyLength, responseBodySHA256,
/// responseEncodedLength, redirect, cookies: [{name, provenance, setBy, setByHop, value}],
/// inferred: [{name, kind, domain, path, windowStart}], and on a WebSocket handshake
/// webSocketMessages: [{direction, time, offset, opcode, length, sha256, preview}]}],
/// "diagnostics": [...],
/// "framework": {name, version, evidence, presets} or null}`: the framework the recording
/// was made inside, when it shows one; `version` only when it shows that too.
/// Response figures are for the body after content decoding.
public struct RecordingReport: Sendable {
    public var redactor: Redactor

    public init(showSecrets: Bool, secrets: SecretNames = .default) {
        self.redactor = Redactor(showSecrets: showSecrets, names: secrets)
    }

    /// The recorded value of each cookie a request carries, in header order.
    private func values(_ e: Exchange) -> [String] {
        CookieProvenance.requestCookies(e.request.headers).map(\.value)
    }

    private func secret(_ value: String) -> String {
        redactor.fields(["value": value])["value"]!
    }

    /// `headers`: each exchange's recorded headers and its Set-Cookies' verdicts too.
    public func json(_ detail: ReportStore.RecordingDetail, headers: Bool = false) throws -> String {
        let r = detail.recording
        let recording: [String: Any] = [
            "name": r.name, "sourceFormat": r.sourceFormat, "sourcePath": r.sourcePath ?? NSNull(),
            "sourceSHA256": r.sourceSHA256 ?? NSNull(), "importedAt": detail.importedAt, "exchangeCount": r.exchanges.count,
        ]
        var exchanges: [[String: Any]] = []
        for e in r.exchanges {
            let values = values(e)
            let cookies: [[String: Any]] = detail.cookies[e.sequence].enumerated().map { position, c in
                [
                    "name": c.name, "provenance": c.provenance, "setBy": c.setBy ?? NSNull(), "setByHop": c.setByHop ?? NSNull(),
                    "value": position < values.count ? secret(values[position]) : NSNull(),
                ]
            }
            let inferred: [[String: Any]] = detail.inferred[e.sequence].map {
                ["name": $0.name, "kind": $0.kind, "domain": $0.domain, "path": $0.path, "windowStart": $0.windowStart.map(Self.iso) ?? NSNull()]
            }
            var redirect: Any = NSNull()
            if let link = e.redirect {
                redirect = ["chainStart": link.chainStart, "hop": link.hop, "next": link.next ?? NSNull()] as [String: Any]
            }
            exchanges.append([
                "sequence": e.sequence, "startedAt": Self.iso(e.startedAt), "duration": e.duration,
                "initiator": e.initiator.rawValue, "frame": e.frame.label, "method": e.request.method, "url": redactor.url(e.request.url),
                "status": e.response.status, "bodyKind": e.bodyKind.rawValue,
                "requestBodyLength": e.request.body.count, "requestBodySHA256": e.request.bodyFingerprint.sha256,
                "responseBodyLength": e.response.body.count, "responseBodySHA256": e.response.body.sha256Hex,
                "responseEncodedLength": e.response.encodedLength ?? NSNull(), "responseBodyMissing": e.response.bodyMissing,
                "redirect": redirect, "cookies": cookies, "inferred": inferred,
                "cookieEvidence": e.evidenceGap.map { ["taken": false, "rule": $0.rule, "reason": $0.reason] as [String: Any] } ?? ["taken": true],
            ].merging(headers ? ["headers": headerObject(e)] : [:]) { a, _ in a }
             .merging(messageObjects(e)) { a, _ in a })
        }
        let diagnostics: [[String: Any]] = r.diagnostics.map {
            ["severity": $0.severity.rawValue, "code": $0.code, "sequence": $0.sequence ?? NSNull(), "message": redactor.text($0.message)]
        }
        let framework: Any = RecordedFramework.detect(in: r).map {
            ["name": $0.name, "version": $0.version ?? NSNull(), "evidence": $0.evidence.map(redactor.text), "presets": $0.presets] as [String: Any]
        } ?? NSNull()
        let object: [String: Any] = ["recording": recording, "exchanges": exchanges, "diagnostics": diagnostics, "framework": framework]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    /// `webSocketMessages` for a handshake that has messages; nothing for another exchange.
    private func messageObjects(_ e: Exchange) -> [String: Any] {
        guard !e.webSocketMessages.isEmpty else { return [:] }
        let view = WebSocketMessageView(redactor: redactor)
        return ["webSocketMessages": e.webSocketMessages.map { view.object($0, start: e.startedAt) }]
    }

    /// The JSON of `show --headers` for one exchange.
    private func headerObject(_ e: Exchange) -> [String: Any] {
        let view = RecordedHeaders(redactor: redactor)
        return [
            "request": view.request(e).map { [$0.name, $0.value] },
            "response": view.response(e).map { [$0.name, $0.value] },
            "setCookies": view.setCookies(e).map { ["header": $0.header, "verdict": $0.verdict, "reason": $0.reason ?? NSNull()] as [String: Any] },
        ]
    }

    /// `headers`: each exchange's recorded headers under it, each Set-Cookie with what a
    /// jar does with it.
    public func table(_ detail: ReportStore.RecordingDetail, headers: Bool = false) -> String {
        let r = detail.recording
        var out = "\(r.name): \(r.exchanges.count) exchange(s) from \(r.sourcePath ?? r.sourceFormat), imported \(detail.importedAt)\n"
        if let framework = RecordedFramework.detect(in: r) { out += "Recorded inside \(redactor.text(framework.sentence))\n" }
        out += "\n"
        let start = r.exchanges.first?.startedAt ?? 0
        for e in r.exchanges {
            let hop = e.redirect.map { $0.hop > 0 ? " hop \($0.hop) of #\($0.chainStart)" : ($0.next != nil ? " redirects to #\($0.next!)" : "") } ?? ""
            let sizes = "\(e.request.body.count)/\(e.response.body.count) B"
            out += String(format: "#%-3d %+8.3fs  ", e.sequence, e.startedAt - start)
            out += "\(e.initiator.rawValue.padding(toLength: 15, withPad: " ", startingAt: 0)) \(e.frame.label.padding(toLength: 9, withPad: " ", startingAt: 0)) "
            out += "\(e.request.method) \(redactor.url(e.request.url))  \(e.response.status)  \(e.bodyKind.rawValue) \(sizes)\(hop)\n"
            let values = values(e)
            if headers {
                let view = RecordedHeaders(redactor: redactor)
                for (name, value) in view.request(e) { out += "       > \(name): \(value)\n" }
                for (name, value) in view.response(e) where !name.caseInsensitiveEquals("Set-Cookie") { out += "       < \(name): \(value)\n" }
                for c in view.setCookies(e) { out += "       < Set-Cookie: \(c.header)  [\(c.verdict)\(c.reason.map { ": \($0)" } ?? "")]\n" }
            }
            if let gap = e.evidenceGap {
                out += "       not evidence of the page's cookies (\(gap.rule)): \(gap.reason)\n"
            }
            for (position, c) in detail.cookies[e.sequence].enumerated() {
                var origin = c.provenance
                if let by = c.setBy {
                    origin += c.provenance == "server-set" ? " by #\(by)" : " at #\(by)"
                    if let hop = c.setByHop, hop > 0 { origin += " (redirect hop \(hop))" }
                }
                let value = redactor.showSecrets && position < values.count ? "=\(values[position])" : ""
                out += "       cookie \(c.name)\(value): \(origin)\n"
            }
            for i in detail.inferred[e.sequence] {
                var line = "       inferred: \(i.name) \(i.kind) (\(i.domain)\(i.path))"
                if let w = i.windowStart { line += String(format: ", written within %.3f s before this request", e.startedAt - w) }
                out += line + "\n"
            }
            let messages = WebSocketMessageView(redactor: redactor)
            for m in e.webSocketMessages { out += messages.line(m, start: e.startedAt) + "\n" }
        }
        if !r.diagnostics.isEmpty {
            out += "\nDiagnostics:\n"
            for d in r.diagnostics { out += "  [\(d.severity.rawValue)] \(d.sequence.map { "#\($0) " } ?? "")\(d.code): \(redactor.text(d.message))\n" }
        }
        return out
    }

    static func iso(_ t: Double) -> String {
        ReportStore.timestamp(Date(timeIntervalSince1970: t))
    }
}
