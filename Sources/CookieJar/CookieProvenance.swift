import TrafficModel

/// Where each cookie a recorded request carries came from (BEHAVIOUR.md section 8).
///
/// Only `Set-Cookie` is on the wire. Walking the flow in order with an RFC 6265bis jar fed
/// by every `Set-Cookie` (redirect hops included), a cookie the request carries that the
/// jar cannot explain was written by script, or was there from the start when the request
/// is the first one to its site; a cookie the jar would send that the request lacks was
/// deleted by script.
public struct CookieProvenance: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, Codable {
        case serverSet = "server-set"
        case scriptSet = "script-set"
        case preExisting = "pre-existing"
    }

    /// A cookie a recorded request carries, and where it came from.
    public struct SentCookie: Sendable, Hashable {
        public var name: String
        public var value: String
        public var kind: Kind
        /// The exchange whose response set it (server-set), or that first carried it.
        public var setBy: Int?
        /// The redirect hop of that exchange, when it was one.
        public var hop: Int?
    }

    /// A cookie event that is not on the wire, inferred at an exchange.
    public struct Inference: Sendable, Hashable {
        public enum Kind: String, Sendable, Hashable, Codable {
            case scriptSet = "script-set"
            case scriptDeleted = "script-deleted"
            case preExisting = "pre-existing"
        }
        public var kind: Kind
        public var cookie: Cookie
        /// The script wrote the cookie after this time (the latest earlier request that
        /// would have carried it and did not) and before the request; nil when no earlier
        /// request bounds it.
        public var windowStart: Double?
    }

    /// Per exchange (index = sequence): the cookies its request carries.
    public var sent: [[SentCookie]]
    /// Per exchange: the events inferred just before its request.
    public var inferred: [[Inference]]

    /// The Cookie header of a request as (name, value) pairs, every Cookie field joined
    /// (HTTP/2 may split the header).
    public static func requestCookies(_ headers: [HeaderField]) -> [(name: String, value: String)] {
        var out: [(String, String)] = []
        for header in headers.all("Cookie") {
            for piece in header.split(separator: ";") {
                let trimmed = trimWSP(piece)
                if trimmed.isEmpty { continue }
                if let eq = trimmed.firstIndex(of: "=") {
                    out.append((String(trimmed[trimmed.startIndex..<eq]), String(trimmed[trimmed.index(after: eq)...])))
                } else {
                    out.append(("", trimmed))
                }
            }
        }
        return out
    }

    public init(recording: Recording) {
        var jar = CookieStore()
        var origin: [Cookie.Key: (kind: Kind, by: Int?, hop: Int?)] = [:]
        var sitesSeen = Set<String>()
        var sent: [[SentCookie]] = []
        var inferred: [[Inference]] = []
        sent.reserveCapacity(recording.exchanges.count)
        inferred.reserveCapacity(recording.exchanges.count)
        let exchanges = recording.exchanges

        for exchange in exchanges {
            var carried: [SentCookie] = []
            var events: [Inference] = []
            guard let target = exchange.request.target else {
                sent.append([])
                inferred.append([])
                continue
            }
            let time = exchange.startedAt
            let recorded = Self.requestCookies(exchange.request.headers)
            let expected = jar.cookies(for: target, at: time)
            let firstToSite = !sitesSeen.contains(target.site)
            sitesSeen.insert(target.site)

            for (name, value) in recorded {
                if let match = expected.first(where: { $0.name == name && $0.value == value }) {
                    let from = origin[match.key]
                    carried.append(SentCookie(name: name, value: value, kind: from?.kind ?? .serverSet, setBy: from?.by, hop: from?.hop))
                    continue
                }
                // Not explained by the jar: written by script, or there from the start.
                // The inferred cookie is host-only on the request host, path "/", session.
                let kind: Inference.Kind = firstToSite ? .preExisting : .scriptSet
                let written = time - Self.scriptLead
                var cookie = Cookie(name: name, value: value, domain: target.host, hostOnly: true, path: "/", creation: written)
                if let replaced = expected.first(where: { $0.name == name }) {
                    // A script overwrote a cookie the jar holds: keep its scope.
                    cookie.domain = replaced.domain
                    cookie.hostOnly = replaced.hostOnly
                    cookie.path = replaced.path
                    cookie.creation = replaced.creation
                }
                jar.set(cookie, at: written)
                let window = kind == .scriptSet ? Self.windowStart(for: cookie, before: exchange.sequence, in: exchanges) : nil
                events.append(Inference(kind: kind, cookie: cookie, windowStart: window))
                let provenance: Kind = kind == .preExisting ? .preExisting : .scriptSet
                origin[cookie.key] = (provenance, exchange.sequence, nil)
                carried.append(SentCookie(name: name, value: value, kind: provenance, setBy: exchange.sequence, hop: nil))
            }
            // A cookie the jar would send that the request lacks was deleted by script.
            for cookie in expected where !recorded.contains(where: { $0.name == cookie.name }) {
                jar.remove(cookie.key)
                events.append(Inference(kind: .scriptDeleted, cookie: cookie, windowStart: nil))
            }
            // The response's Set-Cookie lands in the jar when the response ends.
            for header in exchange.response.headers.all("Set-Cookie") {
                if case .stored(let cookie) = jar.receive(header, from: target, at: exchange.endedAt) {
                    origin[cookie.key] = (.serverSet, exchange.sequence, exchange.redirect?.hop)
                }
            }
            sent.append(carried)
            inferred.append(events)
        }
        self.sent = sent
        self.inferred = inferred
    }

    /// How long before the request an inferred script write is placed: "just before".
    public static let scriptLead: Double = 0.001

    /// The start of the window in which a script wrote `cookie`: the start of the latest
    /// earlier request the cookie would have matched that did not carry it.
    static func windowStart(for cookie: Cookie, before sequence: Int, in exchanges: [Exchange]) -> Double? {
        var i = sequence - 1
        while i >= 0 {
            let e = exchanges[i]
            if let t = e.request.target, (cookie.hostOnly ? t.host == cookie.domain : CookieStore.domainMatches(t.host, cookie.domain)),
                CookieStore.pathMatches(t.path, cookie.path), !(cookie.secure && !t.isSecure)
            {
                if !requestCookies(e.request.headers).contains(where: { $0.name == cookie.name && $0.value == cookie.value }) {
                    return e.startedAt
                }
            }
            i -= 1
        }
        return nil
    }
}
