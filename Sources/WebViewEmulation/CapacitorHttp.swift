import Foundation
import TrafficModel

/// Capacitor's CapacitorHttp plugin (`plugins.CapacitorHttp.enabled`): `fetch` and
/// `XMLHttpRequest` patched in `core/native-bridge.ts` (CAPH1-CAPH5).
///
/// GET, HEAD, OPTIONS and TRACE to an absolute http(s) URL go through the app's scheme
/// handler and `URLSession.shared`; every other method goes over the JS bridge to
/// native, its body converted on the way. What is not patched (navigations, subresources,
/// `sendBeacon`, requests to the app origin, and an iframe's requests, since the bridge
/// is injected into the main frame only: CAP2) stays with WebKit.
public struct CapacitorHttpStrategy: InterceptionStrategy {
    /// CAPH1 and CAPH3 as the profile asks them, once per request.
    static let caph1 = Profile.Bounded("CAPH1"), caph3 = Profile.Bounded("CAPH3")
    public init() {}

    /// NativeJar, which the requests it sends read, learns WebJar's cookies through the
    /// Capacitor shell's cookie observer (`AppShell.capacitor`, CAP3).
    public var jarLink: JarLink { .system }
    public var options: [String: String] { [:] }
    public var citedRules: [RuleID] { ["CAP2", "CAP3", "CAPH1", "CAPH2", "CAPH3", "CAPH4", "CAPH5", "CAPC2"] + NativeStrategy().citedRules }

    /// CAP3, on each request sent natively: what it reads of WebJar's cookies.
    static let observerNote = Change(rule: "CAP3", what: "sent with NativeJar, which learns WebJar's cookies only by the system's synchronisation: Capacitor's cookie observer is released at once and never fires")

    static let proxiedMethods = ["GET", "HEAD", "OPTIONS", "TRACE"]

    /// CAPH4: what a Blob or ArrayBuffer sent as JSON becomes on the bridge, `{}`.
    static let emptyObject = BodyFingerprint(Data("{}".utf8))

    public func plan(for exchange: Exchange, in context: EmulationContext) -> TransportPlan {
        guard exchange.initiator == .xhr || exchange.initiator == .fetch || exchange.initiator == .ajax,
            let target = exchange.request.target, target.scheme == "http" || target.scheme == "https",
            context.appPage?.serves(target) != true
        else {
            return NativeStrategy().plan(for: exchange, in: context)
        }
        if exchange.frame.kind == .iframe {
            // CAP2: native-bridge.js is a main-frame user script; an iframe's fetch and XHR are WebKit's.
            var plan = NativeStrategy().plan(for: exchange, in: context)
            plan.notes.append(Change(rule: "CAP2", what: "sent from an iframe, where Capacitor's bridge is not injected: WebKit's own fetch and XHR"))
            return plan
        }
        let method = exchange.request.method
        if context.profile.holds(Self.caph1), Self.proxiedMethods.contains(where: { method.caseInsensitiveEquals($0) }) {
            // CAPH1: from 5.7.1 rewritten to the app origin's interceptor path and fetched by the handler's URLSession.
            var plan = TransportPlan(requestJar: .native, requestJarRule: "CAPH1", responseJar: .native, responseJarRule: "CAPH1", bodyLostBy: nil, redirects: .silent, redirectRule: "CAPH1")
            plan.notes.append(Self.observerNote)
            return plan
        }
        // CAPH2: over the JS bridge to native; CAPC2: HttpRequestHandler then copies NativeJar into WebJar.
        var plan = TransportPlan(requestJar: .native, requestJarRule: "CAPH2", responseJar: .native, responseJarRule: "CAPH2", bodyLostBy: nil, redirects: .reported, redirectRule: "CAPH2")
        plan.jarCopyAfter = JarMirror(from: .native, to: .web, rule: "CAPC2")
        plan.notes.append(Self.observerNote)
        if !exchange.request.body.isEmpty {
            let contentType = exchange.request.headers.first("Content-Type")
            switch exchange.bodyKind {
            case .formData, .formDataWithFile:
                if exchange.initiator == .xhr && context.profile.holds(Self.caph3) {
                    // CAPH3: before 7.4.3 the bridge gives an XHR's FormData no Content-Type, so native sets no body.
                    plan.bodyLostBy = "CAPH3"
                } else if case .rebuilt(let body) = context.nativeMultipart ?? Self.nativeMultipart(exchange) {
                    plan.bodyChange = BodyChange(rule: "CAPH5", effect: .reencoded(body), reason: "CapacitorHttp rebuilt the multipart body natively")
                }
            case .binary, .binaryArrayBuffer:
                // CAPH4: a Blob or ArrayBuffer crosses the bridge as a plain object.
                let type = contentType?.asciiLowercased
                if type == nil {
                    plan.bodyLostBy = "CAPH4"
                } else if type!.containsBytes("json") {
                    plan.bodyChange = BodyChange(rule: "CAPH4", effect: .replaced(Self.emptyObject), reason: "the Blob or ArrayBuffer crossed the JS bridge as an empty object")
                } else {
                    plan.bodyChange = BodyChange(rule: "CAPH4", effect: .neverSent, reason: "native code cannot serialise a Blob or ArrayBuffer sent as \(contentType!)")
                }
            default:
                break  // strings, URL-encoded text and JSON cross as the page gave them
            }
        }
        return plan
    }

    /// CAPH5: what native code makes of the exchange's multipart body; the same for every
    /// preset, so a replay input works it out once per exchange.
    public static func nativeMultipart(_ exchange: Exchange) -> NativeMultipart {
        guard let rebuilt = rebuildMultipart(exchange.request.body, contentType: exchange.request.headers.first("Content-Type")),
            rebuilt != exchange.request.body
        else { return .unchanged }
        return .rebuilt(BodyFingerprint(rebuilt))
    }

