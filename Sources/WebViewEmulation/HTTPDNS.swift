import TrafficModel

/// HTTPDNS IP-direct (the article iOS秒开H5实战总结 (2021-05-07) section 4): the native session sends a request for a
/// resolved host to `https://IP/...` with the name in the Host header (D1-D5). A mitigation
/// any preset whose strategy sends natively can take (`--httpdns HOST=IP,...`, a scenario's
/// `httpdns`, or a preset file).
public struct HTTPDNS: Mitigation, Hashable {
    /// Resolved hosts: name to IP.
    public var hosts: [String: String]
    /// D4: the session validates the certificate against the Host header's name (the seed's
    /// `didReceiveChallenge:`), not the IP in the URL.
    public var certificateHostCheck: Bool
    /// D5: the session sets SNI to the Host header's name (the seed's private `_sslSettings`).
    public var sni: Bool
    /// D1: the mitigation copies the name's cookies onto the IP request itself.
    public var copiesCookies: Bool

    public init(hosts: [String: String], certificateHostCheck: Bool = true, sni: Bool = true, copiesCookies: Bool = false) {
        self.hosts = Dictionary(hosts.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        self.certificateHostCheck = certificateHostCheck
        self.sni = sni
        self.copiesCookies = copiesCookies
    }

    public var options: [String: String] {
        ["hosts": hosts.keys.sorted().map { "\($0)=\(hosts[$0]!)" }.joined(separator: "+"), "certificate-host-check": String(certificateHostCheck), "sni": String(sni), "cookies": copiesCookies ? "copied" : "by IP"]
    }
    public var citedRules: [RuleID] { ["D1", "D2", "D3", "D4", "D5"] }

    public var hooks: MitigationHooks {
        let hosts = self.hosts, check = certificateHostCheck, sni = self.sni, copies = copiesCookies
        // Several names on one IP: without SNI the server cannot pick the certificate (D5).
        var namesPerIP: [String: Int] = [:]
        for ip in hosts.values { namesPerIP[ip, default: 0] += 1 }
        let shared = namesPerIP
        return MitigationHooks(
            requestIssued: { outcome, request in
                let e = request.exchange
                // Only a native session resolves by HTTPDNS; WebKit's own loads use the system's DNS.
                guard request.plan.intercepted, let target = e.request.target, let ip = hosts[target.host] else { return }
                if e.response.isRedirect, let location = e.response.headers.first("Location"), location.contains("://") {
                    // D3: an absolute Location is followed by name, through the system's DNS.
                    outcome.note(Change(rule: "D3", what: "the redirect's next hop goes by name, not by the HTTPDNS IP"))
                }
                outcome.deliveredURL = Self.replacingHost(target.host, with: ip, in: e.request.url)
                outcome.note(Change(rule: "D1", note: .sentToIP(ip, host: target.host)))
                if target.isSecure && !check {
                    outcome[.failed] = ["D4"]
                    outcome.note(Change(rule: "D4", note: .certificateNamesHost(target.host, ip: ip)))
                    return
                }
                if target.isSecure && !sni && (shared[ip] ?? 0) > 1 {
                    outcome[.failed] = ["D5"]
                    outcome.note(Change(rule: "D5", note: .noSNI(ip: ip)))
                }
            },
            cookieHost: { request in
                // D1, D2: the native session's cookies for the request and its Set-Cookie go
                // by the IP, unless the mitigation copies the name's cookies itself.
                guard !copies, request.plan.intercepted, let target = request.exchange.request.target, let ip = hosts[target.host] else { return nil }
                return CookieHost(host: ip, rule: "D1")
            })
    }
}

extension HTTPDNS {
    /// `url` with the first `://host` (the host compared without regard to ASCII case) made
    /// `://ip`; `url` itself when it has none. The first `://` is the scheme's, so the usual
    /// URL is rewritten in one pass over its bytes: Foundation's case-insensitive search and
    /// replace was 7 % of the advice's instructions (Tools/bench), called once per request.
    static func replacingHost(_ host: String, with ip: String, in url: String) -> String {
        let utf8 = url.utf8
        guard let separator = schemeSeparator(in: utf8) else { return url }
        let rest = utf8[separator.upperBound...]
        guard rest.count >= host.utf8.count, zip(rest, host.utf8).allSatisfy({ asciiLower($0) == asciiLower($1) }) else {
            return url.replacingOccurrences(of: "://" + host, with: "://" + ip, options: .caseInsensitive, range: url.range(of: "://" + host, options: .caseInsensitive))
        }
        let hostEnd = utf8.index(separator.upperBound, offsetBy: host.utf8.count)
        return String(url[..<separator.upperBound]) + ip + String(url[hostEnd...])
    }

    static func asciiLower(_ byte: UInt8) -> UInt8 { byte >= 65 && byte <= 90 ? byte + 32 : byte }

    /// Where the first `://` is. A plain scan: the standard library's `firstRange(of:)`
    /// cost 20,000 instructions a URL, most of the rewrite.
    static func schemeSeparator(in utf8: String.UTF8View) -> Range<String.Index>? {
        var i = utf8.startIndex
        while let colon = utf8[i...].firstIndex(of: UInt8(ascii: ":")) {
            let after = utf8[utf8.index(after: colon)...]
            if after.starts(with: "//".utf8) { return colon..<utf8.index(colon, offsetBy: 3) }
            i = utf8.index(after: colon)
        }
        return nil
    }
}

extension HTTPDNS: PresetPart {
    public static var kindName: String { "httpdns" }
    /// D1: cookies copied onto the IP request; D4 and D5: the certificate checked against
    /// the name, and SNI set to it.
    public static var choices: [OptionChoice] {
        [
            OptionChoice("copiesCookies", default: "false", counters: ["true"], rules: ["D1"]),
            OptionChoice("certificateHostCheck", default: "true", counters: ["true"], rules: ["D4"]),
            OptionChoice("sni", default: "true", counters: ["true"], rules: ["D5"]),
        ]
    }
    public static var example: HTTPDNS { HTTPDNS(hosts: ["a.example": "192.0.2.1"]) }

    public struct Options: PartOptions {
        /// Host name to IP address.
        public var hosts: [String: String]?
        public var certificateHostCheck: Bool?
        public var sni: Bool?
        public var copiesCookies: Bool?
        enum CodingKeys: String, CodingKey, CaseIterable { case hosts, certificateHostCheck, sni, copiesCookies }
        public static let keys = CodingKeys.allCases.map(\.stringValue)
    }

    public init(options o: Options) throws {
        guard let hosts = o.hosts, !hosts.isEmpty else { throw ConfigProblem(at: "hosts", "an object of host name to IP address") }
        for (name, ip) in hosts.sorted(by: { $0.key < $1.key }) where !Scenario.isIP(ip) {
            throw ConfigProblem([ConfigKey("hosts"), ConfigKey(name)], "\"\(ip)\" is not an IPv4 or IPv6 address")
        }
        self.init(hosts: hosts, certificateHostCheck: o.certificateHostCheck ?? true, sni: o.sni ?? true, copiesCookies: o.copiesCookies ?? false)
    }
}
