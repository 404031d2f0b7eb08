import TrafficModel

/// An RFC 6265bis cookie jar with the recording's clock: every call takes the time at
/// which it happens, so expiry is evaluated at each exchange's recorded time.
///
/// A value type: the emulator copies jars freely and replays are deterministic.
public struct CookieStore: Sendable, Hashable {
    /// Which API a cookie write or read comes through (section 5.7, "non-HTTP API").
    public enum API: Sendable, Hashable { case http, script }

    /// Every cookie in one list while the jar is small, as most flows' jars are: reading
    /// a few dozen cookies costs less than hashing a domain, and the jar is one
    /// allocation. A jar that grows past `listLimit` keeps its cookies per domain from
    /// then on, so a lookup walks only the request host's parent domains.
    private var list: [Cookie] = []
    private var byDomain = [String: [Cookie]]()
    private var keptByDomain = false
    public private(set) var count = 0
    private var nextCreationOrder: UInt64 = 0

    /// How many cookies the jar holds in one list before it keeps them per domain.
    static let listLimit = 64

    /// Limits of section 6.1 ("at least 50 per domain, 3000 in all"); WebKit keeps more.
    public var maxCookiesPerDomain = 180
    public var maxCookies = 3000
    /// WebKit caps the lifetime of a persistent cookie written by script (C6).
    public var scriptLifetimeCap: Double? = 7 * 86_400
    /// Section 5.7 step 3: a cap on every cookie's lifetime (400 days).
    public static let maxLifetime: Double = 400 * 86_400

    public init() {}

    /// Every cookie, ordered by domain, path and name.
    public var all: [Cookie] { (keptByDomain ? byDomain.values.flatMap { $0 } : list).sorted { $0.key < $1.key } }

    /// Visits every cookie, in no particular order.
    public func forEachCookie(_ visit: (Cookie) -> Void) {
        if !keptByDomain {
            for cookie in list { visit(cookie) }
            return
        }
        for list in byDomain.values { for cookie in list { visit(cookie) } }
    }

    /// The first cookie named `name` that `accept` takes, in `all`'s order (domain, path),
    /// without sorting the jar: `all.first { $0.name == name && accept($0) }` in one pass.
    public func first(named name: String, where accept: (Cookie) -> Bool = { _ in true }) -> Cookie? {
        var best: Cookie?
        func consider(_ cookies: [Cookie]) {
            for cookie in cookies where cookie.name == name && accept(cookie) {
                // One name per (domain, path) in a jar: the key order is (domain, path).
                if let b = best, (b.domain, b.path) <= (cookie.domain, cookie.path) { continue }
                best = cookie
            }
        }
        if !keptByDomain {
            consider(list)
        } else {
            for cookies in byDomain.values { consider(cookies) }
        }
        return best
    }

    /// The cookies stored for exactly `domain`.
    private func stored(in domain: String) -> [Cookie] {
        keptByDomain ? byDomain[domain] ?? [] : list.filter { $0.domain == domain }
    }

    /// The value of the cookie named `name` for `domain` and `path` that has not expired
    /// at `time`; nil when there is none. Reads in place, without a key or a copy.
    public func liveValue(name: String, domain: String, path: String, at time: Double) -> String? {
        func find(_ cookies: [Cookie]) -> String? {
            for cookie in cookies where cookie.name == name && cookie.domain == domain && cookie.path == path {
                return cookie.isExpired(at: time) ? nil : cookie.value
            }
            return nil
        }
        if !keptByDomain { return find(list) }
        return byDomain[domain].flatMap(find)
    }

    /// Whether the jar holds `cookie` itself, not merely an equal one: a synchronisation
    /// stores the very cookie the other jar holds. A pointer compare per cookie, where
    /// `liveValue` compares three strings.
    public func holdsItself(_ cookie: Cookie) -> Bool {
        if !keptByDomain { return list.contains { $0.box === cookie.box } }
        return byDomain[cookie.domain]?.contains { $0.box === cookie.box } ?? false
    }

    public func cookie(for key: Cookie.Key) -> Cookie? {
        if !keptByDomain { return list.first { $0.name == key.name && $0.domain == key.domain && $0.path == key.path } }
        // A domain's list holds only that domain: name and path tell its cookies apart.
        return byDomain[key.domain]?.first { $0.name == key.name && $0.path == key.path }
    }

