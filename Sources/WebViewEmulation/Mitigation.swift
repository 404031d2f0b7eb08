import Foundation
import TrafficModel

/// A workaround an app layers on top of its strategy (BEHAVIOUR.md section 4): a small
/// value with one job, composed into a preset. It sees the page's request after the
/// strategy has planned it and changes what reaches the server, naming the rule of each
/// change.
public protocol Mitigation: Sendable {
    /// `body-bridge`, `body-in-header`...
    var kind: String { get }
    var options: [String: String] { get }
    /// Adjusts the outcome of a page-issued request (the first hop of a load).
    func adjust(_ outcome: inout Outcome, exchange: Exchange, plan: TransportPlan, context: EmulationContext)
}

extension Mitigation {
    public func adjust(_ outcome: inout Outcome, exchange: Exchange, plan: TransportPlan, context: EmulationContext) {}
}

// MARK: - body-bridge

/// The page stashes the body natively before sending; the interceptor puts it back
/// (seeds 000, 001, 004; rules B1-B9).
public struct BodyBridge: Mitigation {
    public enum Coverage: String, Sendable, Hashable { case xhr, fetch, formSubmit = "form.submit" }
    /// When the bridge is used: always, or (NetEase) only below iOS 11.3 or for Blob bodies.
    public enum When: String, Sendable, Hashable { case always, below113OrBlob = "below-11.3-or-blob" }

    public var covers: Set<Coverage>
    /// B2: the id parameter added to the URL.
    public var idParameter: String
    /// B2: whether the interceptor strips the id before the request leaves.
    public var stripsID: Bool
    public var when: When
    /// B4: whether iframes are served (a postMessage relay); otherwise their bodies are empty.
    public var relaysFrames: Bool
    /// B5: FormData is rebuilt through a dictionary (KKJSBridge).
    public var rebuildsFormData: Bool
    /// B6: URLSearchParams bodies are re-joined without percent-encoding (NetEase snippet).
    public var rejoinsURLSearchParams: Bool
    /// B9: a marker header (yanxuan `x-wkwebview-request-type`).
    public var markerHeader: String?

    public init(covers: Set<Coverage> = [.xhr, .fetch], idParameter: String, stripsID: Bool = false, when: When = .always, relaysFrames: Bool = false, rebuildsFormData: Bool = false, rejoinsURLSearchParams: Bool = false, markerHeader: String? = nil) {
        self.covers = covers
        self.idParameter = idParameter
        self.stripsID = stripsID
        self.when = when
        self.relaysFrames = relaysFrames
        self.rebuildsFormData = rebuildsFormData
        self.rejoinsURLSearchParams = rejoinsURLSearchParams
        self.markerHeader = markerHeader
    }

    public var kind: String { "body-bridge" }
    public var options: [String: String] {
        var o = ["covers": covers.map(\.rawValue).sorted().joined(separator: "+"), "id": idParameter, "strips-id": String(stripsID), "when": when.rawValue, "frames": relaysFrames ? "relayed" : "main only"]
        if rebuildsFormData { o["formdata"] = "rebuilt" }
        if rejoinsURLSearchParams { o["urlsearchparams"] = "re-joined" }
        if let markerHeader { o["header"] = markerHeader }
        return o
    }

    func covered(_ initiator: Initiator) -> Bool {
        switch initiator {
        case .xhr: return covers.contains(.xhr)
        case .fetch: return covers.contains(.fetch)
        case .ajax: return covers.contains(.xhr) && covers.contains(.fetch)
        default: return false
        }
    }

    public func adjust(_ outcome: inout Outcome, exchange: Exchange, plan: TransportPlan, context: EmulationContext) {
        let body = exchange.request.body
        switch exchange.initiator {
        case .beacon:
            // B8: sendBeacon is not covered; whatever the strategy did stands.
            if !outcome.bodyRules.isEmpty { outcome.bodyRules.append("B8") }
            return
        case .formSubmission:
            // B3: a user-clicked submit has no hook; a recorded submission counts as clicked.
            if !outcome.bodyRules.isEmpty { outcome.bodyRules.append("B3") }
            return
        default:
            // Only a request with a body goes through the bridge.
            guard covered(exchange.initiator), plan.intercepted, !body.isEmpty else { return }
        }
        if when == .below113OrBlob && context.profile.ios >= IOSVersion(11, 3) && !exchange.bodyKind.isBlobBacked(binaryAsBlob: context.scenario.binaryAsBlob) {
            return
        }
        // B4: the bridge's callback lives on the main window; an iframe's request gets no body.
        if exchange.frame.kind == .iframe && !relaysFrames {
            outcome.deliveredBody = .empty
            outcome.bodyRules = outcome.bodyRules + ["B4"]
            outcome.changes.append(Change(rule: "B4", what: "the bridge cannot answer an iframe: body empty"))
            return
        }
        // B2: the bridge tags the URL with its id; unless stripped, the server sees it.
        if !stripsID {
            outcome.deliveredURL = Self.adding(parameter: idParameter, value: String(exchange.sequence + 1), to: outcome.deliveredURL)
            outcome.urlRules.append("B2")
            outcome.changes.append(Change(rule: "B2", what: "\(idParameter) added to the URL"))
        }
        // B9: the marker header, and a preflight when cross-origin.
        if let markerHeader {
            outcome.addedHeaders.append(HeaderAddition(name: markerHeader, rule: "B9"))
            if context.isCrossOrigin(exchange.request.url) { outcome.preflightRules.append("B9") }
        }
        // B1: the body comes back from the native stash, re-encoded as the bridge does.
        var restored = body
        var rules: [RuleID] = ["B1"]
        switch exchange.bodyKind {
        case .formData where rebuildsFormData, .formDataWithFile where rebuildsFormData:
            restored = Self.rebuildMultipart(body, contentType: exchange.request.headers.first("Content-Type")) ?? body
            rules = ["B5"]
        case .urlEncoded where rejoinsURLSearchParams:
            restored = Self.rejoinWithoutEncoding(body)
            if restored != body { rules = ["B6"] }
        case .binary, .binaryArrayBuffer, .formDataWithFile:
            rules = ["B1", "B7"]  // B7: base64 over the bridge, decoded exactly
        default:
            break
        }
        outcome.deliveredBody = restored == body ? exchange.request.bodyFingerprint : BodyFingerprint(restored)
        outcome.bodyRules = restored == body ? [] : rules
        outcome.changes.append(Change(rule: rules.last!, what: restored == body ? "body restored from the native stash" : "body restored but re-encoded"))
    }

