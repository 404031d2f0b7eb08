import TrafficModel

/// Which hybrid framework a recording was made inside, from what the recording shows: a
/// page on the framework's scheme (capacitor://, ionic://, app://, tauri://), an Origin or
/// Referer naming it, CapacitorHttp's interceptor paths, KKJSBridge's request ids, a
/// framework's token in the User-Agent. A version is given only where the recording
/// shows one (a `Name/1.2.3` User-Agent token); nil otherwise.
public struct RecordedFramework: Sendable, Hashable {
    /// `Capacitor`, `Cordova`, `Ionic WebView`, `Tauri`, `KKJSBridge`.
    public var name: String
    public var version: String?
    /// What showed it, each with the exchange: "the page at capacitor://localhost (#0)".
    public var evidence: [String]
    /// The presets that replay it, as `--preset` takes them.
    public var presets: [String]

    /// One framework's marks.
    struct Signature {
        var name: String
        var schemes: [String]
        var pathMarks: [String]
        var userAgentToken: String?
        var presets: [String]
    }

    static let signatures: [Signature] = [
        Signature(name: "Capacitor", schemes: ["capacitor"], pathMarks: ["/_capacitor_http_interceptor_", "/_capacitor_https_interceptor_", "/_capacitor_file_"], userAgentToken: "Capacitor", presets: ["capacitor*"]),
        Signature(name: "Ionic WebView", schemes: ["ionic"], pathMarks: ["/_app_file_"], userAgentToken: nil, presets: ["ionic-webview"]),
        Signature(name: "Cordova", schemes: ["app"], pathMarks: [], userAgentToken: "Cordova", presets: ["cordova-schemehandler"]),
        Signature(name: "Tauri", schemes: ["tauri", "ipc"], pathMarks: [], userAgentToken: "Tauri", presets: ["tauri"]),
        Signature(name: "KKJSBridge", schemes: [], pathMarks: ["KKJSBridge-RequestId"], userAgentToken: nil, presets: ["kkjsbridge*"]),
    ]

    /// The framework the recording shows most evidence of, nil when it shows none.
    public static func detect(in recording: Recording) -> RecordedFramework? {
        let found = signatures.compactMap { evidence(of: $0, in: recording) }
        return found.max { $0.evidence.count < $1.evidence.count }
    }

    static func evidence(of signature: Signature, in recording: Recording) -> RecordedFramework? {
        var evidence: [String] = []
        var version: String?
        var seen = Set<String>()
        func note(_ text: String, _ sequence: Int) {
            guard seen.insert(text).inserted, evidence.count < 4 else { return }
            evidence.append("\(text) (#\(sequence))")
        }
        for e in recording.exchanges {
            if let target = e.request.target, signature.schemes.contains(target.scheme) {
                note("\(e.initiator.isDocument ? "the page" : "a request") at \(target.scheme)://\(target.host)", e.sequence)
            }
            for header in ["Origin", "Referer"] {
                if let value = e.request.headers.first(header), let scheme = signature.schemes.first(where: { value.hasPrefix($0 + "://") }) {
                    note("\(header) \(scheme)://\(value.dropFirst(scheme.count + 3).prefix { $0 != "/" })", e.sequence)
                }
            }
            if let mark = signature.pathMarks.first(where: { e.request.url.contains($0) }) { note("a URL with \(mark)", e.sequence) }
            if let token = signature.userAgentToken, let agent = e.request.headers.first("User-Agent"), let found = Self.token(token, in: agent) {
                note("User-Agent \(found.text)", e.sequence)
                version = version ?? found.version
            }
        }
        guard !evidence.isEmpty else { return nil }
        return RecordedFramework(name: signature.name, version: version, evidence: evidence, presets: signature.presets)
    }

    /// `Capacitor/5.2.1` in a User-Agent: the token and its version, when it has one.
    static func token(_ name: String, in agent: String) -> (text: String, version: String?)? {
        for word in agent.split(separator: " ") where word.hasPrefix(name) {
            let rest = word.dropFirst(name.count)
            if rest.isEmpty { return (String(word), nil) }
            guard rest.first == "/" else { continue }
            let version = String(rest.dropFirst())
            return (String(word), SemanticVersion.Partial(version) != nil ? version : nil)
        }
        return nil
    }

    /// "Capacitor (the page at capacitor://localhost (#0)): --preset 'capacitor*'".
    public var sentence: String {
        "\(name)\(version.map { " \($0)" } ?? "") (\(evidence.joined(separator: "; "))): --preset '\(presets.joined(separator: ","))' replays it"
    }
}