    /// Cookie stores are equal when they hold the same cookies with the same limits,
    /// however each keeps them.
    public static func == (a: CookieStore, b: CookieStore) -> Bool {
        a.count == b.count && a.nextCreationOrder == b.nextCreationOrder && a.maxCookiesPerDomain == b.maxCookiesPerDomain
            && a.maxCookies == b.maxCookies && a.scriptLifetimeCap == b.scriptLifetimeCap && a.all == b.all
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        hasher.combine(all)
    }

    // MARK: - Storage model (section 5.7)

    /// What a store did with a cookie.
    public enum StoreResult: Sendable, Hashable {
        case stored(Cookie)
        /// The cookie replaced or removed an existing one (a past expiry deletes).
        case deleted(Cookie.Key)
        case ignored(reason: String)
    }

    /// Receives a `Set-Cookie` header value (or a `document.cookie` write when `api` is
    /// `.script`) from `url` at `time`.
    @discardableResult
    public mutating func receive(_ header: String, from url: RequestTarget, at time: Double, api: API = .http) -> StoreResult {
        var header = header
        return header.withUTF8 { receive(bytes: $0, from: url, at: time, api: api) }
    }

    /// `receive` of a Set-Cookie value's bytes, read where they lie (a header list's).
    mutating func receive(bytes header: UnsafeBufferPointer<UInt8>, from url: RequestTarget, at time: Double, api: API = .http) -> StoreResult {
        guard let parsed = SetCookie.parse(bytes: header) else { return .ignored(reason: "unparsable Set-Cookie") }
        return store(parsed, from: url, at: time, api: api)
    }

    @discardableResult
    public mutating func store(_ parsed: SetCookie, from url: RequestTarget, at time: Double, api: API) -> StoreResult {
        storeReplacing(parsed, from: url, at: time, api: api).result
    }

    /// `store`, and the cookie of the same name, domain and path it replaced or deleted.
    /// A stored cookie carries `tag`.
    public mutating func storeReplacing(_ parsed: SetCookie, from url: RequestTarget, at time: Double, api: API, tag: UInt32 = 0) -> (result: StoreResult, replaced: Cookie?) {
        var replaced: Cookie?
        let result = store(parsed, from: url, at: time, api: api, tag: tag, replaced: &replaced)
        return (result, replaced)
    }

    private mutating func store(_ parsed: SetCookie, from url: RequestTarget, at time: Double, api: API, tag: UInt32 = 0, replaced: inout Cookie?) -> StoreResult {
        let requestHost = url.host
        // Step 4: Max-Age (last occurrence) wins over Expires; without either the
        // cookie is a session cookie. Both are capped at 400 days (step 3).
        var expiry: Double?
        if let maxAge = parsed.maxAge {
            expiry = maxAge <= 0 ? -.infinity : time + min(maxAge, Self.maxLifetime)
        } else if let expires = parsed.expires {
            expiry = min(expires, time + Self.maxLifetime)
        }
        // C6: WebKit caps the lifetime of persistent cookies written by script.
        if api == .script, let cap = scriptLifetimeCap, let e = expiry, e > time + cap { expiry = time + cap }
        // Steps 5-6: the domain attribute; a public suffix is accepted only as the host itself.
        var domain = parsed.domain ?? ""
        if !domain.isEmpty, CookieStore.isPublicSuffix(domain) {
            if domain == requestHost { domain = "" } else { return .ignored(reason: "Domain=\(domain) is a public suffix") }
        }
        // Step 7: a domain cookie must domain-match the request host; else host-only.
        let hostOnly: Bool
        if !domain.isEmpty {
            guard CookieStore.domainMatches(requestHost, domain) else { return .ignored(reason: "Domain=\(domain) does not match \(requestHost)") }
            hostOnly = false
        } else {
            hostOnly = true
            domain = requestHost
        }
        // Step 8: the path attribute, else the default path of the request URI.
        let path = (parsed.path?.isEmpty == false) ? parsed.path! : CookieStore.defaultPath(url.path)
        // Step 10: a Secure cookie from an insecure scheme is ignored.
        if parsed.secure && !url.isSecure { return .ignored(reason: "Secure cookie from an insecure origin") }
        // Step 12: a cookie with HttpOnly from a non-HTTP API is ignored (WebKit: C3).
        if parsed.httpOnly && api == .script { return .ignored(reason: "HttpOnly cookie written by script (C3)") }
        // Step 13: an insecure origin may not overlay an existing Secure cookie.
        if !parsed.secure && !url.isSecure {
            for existing in cookies(near: domain) where existing.name == parsed.name && existing.secure
                && (CookieStore.domainMatches(existing.domain, domain) || CookieStore.domainMatches(domain, existing.domain))
                && CookieStore.pathMatches(existing.path, path)
            {
                return .ignored(reason: "would overlay a Secure cookie from an insecure origin")
            }
        }
        // Step 14-15: cookie name prefixes.
        // Both prefixes start with "__": most names are looked at no further.
        if parsed.name.utf8.first == UInt8(ascii: "_") {
            let lowerName = parsed.name.asciiLowercased
            if lowerName.hasPrefix("__secure-") && !parsed.secure { return .ignored(reason: "__Secure- prefix without Secure") }
            if lowerName.hasPrefix("__host-") && !(parsed.secure && hostOnly && path == "/") { return .ignored(reason: "__Host- prefix rules not met") }
        }
        if parsed.name.isEmpty {
            let lowerValue = parsed.value.asciiLowercased
            if lowerValue.hasPrefix("__secure-") || lowerValue.hasPrefix("__host-") { return .ignored(reason: "nameless cookie with a prefixed value") }
        }
        var cookie = Cookie(name: parsed.name, value: parsed.value, domain: domain, hostOnly: hostOnly, path: path, expiry: expiry, secure: parsed.secure, httpOnly: parsed.httpOnly, sameSite: parsed.sameSite, creation: time)
        cookie.tag = tag
        // Step 16: an existing cookie with the same name, domain and path is replaced,
        // keeping its creation time, unless script would replace an HttpOnly one.
        let key = cookie.key
        if let old = self.cookie(for: key) {
            if api == .script && old.httpOnly { return .ignored(reason: "script may not replace an HttpOnly cookie") }
            cookie.creation = old.creation
            cookie.creationOrder = old.creationOrder
            remove(key)
            replaced = old
        }
        // Step 17: an expired cookie is not stored (this is how deletion works).
        if cookie.isExpired(at: time) { return .deleted(key) }
        insert(cookie, at: time)
        return .stored(cookie)
    }

