import Foundation

/// The parts of an absolute http(s) URL that matching, cookies and sites need.
///
/// A small hand parser: recordings hold many URLs and each is split on every replay, so
/// this avoids Foundation's URL on the hot path. Anything that is not `scheme://authority`
/// gives nil.
public struct RequestTarget: Sendable, Hashable {
    /// Lowercased scheme, e.g. `https`.
    public var scheme: String
    /// Lowercased host without brackets for IPv6.
    public var host: String
    public var port: Int
    /// The path, starting with `/` (`/` when the URL has none).
    public var path: String
    /// The query without `?`, nil when absent.
    public var query: String?

    public init?(_ url: String) {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let scheme = String(url[url.startIndex..<schemeEnd.lowerBound]).asciiLowercased
        guard !scheme.isEmpty, scheme.utf8.allSatisfy({ ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 43 || $0 == 45 || $0 == 46 }) else { return nil }
        let rest = url[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        var authority = rest[rest.startIndex..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host: Substring
        var port: Int?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { port = Int(after.dropFirst()) ; if port == nil && after.count > 1 { return nil } }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[authority.startIndex..<colon]
            let portText = authority[authority.index(after: colon)...]
            if !portText.isEmpty {
                guard let p = Int(portText), p >= 0, p <= 65535 else { return nil }
                port = p
            }
        } else {
            host = authority
        }
        guard !host.isEmpty else { return nil }
        self.scheme = scheme
        self.host = String(host).asciiLowercased
        self.port = port ?? RequestTarget.defaultPort(scheme)
        var remainder = rest[authorityEnd...]
        if let hash = remainder.firstIndex(of: "#") { remainder = remainder[remainder.startIndex..<hash] }
        if let q = remainder.firstIndex(of: "?") {
            let p = remainder[remainder.startIndex..<q]
            self.path = p.isEmpty ? "/" : String(p)
            self.query = String(remainder[remainder.index(after: q)...])
        } else {
            self.path = remainder.isEmpty ? "/" : String(remainder)
            self.query = nil
        }
    }

    public static func defaultPort(_ scheme: String) -> Int {
        switch scheme {
        case "https", "wss": return 443
        default: return 80
        }
    }

    public var isSecure: Bool { scheme == "https" || scheme == "wss" }

    /// The path with `?query` when there is one: the request-target of an origin-form request.
    public var pathAndQuery: String { query.map { path + "?" + $0 } ?? path }

    /// `scheme://host[:port]`, the port only when not the default.
    public var origin: String {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return port == RequestTarget.defaultPort(scheme) ? "\(scheme)://\(hostPart)" : "\(scheme)://\(hostPart):\(port)"
    }

    public var site: String { Site.of(host: host) }

    /// `host/path?query`, how reports show a URL; the URL itself when it does not parse.
    public static func hostAndPath(_ url: String) -> String {
        guard let t = RequestTarget(url) else { return url }
        return t.host + t.pathAndQuery
    }

    /// Resolves `reference` (a Location header, say) against `base`, as a browser does.
    public static func resolve(_ reference: String, against base: String) -> String? {
        if RequestTarget(reference) != nil { return reference }
        guard let baseURL = URL(string: base), let resolved = URL(string: reference, relativeTo: baseURL) else { return nil }
        return resolved.absoluteString
    }
}
