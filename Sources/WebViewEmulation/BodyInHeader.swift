import Foundation
import TrafficModel

/// The page moves the body into a request header; the interceptor rebuilds it
/// (the notes headed 记录一下 WKWebView 相关使用, untitled and undated "bodyParam"; rules H1-H5).
public struct BodyInHeader: Mitigation {
    public var headerName: String
    /// H2: whether binary bodies are base64-encoded into the header.
    public var base64Binary: Bool
    /// H5: bodies over this size are flagged (folklore: "2 MB fine, 10 MB times out").
    public var sizeLimit: Int

    public init(headerName: String = "bodyParam", base64Binary: Bool = false, sizeLimit: Int = 2 << 20) {
        self.headerName = headerName
        self.base64Binary = base64Binary
        self.sizeLimit = sizeLimit
    }

    public var options: [String: String] { ["header": headerName, "binary": base64Binary ? "base64" : "lost", "limit": String(sizeLimit)] }

    public var citedRules: [RuleID] { ["H1", "H2", "H3", "H4", "H5"] }

    public var hooks: MitigationHooks {
        MitigationHooks(requestIssued: { outcome, request in self.move(&outcome, request) })
    }

    /// The body travels in the header; the interceptor rebuilds it when it can.
    func move(_ outcome: inout Outcome, _ request: IssuedRequest) {
        let exchange = request.exchange
        let length = exchange.request.bodyFingerprint.length
        guard length > 0, request.plan.intercepted, [.xhr, .fetch, .ajax].contains(exchange.initiator) else { return }
        // H4: the custom header makes a cross-origin request non-simple.
        if request.context.crossOrigin {
            outcome[.preflightAdded].append("H4")
            outcome.note(Change(rule: "H4", note: .headerForcesPreflight(headerName)))
        }
        if length > sizeLimit { outcome[.tooLargeForHeader].append("H5") }
        let binary = exchange.bodyKind.isBinary
        if binary && !base64Binary {
            // H2: bytes cannot travel in a header value.
            outcome.deliveredBody = .empty
            outcome[.bodyChanged] = ["H2"]
            outcome.note(Change(rule: "H2", what: "binary body cannot travel in a header"))
            return
        }
        // In UTF-8, lead bytes from 0xC4 start characters above U+00FF.
        if !binary, !exchange.request.bodyFitsHeaderValue {
            // H3: characters above U+00FF or CR/LF make the header invalid: the request fails.
            outcome.deliveredBody = .empty
            outcome[.bodyChanged] = ["H3"]
            outcome.bodyReason = "the body holds characters a header value cannot (above U+00FF, or CR/LF), so the request fails"
            outcome.note(Change(rule: "H3", what: "header value invalid"))
            return
        }
        // H1: restored by the interceptor.
        outcome.deliveredBody = exchange.request.bodyFingerprint
        outcome[.bodyChanged] = []
        outcome.note(Change(rule: "H1", note: .bodyRestoredFromHeader(headerName)))
    }
}

extension BodyInHeader: PresetPart {
    public static var kindName: String { "body-in-header" }
    /// H2: a binary body travels in the header once base64-encoded.
    public static var choices: [OptionChoice] { [OptionChoice("base64Binary", default: "false", counters: ["true"], rules: ["H2"])] }

    public struct Options: PartOptions {
        public var header: String?
        public var base64Binary: Bool?
        public var sizeLimit: Double?
        enum CodingKeys: String, CodingKey, CaseIterable { case header, base64Binary, sizeLimit }
        public static let keys = CodingKeys.allCases.map(\.stringValue)
    }

    public init(options o: Options) {
        self.init(headerName: o.header ?? "bodyParam", base64Binary: o.base64Binary ?? false, sizeLimit: Int(o.sizeLimit ?? Double(2 << 20)))
    }
}