    /// Puts a cookie in the jar as is (jar synchronisation, starting jars).
    public mutating func set(_ cookie: consuming Cookie, at time: Double) {
        remove(cookie.key)
        if !cookie.isExpired(at: time) { insert(cookie, at: time) }
    }

    @discardableResult
    public mutating func remove(_ key: Cookie.Key) -> Cookie? {
        if !keptByDomain {
            guard let index = list.firstIndex(where: { $0.name == key.name && $0.domain == key.domain && $0.path == key.path }) else { return nil }
            count -= 1
            return list.remove(at: index)
        }
        // In place: a list taken out of the dictionary and changed would be copied whole.
        guard let slot = byDomain.index(forKey: key.domain),
            let index = byDomain.values[slot].firstIndex(where: { $0.name == key.name && $0.path == key.path })
        else { return nil }
        let removed = byDomain.values[slot].remove(at: index)
        if byDomain.values[slot].isEmpty { byDomain.remove(at: slot) }
        count -= 1
        return removed
    }

    private mutating func insert(_ cookie: consuming Cookie, at time: Double) {
        if cookie.creationOrder == 0 {
            nextCreationOrder += 1
            cookie.creationOrder = nextCreationOrder
        }
        // The cookie moves into the jar; its domain is kept for the limits below.
        let domain = cookie.domain
        if !keptByDomain && count < Self.listLimit {
            if list.capacity == 0 { list.reserveCapacity(8) }
            list.append(cookie)
        } else {
            if !keptByDomain {
                // The jar outgrew one list: per domain from now on.
                byDomain = Dictionary(grouping: list, by: \.domain)
                list = []
                keptByDomain = true
            }
            if let slot = byDomain.index(forKey: domain) {
                byDomain.values[slot].append(cookie)
            } else {
                byDomain[domain] = [cookie]
            }
        }
        count += 1
        // Section 5.7.1 (limits): evict expired cookies first, then the least recently used.
        guard count > maxCookies || (count > maxCookiesPerDomain && stored(in: domain).count > maxCookiesPerDomain) else { return }
        removeExpired(at: time)
        while true {
            let inDomain = stored(in: domain)
            guard inDomain.count > maxCookiesPerDomain, let victim = inDomain.min(by: { $0.lastAccess < $1.lastAccess }) else { break }
            remove(victim.key)
        }
        while count > maxCookies, let victim = leastRecentlyUsed() {
            remove(victim.key)
        }
    }

    private func leastRecentlyUsed() -> Cookie? {
        keptByDomain ? byDomain.values.joined().min { $0.lastAccess < $1.lastAccess } : list.min { $0.lastAccess < $1.lastAccess }
    }

