/// Requests a capture saw as `http://` that were `https://` to the browser: TLS ended at a
/// proxy or load balancer in front of the capture point, which then spoke plain HTTP to the
/// server. Read as captured, every `Secure` cookie would be refused on them and every
/// cookie the page then carried would look written by script. The request says so itself:
/// `X-Forwarded-Proto: https` (or `X-Forwarded-Ssl: on`, `Front-End-Https: on`) from the
/// terminator, or an `Origin` or `Referer` naming `https://` on the same host (a page on
/// https may not load its own host over http). Once a host is known terminated, its later
/// requests are too.
public struct TerminatedTLS: Sendable {
    /// The hosts known terminated, and the first evidence seen.
    private(set) var hosts: Set<String> = []
    public private(set) var count = 0
    public private(set) var evidence: String?

    public init() {}

    /// Reads `exchange` as https when the evidence says so; whether it did.
    public mutating func upgrade(_ exchange: inout Exchange) -> Bool {
        guard let target = exchange.request.target, target.scheme == "http" else { return false }
        if !hosts.contains(target.host) {
            guard let reason = Self.evidence(exchange.request, host: target.host) else { return false }
            hosts.insert(target.host)
            if evidence == nil { evidence = reason }
        }
        let url = exchange.request.url
        guard let colon = url.firstIndex(of: ":") else { return false }
        var rest = String(url[url.index(after: colon)...])
        // The browser's port was https's; the terminator's own port toward the server says
        // nothing of it.
        if rest.hasPrefix("//") {
            let authorityEnd = rest.dropFirst(2).firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
            if rest[..<authorityEnd].hasSuffix(":80") { rest.removeSubrange(rest.index(authorityEnd, offsetBy: -3)..<authorityEnd) }
        }
        exchange.request.url = "https:" + rest
        count += 1
        return true
    }

    /// The header that shows the request was https, nil when none does.
    static func evidence(_ request: RecordedRequest, host: String) -> String? {
        if let proto = request.headers.first("X-Forwarded-Proto")?.trimmingOWS, proto.caseInsensitiveEquals("https") { return "X-Forwarded-Proto: https" }
        if request.headers.first("X-Forwarded-Ssl")?.trimmingOWS.caseInsensitiveEquals("on") == true { return "X-Forwarded-Ssl: on" }
        if request.headers.first("Front-End-Https")?.trimmingOWS.caseInsensitiveEquals("on") == true { return "Front-End-Https: on" }
        for name in ["Origin", "Referer"] {
            if let page = request.headers.first(name).flatMap(RequestTarget.init), page.scheme == "https", page.host == host { return "\(name) https://\(host)" }
        }
        return nil
    }

    /// The note a recording with such requests carries.
    public var diagnostic: Diagnostic? {
        guard count > 0, let evidence else { return nil }
        return Diagnostic(.tlsTerminated, message: "\(count) request(s) recorded as http:// were https:// to the browser (\(evidence)): TLS ended in front of where the traffic was recorded; read as https, so their Secure cookies count")
    }
}