    static func adding(parameter: String, value: String, to url: String) -> String {
        let fragment = url.firstIndex(of: "#").map { String(url[$0...]) } ?? ""
        let base = fragment.isEmpty ? url : String(url[url.startIndex..<url.firstIndex(of: "#")!])
        return base + (base.contains("?") ? "&" : "?") + "\(parameter)=\(value)" + fragment
    }

    /// B5: parts re-emitted with a new boundary, duplicate field names collapsed (last wins,
    /// as through a dictionary), in dictionary (sorted) order.
    static func rebuildMultipart(_ body: Data, contentType: String?) -> Data? {
        guard let type = contentType, let range = type.range(of: "boundary=") else { return nil }
        let boundary = type[range.upperBound...].prefix { $0 != ";" }.trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        let text = String(decoding: body, as: UTF8.self)
        var parts: [String: String] = [:]
        for chunk in text.components(separatedBy: "--" + boundary) {
            guard let nameRange = chunk.range(of: "name=\""), let end = chunk[nameRange.upperBound...].firstIndex(of: "\"") else { continue }
            parts[String(chunk[nameRange.upperBound..<end])] = chunk
        }
        let newBoundary = "----KKJSBridgeFormBoundary"
        var out = ""
        for key in parts.keys.sorted() { out += "--" + newBoundary + parts[key]! }
        out += "--" + newBoundary + "--\r\n"
        return Data(out.utf8)
    }

    /// B6: the NetEase snippet's `key + '=' + value` joined by '&' over decoded pairs.
    static func rejoinWithoutEncoding(_ body: Data) -> Data {
        let text = String(decoding: body, as: UTF8.self)
        let pairs = text.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) -> String { (String(s).replacingOccurrences(of: "+", with: " ")).removingPercentEncoding ?? String(s) }
            return decode(kv[0]) + "=" + (kv.count > 1 ? decode(kv[1]) : "")
        }
        return Data(pairs.joined(separator: "&").utf8)
    }
}

// MARK: - body-in-header

/// The page moves the body into a request header; the interceptor rebuilds it
/// (seed 003 "bodyParam"; rules H1-H5).
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

    public var kind: String { "body-in-header" }
    public var options: [String: String] { ["header": headerName, "binary": base64Binary ? "base64" : "lost", "limit": String(sizeLimit)] }

    public func adjust(_ outcome: inout Outcome, exchange: Exchange, plan: TransportPlan, context: EmulationContext) {
        let body = exchange.request.body
        guard !body.isEmpty, plan.intercepted, [.xhr, .fetch, .ajax].contains(exchange.initiator) else { return }
        // H4: the custom header makes a cross-origin request non-simple.
        if context.isCrossOrigin(exchange.request.url) {
            outcome.preflightRules.append("H4")
            outcome.changes.append(Change(rule: "H4", what: "\(headerName) header forces a CORS preflight"))
        }
        if body.count > sizeLimit { outcome.tooLargeRules.append("H5") }
        let binary = exchange.bodyKind.isBinary
        if binary && !base64Binary {
            // H2: bytes cannot travel in a header value.
            outcome.deliveredBody = .empty
            outcome.bodyRules = ["H2"]
            outcome.changes.append(Change(rule: "H2", what: "binary body cannot travel in a header"))
            return
        }
        // In UTF-8, lead bytes from 0xC4 start characters above U+00FF.
        if !binary, !exchange.request.bodyFitsHeaderValue {
            // H3: characters above U+00FF or CR/LF make the header invalid: the request fails.
            outcome.deliveredBody = .empty
            outcome.bodyRules = ["H3"]
            outcome.bodyReason = "the body holds characters a header value cannot (above U+00FF, or CR/LF), so the request fails"
            outcome.changes.append(Change(rule: "H3", what: "header value invalid"))
            return
        }
        // H1: restored by the interceptor.
        outcome.deliveredBody = exchange.request.bodyFingerprint
        outcome.bodyRules = []
        outcome.changes.append(Change(rule: "H1", what: "body restored from the \(headerName) header"))
    }
}