    public mutating func removeExpired(at time: Double) {
        if !keptByDomain {
            let before = list.count
            list.removeAll { $0.isExpired(at: time) }
            count -= before - list.count
            return
        }
        for (domain, list) in byDomain {
            let kept = list.filter { !$0.isExpired(at: time) }
            if kept.count != list.count {
                count -= list.count - kept.count
                byDomain[domain] = kept.isEmpty ? nil : kept
            }
        }
    }

    // MARK: - Retrieval (section 5.8.3)

    /// The cookies a request to `url` carries at `time`, in Cookie header order: longer
    /// paths first, then earlier creation.
    public func cookies(for url: RequestTarget, at time: Double, api: API = .http) -> [Cookie] {
        var out: [Cookie] = []
        // What every cookie is compared with, worked out once per request.
        let host = url.host, path = url.path, hostBytes = host.utf8.count
        // Worked out when a cookie first needs them: most jars' cookies are host-only.
        var lazy = (hostIsIP: Bool?.none, secure: Bool?.none)
        func goes(_ cookie: Cookie, _ lazy: inout (hostIsIP: Bool?, secure: Bool?)) -> Bool {
            // The host-only flag asks for an exact host; otherwise the host domain-matches
            // (5.1.3): an equal length only as the same host, a longer domain never, a
            // shorter one as a suffix (octets) after a dot of a host name.
            let domainBytes = cookie.domain.utf8.count
            if domainBytes == hostBytes {
                if cookie.domain != host { return false }
            } else {
                if cookie.hostOnly || domainBytes > hostBytes || !host.hasByteSuffix(cookie.domain)
                    || host.utf8[host.utf8.index(host.utf8.endIndex, offsetBy: -domainBytes - 1)] != UInt8(ascii: ".")
                {
                    return false
                }
                if lazy.hostIsIP == nil { lazy.hostIsIP = CookieStore.isIPAddress(host) }
                if lazy.hostIsIP! { return false }
            }
            if !CookieStore.pathMatches(path, cookie.path) { return false }
            if cookie.secure {
                if lazy.secure == nil { lazy.secure = url.isSecure }
                if !lazy.secure! { return false }
            }
            if cookie.httpOnly && api == .script { return false }
            return !cookie.isExpired(at: time)
        }
        func take(_ list: ArraySlice<Cookie>, _ lazy: inout (hostIsIP: Bool?, secure: Bool?)) {
            for cookie in list where goes(cookie, &lazy) {
                // Room for the whole list at the first match: most of a jar goes with most requests.
                if out.capacity == 0 { out.reserveCapacity(list.count) }
                out.append(cookie)
            }
        }
        if !keptByDomain {
            // Every cookie of a one-list jar goes with the request, already in header order
            // (most requests of most flows): the jar's own list, shared, not a copy of it.
            var all = 0
            for cookie in list {
                guard goes(cookie, &lazy) else { break }
                all += 1
            }
            if all == list.count, Self.inHeaderOrder(list) { return list }
            if all > 0 {
                out.reserveCapacity(list.count)
                out.append(contentsOf: list[..<all])
            }
            // The cookie at `all` does not go; the rest are tested one by one.
            if all < list.count { take(list[(all + 1)...], &lazy) }
        } else if byDomain.count <= 4 {
            // A jar of a few domains (most flows): reading every list costs less than
            // hashing each parent domain of the host.
            for list in byDomain.values { take(list[...], &lazy) }
        } else {
            // The request host's list, then each parent domain's, read in place.
            if let list = byDomain[host] { take(list[...], &lazy) }
            var start = host.utf8.startIndex
            while let dot = host.utf8[start...].firstIndex(of: UInt8(ascii: ".")) {
                start = host.utf8.index(after: dot)
                if let list = byDomain[String(host[start...])] { take(list[...], &lazy) }
            }
        }
        if out.count < 2 { return out }
        out.sort(by: Self.precedesInHeader)
        return out
    }

    /// 5.8.3 step 2: longer paths first; among equal paths, earlier creation first.
    static func precedesInHeader(_ x: Cookie, _ y: Cookie) -> Bool {
        let (a, b) = (x.path.utf8.count, y.path.utf8.count)
        if a != b { return a > b }
        return x.creation != y.creation ? x.creation < y.creation : x.creationOrder < y.creationOrder
    }

    /// Whether `cookies` are in Cookie header order already.
    static func inHeaderOrder(_ cookies: [Cookie]) -> Bool {
        cookies.indices.dropFirst().allSatisfy { !precedesInHeader(cookies[$0], cookies[$0 - 1]) }
    }

