import Foundation
import TrafficModel

/// The page stashes the body natively before sending; the interceptor puts it back
/// (rules B1-B9).
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

    public var options: [String: String] {
        var o = ["covers": covers.map(\.rawValue).sorted().joined(separator: "+"), "id": idParameter, "strips-id": String(stripsID), "when": when.rawValue, "frames": relaysFrames ? "relayed" : "main only"]
        if rebuildsFormData { o["formdata"] = "rebuilt" }
        if rejoinsURLSearchParams { o["urlsearchparams"] = "re-joined" }
        if let markerHeader { o["header"] = markerHeader }
        return o
    }

    /// Which page APIs the bridge patches, as two flags: a hook asks for every request the
    /// page issues, and the set's hashing cost more than the rest of a request the bridge
    /// does not touch.
    struct Covered {
        var xhr: Bool
        var fetch: Bool

        func callAsFunction(_ initiator: Initiator) -> Bool {
            switch initiator {
            case .xhr: return xhr
            case .fetch: return fetch
            case .ajax: return xhr && fetch
            default: return false
            }
        }
    }

    var covered: Covered { Covered(xhr: covers.contains(.xhr), fetch: covers.contains(.fetch)) }

    public var citedRules: [RuleID] { ["B1", "B2", "B3", "B4", "B5", "B6", "B7", "B8", "B9"] }

    public var hooks: MitigationHooks {
        let covered = covered
        return MitigationHooks(requestIssued: { outcome, request in self.restore(&outcome, request, covered: covered) })
    }

    /// The page stashed the body; the interceptor puts it back, as this bridge does.
    func restore(_ outcome: inout Outcome, _ request: IssuedRequest, covered: Covered) {
        // Read in place: copies of the exchange, plan and context were most of the cost of
        // a request the bridge leaves alone.
        let exchange = request.exchange
        let recorded = exchange.request.bodyFingerprint
        switch exchange.initiator {
        case .beacon:
            // B8: sendBeacon is not covered; whatever the strategy did stands.
            if outcome.has(.bodyChanged) { outcome[.bodyChanged].append("B8") }
            return
        case .formSubmission where !(request.context.submittedByScript && covers.contains(.formSubmit)):
            // B3: a user-clicked submit has no hook; a recorded submission counts as
            // clicked unless its page's script submitted it (`form.submit()`, hooked).
            if outcome.has(.bodyChanged) { outcome[.bodyChanged].append("B3") }
            return
        case .formSubmission:
            guard request.plan.intercepted, !recorded.isEmpty else { return }
        default:
            // Only a request with a body goes through the bridge.
            guard covered(exchange.initiator), request.plan.intercepted, !recorded.isEmpty else { return }
        }
        if when == .below113OrBlob && request.context.profile.ios >= IOSVersion(11, 3) && !exchange.bodyKind.isBlobBacked(binaryAsBlob: request.context.binaryAsBlob) {
            return
        }
        // B4: the bridge's callback lives on the main window; an iframe's request gets no body.
        if exchange.frame.kind == .iframe && !relaysFrames {
            outcome.deliveredBody = .empty
            outcome[.bodyChanged] = outcome[.bodyChanged] + ["B4"]
            outcome.note(Change(rule: "B4", what: "the bridge cannot answer an iframe: body empty"))
            return
        }
        // B2: the bridge tags the URL with its id; unless stripped, the server sees it.
        if !stripsID {
            outcome.deliveredURL = Self.adding(parameter: idParameter, value: String(exchange.sequence + 1), to: outcome.deliveredURL)
            outcome[.urlChanged].append("B2")
            outcome.note(Change(rule: "B2", note: .idParameterAdded(idParameter)))
        }
        // B9: the marker header, and a preflight when cross-origin.
        if let markerHeader {
            outcome.addedHeaders.append(HeaderAddition(name: markerHeader, rule: "B9"))
            if request.context.crossOrigin { outcome[.preflightAdded].append("B9") }
        }
        // B1: the body comes back from the native stash, re-encoded as the bridge does; the
        // re-encodings are computed once per recording (ExchangeFacts).
        var restored = recorded
        var rules: [RuleID] = ["B1"]
        switch exchange.bodyKind {
        case .formData where rebuildsFormData, .formDataWithFile where rebuildsFormData:
            restored = request.facts.formDataRebuilt ?? recorded
            rules = ["B5"]
        case .urlEncoded where rejoinsURLSearchParams:
            restored = request.facts.urlSearchParamsRejoined ?? recorded
            if restored != recorded { rules = ["B6"] }
        case .binary, .binaryArrayBuffer, .formDataWithFile:
            rules = ["B1", "B7"]  // B7: base64 over the bridge, decoded exactly
        default:
            break
        }
        outcome.deliveredBody = restored
        outcome[.bodyChanged] = restored == recorded ? [] : rules
        outcome.note(Change(rule: rules.last!, what: restored == recorded ? "body restored from the native stash" : "body restored but re-encoded"))
    }

    static func adding(parameter: String, value: String, to url: String) -> String {
        var (url, parameter, value) = (url, parameter, value)
        // On the bytes, written once into the new string: a chain of `+` over substrings
        // went through generic collection code, thousands of instructions a URL.
        return url.withUTF8 { u in
            parameter.withUTF8 { p in
                value.withUTF8 { v in
                    let hash = u.firstIndex(of: UInt8(ascii: "#")) ?? u.count
                    let separator = UnsafeBufferPointer(rebasing: u[..<hash]).contains(UInt8(ascii: "?")) ? UInt8(ascii: "&") : UInt8(ascii: "?")
                    return String(unsafeUninitializedCapacity: u.count + p.count + v.count + 2) { out in
                        var n = 0
                        func put(_ bytes: UnsafeBufferPointer<UInt8>) {
                            // A copy of the run, not a store per byte: the capacity holds every piece.
                            guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
                            (out.baseAddress! + n).initialize(from: base, count: bytes.count)
                            n += bytes.count
                        }
                        put(UnsafeBufferPointer(rebasing: u[..<hash]))
                        out[n] = separator
                        n += 1
                        put(p)
                        out[n] = UInt8(ascii: "=")
                        n += 1
                        put(v)
                        put(UnsafeBufferPointer(rebasing: u[hash...]))
                        return n
                    }
                }
            }
        }
    }

    /// B5: parts re-emitted with a new boundary, duplicate field names collapsed (last wins,
    /// as through a dictionary), in dictionary (sorted) order.
    ///
    /// The body is read as the bridge's script reads it, as text (bytes that are not UTF-8
    /// become U+FFFD), and cut at each `--boundary` and searched for `name="` by its bytes,
    /// as the script's string functions match code units. Each part's bytes are copied
    /// once, into the new body.
    static func rebuildMultipart(_ body: Data, contentType: String?) -> Data? {
        guard let type = contentType, let range = type.range(of: "boundary=") else { return nil }
        let boundary = type[range.upperBound...].prefix { $0 != ";" }.trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        var text = String(decoding: body, as: UTF8.self)
        let separator = Array(("--" + boundary).utf8)
        let nameMark: StaticString = "name=\""
        let newBoundary = Array("------KKJSBridgeFormBoundary".utf8)
        return text.withUTF8 { bytes in
            separator.withUnsafeBufferPointer { separator in
                let mark = UnsafeBufferPointer(start: nameMark.utf8Start, count: nameMark.utf8CodeUnitCount)
                // Each field's last part, by name.
                var parts: [String: Range<Int>] = [:]
                var start = 0
                while true {
                    let cut = bytes.firstIndex(ofBytes: separator, in: start..<bytes.count) ?? bytes.count
                    if let at = bytes.firstIndex(ofBytes: mark, in: start..<cut),
                        let close = bytes[(at + mark.count)..<cut].firstIndex(of: UInt8(ascii: "\""))
                    {
                        parts[String(decoding: UnsafeBufferPointer(rebasing: bytes[(at + mark.count)..<close]), as: UTF8.self)] = start..<cut
                    }
                    guard cut < bytes.count else { break }
                    start = cut + separator.count
                }
                var out = Data(capacity: bytes.count + newBoundary.count * (parts.count + 1) + 4)
                for name in parts.keys.sorted() {
                    out.append(contentsOf: newBoundary)
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[parts[name]!]))
                }
                out.append(contentsOf: newBoundary)
                out.append(contentsOf: "--\r\n".utf8)
                return out
            }
        }
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

