import Foundation

/// The parts of an absolute http(s) URL that matching, cookies and sites need.
///
/// A small hand parser: recordings hold many URLs and each is split on every replay, so
/// this avoids Foundation's URL on the hot path. Anything that is not `scheme://authority`
/// gives nil.
///
/// The parts live in one shared, immutable box: a replay reads a request's target several
/// times per exchange and preset, and a copy is then one reference count, not four.
public struct RequestTarget: Sendable, Hashable {
    private final class Parts: Sendable {
        let scheme: String
        let host: String
        let port: Int
        let path: String
        let query: String?

        init(scheme: String, host: String, port: Int, path: String, query: String?) {
            (self.scheme, self.host, self.port, self.path, self.query) = (scheme, host, port, path, query)
        }
    }

    private let parts: Parts

    /// Lowercased scheme, e.g. `https`.
    public var scheme: String { parts.scheme }
    /// Lowercased host without brackets for IPv6.
    public var host: String { parts.host }
    public var port: Int { parts.port }
    /// The path, starting with `/` (`/` when the URL has none).
    public var path: String { parts.path }
    /// The query without `?`, nil when absent.
    public var query: String? { parts.query }

    public static func == (a: RequestTarget, b: RequestTarget) -> Bool {
        a.parts === b.parts || (a.scheme, a.host, a.port, a.path, a.query) == (b.scheme, b.host, b.port, b.path, b.query)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(scheme)
        hasher.combine(host)
        hasher.combine(port)
        hasher.combine(path)
        hasher.combine(query)
    }

    public init?(_ url: String) {
        var url = url
        // Byte by byte on the UTF-8: every separator is ASCII, and Character indexing
        // (grapheme breaking) was the larger part of an import's URL handling.
        guard let parsed = url.withUTF8({ RequestTarget.parse($0) }) else { return nil }
        self = parsed
    }

    init(scheme: String, host: String, port: Int, path: String, query: String?) {
        parts = Parts(scheme: scheme, host: host, port: port, path: path, query: query)
    }

    /// The same target on another host (an IP an HTTPDNS resolver gave).
    public func with(host: String) -> RequestTarget {
        RequestTarget(scheme: scheme, host: host.lowercased(), port: port, path: path, query: query)
    }

    static func parse(_ b: UnsafeBufferPointer<UInt8>) -> RequestTarget? {
        let n = b.count
        func text(_ from: Int, _ to: Int, lowercased: Bool = false) -> String {
            let slice = UnsafeBufferPointer(rebasing: b[from..<to])
            guard lowercased, slice.contains(where: { $0 >= 65 && $0 <= 90 }) else { return String(decoding: slice, as: UTF8.self) }
            return String(decoding: slice.map { $0 >= 65 && $0 <= 90 ? $0 | 0x20 : $0 }, as: UTF8.self)
        }
        func first(_ from: Int, _ to: Int, _ match: (UInt8) -> Bool) -> Int? {
            var i = from
            while i < to {
                if match(b[i]) { return i }
                i += 1
            }
            return nil
        }
        // scheme "://"
        var schemeEnd = -1
        var i = 0
        while i + 2 < n {
            if b[i] == 0x3A, b[i + 1] == 0x2F, b[i + 2] == 0x2F {
                schemeEnd = i
                break
            }
            i += 1
        }
        guard schemeEnd > 0 else { return nil }
        for k in 0..<schemeEnd {
            let c = b[k] >= 65 && b[k] <= 90 ? b[k] | 0x20 : b[k]
            guard (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c == 43 || c == 45 || c == 46 else { return nil }
        }
        let scheme = text(0, schemeEnd, lowercased: true)
        let restStart = schemeEnd + 3
        let authorityEnd = first(restStart, n) { $0 == 0x2F || $0 == 0x3F || $0 == 0x23 } ?? n
        var authorityStart = restStart
        var k = authorityEnd
        while k > restStart {
            k -= 1
            if b[k] == 0x40 {
                authorityStart = k + 1
                break
            }
        }
        var hostStart = authorityStart
        var hostEnd = authorityEnd
        var port: Int?
        func number(_ from: Int, _ to: Int) -> Int? { Int(text(from, to)) }
        if authorityStart < authorityEnd, b[authorityStart] == 0x5B {
            guard let close = first(authorityStart, authorityEnd, { $0 == 0x5D }) else { return nil }
            hostStart = authorityStart + 1
            hostEnd = close
            if close + 1 < authorityEnd, b[close + 1] == 0x3A {
                port = number(close + 2, authorityEnd)
                if port == nil && authorityEnd - (close + 1) > 1 { return nil }
            }
        } else {
            var colon: Int?
            var c = authorityEnd
            while c > authorityStart {
                c -= 1
                if b[c] == 0x3A {
                    colon = c
                    break
                }
            }
            if let colon {
                hostEnd = colon
                if colon + 1 < authorityEnd {
                    guard let p = number(colon + 1, authorityEnd), p >= 0, p <= 65535 else { return nil }
                    port = p
                }
            }
        }
        guard hostStart < hostEnd else { return nil }
        let end = first(authorityEnd, n) { $0 == 0x23 } ?? n
        let path: String
        var query: String?
        if let q = first(authorityEnd, end, { $0 == 0x3F }) {
            path = q == authorityEnd ? "/" : text(authorityEnd, q)
            query = text(q + 1, end)
        } else {
            path = end == authorityEnd ? "/" : text(authorityEnd, end)
        }
        return RequestTarget(scheme: scheme, host: text(hostStart, hostEnd, lowercased: true), port: port ?? defaultPort(scheme), path: path, query: query)
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
        let hostPart = host.containsByte(0x3A) ? "[\(host)]" : host
        return port == RequestTarget.defaultPort(scheme) ? "\(scheme)://\(hostPart)" : "\(scheme)://\(hostPart):\(port)"
    }

    /// Whether `other` has this origin: scheme, host and port compared as they are held,
    /// without building either origin's text.
    public func hasSameOrigin(as other: RequestTarget) -> Bool {
        port == other.port && scheme == other.scheme && host == other.host
    }

    public var site: String { Site.of(host: host) }

    /// `host[:port]/path?query`, how reports show a URL; the URL itself when it does not parse.
    public static func hostAndPath(_ url: String) -> String {
        RequestTarget(url)?.hostAndPath ?? url
    }

    /// `host[:port]/path?query`, how reports show a URL: the port when it is not the
    /// scheme's default, so that two servers on one host read apart.
    public var hostAndPath: String {
        // One reserved string: reports and findings show every URL this way.
        var out = String()
        let portText = port == RequestTarget.defaultPort(scheme) ? nil : ":\(port)"
        out.reserveCapacity(host.utf8.count + (portText?.utf8.count ?? 0) + path.utf8.count + (query.map { $0.utf8.count + 1 } ?? 0))
        if let portText, host.containsByte(0x3A) {
            out += "[" + host + "]" + portText  // an IPv6 address, bracketed as in its URL
        } else {
            out += host
            if let portText { out += portText }
        }
        out += path
        if let query {
            out += "?"
            out += query
        }
        return out
    }

    /// Resolves `reference` (a Location header, say) against `base`, as a browser does.
    public static func resolve(_ reference: String, against base: String) -> String? {
        if RequestTarget(reference) != nil { return reference }
        guard let baseURL = URL(string: base), let resolved = URL(string: reference, relativeTo: baseURL) else { return nil }
        return resolved.absoluteString
    }
}