    /// The Cookie header value for a request, nil when no cookie applies. A nameless
    /// cookie serialises as its value alone.
    public func cookieHeader(for url: RequestTarget, at time: Double) -> String? {
        let list = cookies(for: url, at: time)
        guard !list.isEmpty else { return nil }
        return list.map { $0.name.isEmpty ? $0.value : "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// What `document.cookie` returns on a page at `url`: the non-HttpOnly cookies.
    public func documentCookie(for url: RequestTarget, at time: Double) -> String {
        cookies(for: url, at: time, api: .script).map { $0.name.isEmpty ? $0.value : "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// Cookies stored for `host` or any of its parent domains.
    private func cookies(near host: String) -> [Cookie] {
        if !keptByDomain {
            // The host itself, or a parent domain: a suffix of the host after a dot.
            return list.filter { c in
                c.domain == host || (host.utf8.count > c.domain.utf8.count && host.hasByteSuffix(c.domain)
                    && host.utf8[host.utf8.index(host.utf8.endIndex, offsetBy: -c.domain.utf8.count - 1)] == UInt8(ascii: "."))
            }
        }
        var out: [Cookie] = []
        if let list = byDomain[host] { out += list }
        var rest = Substring(host)
        while let dot = rest.firstIndex(of: ".") {
            rest = rest[rest.index(after: dot)...]
            if let list = byDomain[String(rest)] { out += list }
        }
        return out
    }

    // MARK: - Matching (sections 5.1.3 and 5.1.4)

    /// Section 5.1.3: `string` domain-matches `domain` when they are identical, or when
    /// `domain` is a suffix of `string` preceded by "." and `string` is a host name, not an IP.
    public static func domainMatches(_ string: String, _ domain: String) -> Bool {
        if string == domain { return true }
        // Octets, as the RFC compares canonicalized hosts (not Unicode characters).
        guard string.utf8.count > domain.utf8.count, string.hasByteSuffix(domain) else { return false }
        let before = string.utf8[string.utf8.index(string.utf8.endIndex, offsetBy: -domain.utf8.count - 1)]
        guard before == UInt8(ascii: ".") else { return false }
        return !isIPAddress(string)
    }

    /// Section 5.1.4: the default path is the request path up to, not including, its
    /// right-most "/"; "/" when the path is empty, does not start with "/", or has one "/".
    /// Found among the path's octets, as the RFC reads it: a search by `Character` cost a
    /// provenance walk 7 % of its time.
    public static func defaultPath(_ uriPath: String) -> String {
        let bytes = uriPath.utf8
        guard bytes.first == UInt8(ascii: "/"), let last = bytes.lastIndex(of: UInt8(ascii: "/")), last != bytes.startIndex else { return "/" }
        return String(uriPath[uriPath.startIndex..<last])
    }

    /// Section 5.1.4: the request path path-matches the cookie path when they are
    /// identical, or the cookie path is a prefix that ends in "/" or is followed by "/".
    public static func pathMatches(_ requestPath: String, _ cookiePath: String) -> Bool {
        // Most cookies are for "/", which every request path (starting with "/") matches.
        if cookiePath.utf8.count == 1, cookiePath.utf8.first == UInt8(ascii: "/"), requestPath.utf8.first == UInt8(ascii: "/") { return true }
        if requestPath == cookiePath { return true }
        guard requestPath.utf8.count > cookiePath.utf8.count, requestPath.hasBytePrefix(cookiePath) else { return false }
        if cookiePath.utf8.last == UInt8(ascii: "/") { return true }
        return requestPath.utf8[requestPath.utf8.index(requestPath.utf8.startIndex, offsetBy: cookiePath.utf8.count)] == UInt8(ascii: "/")
    }

    /// An IPv6 address (any ":"), or four runs of digits between dots: one pass over the
    /// bytes, no allocation (it runs once per request).
    static func isIPAddress(_ host: String) -> Bool {
        func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            var runs = 0, inRun = false, name = false
            for byte in bytes {
                if byte == 0x3A { return true }
                if byte >= 48 && byte <= 57 {
                    if !inRun { runs += 1 }
                    inRun = true
                } else if byte == 46 {
                    inRun = false
                } else {
                    name = true
                }
            }
            return !name && runs == 4
        }
        if let known = host.utf8.withContiguousStorageIfAvailable(scan) { return known }
        var copy = host
        return copy.withUTF8(scan)
    }

    /// An IP address is no public suffix (`Site` tells it first).
    static func isPublicSuffix(_ domain: String) -> Bool { Site.isPublicSuffix(domain) }
}