extension BodyBridge: PresetPart {
    public static var kindName: String { "body-bridge" }
    /// What each option counters: B3 a submission the bridge does not cover, B2 its id on
    /// the URL, B4 an iframe's request, B5 and B6 a body re-encoded, B9 the marker header.
    public static var choices: [OptionChoice] {
        [
            OptionChoice("covers", default: #"["xhr", "fetch"]"#, counters: [#"["xhr", "fetch", "form.submit"]"#], rules: ["B3"]),
            OptionChoice("stripsId", default: "false", counters: ["true"], rules: ["B2"]),
            OptionChoice("relaysFrames", default: "false", counters: ["true"], rules: ["B4"]),
            OptionChoice("rebuildsFormData", default: "false", counters: ["false"], rules: ["B5"]),
            OptionChoice("rejoinsURLSearchParams", default: "false", counters: ["false"], rules: ["B6"]),
            OptionChoice("markerHeader", default: "null", counters: ["null"], rules: ["B9"]),
        ]
    }

    public struct Options: PartOptions {
        public var covers: [String]?
        public var idParameter: String?
        public var stripsId: Bool?
        public var when: String?
        public var relaysFrames: Bool?
        public var rebuildsFormData: Bool?
        public var rejoinsURLSearchParams: Bool?
        public var markerHeader: String?
        enum CodingKeys: String, CodingKey, CaseIterable { case covers, idParameter, stripsId, when, relaysFrames, rebuildsFormData, rejoinsURLSearchParams, markerHeader }
        public static let keys = CodingKeys.allCases.map(\.stringValue)
    }

    public init(options o: Options) throws {
        var covers: Set<Coverage> = [.xhr, .fetch]
        if let names = o.covers {
            covers = []
            for name in names {
                guard let c = Coverage(rawValue: name) else { throw ConfigProblem(at: "covers", "\"\(name)\" is not one of xhr, fetch, form.submit") }
                covers.insert(c)
            }
        }
        guard let when = When(rawValue: o.when ?? "always") else { throw ConfigProblem(at: "when", "always or below-11.3-or-blob") }
        self.init(covers: covers, idParameter: o.idParameter ?? "requestId", stripsID: o.stripsId ?? false, when: when, relaysFrames: o.relaysFrames ?? false,
            rebuildsFormData: o.rebuildsFormData ?? false, rejoinsURLSearchParams: o.rejoinsURLSearchParams ?? false, markerHeader: o.markerHeader)
    }
}