    /// The multipart body as CapacitorHttp writes it again (`CapacitorUrlRequest`
    /// `getRequestDataFromFormData`): the boundary of the Content-Type, each file part with
    /// `Content-Transfer-Encoding: binary`; nil when the body does not parse.
    static func rebuildMultipart(_ body: Data, contentType: String?) -> Data? {
        guard let type = contentType, let equals = type.lastIndex(of: "=") else { return nil }
        let boundary = String(type[type.index(after: equals)...])
        let parts = MultipartParts(body, boundary: boundary)
        guard !parts.isEmpty else { return nil }
        var out = Data()
        for part in parts {
            guard let name = part.parameter("name") else { return nil }
            out.append(contentsOf: Array("--\(boundary)\r\n".utf8))
            if let file = part.parameter("filename") {
                out.append(contentsOf: Array("Content-Disposition: form-data; name=\"\(name)\"; filename=\"\(file)\"\r\n".utf8))
                out.append(contentsOf: Array("Content-Type: \(part.header("Content-Type") ?? "")\r\n".utf8))
                out.append(contentsOf: Array("Content-Transfer-Encoding: binary\r\n\r\n".utf8))
            } else {
                out.append(contentsOf: Array("Content-Disposition: form-data; name=\"\(name)\"\r\n\r\n".utf8))
            }
            out.append(part.content)
            out.append(contentsOf: Array("\r\n".utf8))
        }
        out.append(contentsOf: Array("--\(boundary)--\r\n".utf8))
        return out
    }
}

/// What CapacitorHttp's native side sends for a multipart body (CAPH5).
public enum NativeMultipart: Sendable, Hashable {
    /// The same bytes, or a body it cannot parse (sent as it is).
    case unchanged
    /// Other bytes, the same fields.
    case rebuilt(BodyFingerprint)
}

/// The parts of a multipart body, split on its boundary at the byte level (file contents
/// are any bytes).
struct MultipartParts: Sequence {
    struct Part {
        var head: String
        var content: Data

        func header(_ name: String) -> String? {
            for line in head.split(separator: "\r\n") {
                guard let colon = line.firstIndex(of: ":") else { continue }
                if line[..<colon].trimmingCharacters(in: .whitespaces).lowercased() == name.lowercased() {
                    return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
            }
            return nil
        }

        /// A parameter of Content-Disposition: `name`, `filename`.
        func parameter(_ key: String) -> String? {
            guard let disposition = header("Content-Disposition") else { return nil }
            for item in disposition.split(separator: ";") {
                let pair = item.trimmingCharacters(in: .whitespaces)
                guard pair.lowercased().hasPrefix(key + "=") else { continue }
                return String(pair.dropFirst(key.count + 1)).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
            return nil
        }
    }

    private var parts: [Part] = []
    var isEmpty: Bool { parts.isEmpty }

    init(_ body: Data, boundary: String) {
        let delimiter = Data("--\(boundary)".utf8)
        let bytes = [UInt8](body)
        var starts: [Int] = []
        var from = 0
        while let r = body.range(of: delimiter, in: from..<body.count) {
            starts.append(r.upperBound - body.startIndex)
            from = r.upperBound - body.startIndex
        }
        for (i, start) in starts.enumerated() where i + 1 < starts.count {
            // Each part: CRLF, head, CRLF CRLF, content, CRLF, then the next delimiter.
            let end = starts[i + 1] - delimiter.count - 2
            guard end > start + 2 else { continue }
            let chunk = bytes[(start + 2)..<end]
            guard let split = Data(chunk).range(of: Data("\r\n\r\n".utf8)) else { continue }
            let chunkData = Data(chunk)
            parts.append(Part(head: String(decoding: chunkData[..<split.lowerBound], as: UTF8.self), content: chunkData[split.upperBound...]))
        }
    }

    func makeIterator() -> IndexingIterator<[Part]> { parts.makeIterator() }
}

/// Tauri's HTTP plugin (plugin-http): the page's `fetch` sent natively by reqwest with the
/// plugin's own cookie jar, which the emulation keeps in the native jar, unlinked from
/// WebKit's (TAU3).
public struct TauriHTTPPluginStrategy: InterceptionStrategy {
    public init() {}

    /// TAU3: the plugin's jar never exchanges cookies with WebKit's.
    public var jarLink: JarLink { .separate(rule: "TAU3") }
    public var options: [String: String] { ["hooks": "fetch"] }
    public var citedRules: [RuleID] { ["TAU3"] + NativeStrategy().citedRules }

    public func plan(for exchange: Exchange, in context: EmulationContext) -> TransportPlan {
        guard exchange.initiator == .fetch, let target = exchange.request.target, target.scheme == "http" || target.scheme == "https" else {
            return NativeStrategy().plan(for: exchange, in: context)
        }
        return TransportPlan(requestJar: .native, requestJarRule: "TAU3", responseJar: .native, responseJarRule: "TAU3", bodyLostBy: nil, redirects: .reported, redirectRule: "TAU3")
    }
}

extension CapacitorHttpStrategy: PresetPart {
    public static var kindName: String { "capacitor-http" }
    public static var component: Component? { .capacitor }
    public init(options: NoOptions) {}
}

extension TauriHTTPPluginStrategy: PresetPart {
    public static var kindName: String { "tauri-http-plugin" }
    public static var component: Component? { .tauri }
    public init(options: NoOptions) {}
}
