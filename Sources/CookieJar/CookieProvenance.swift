import TrafficModel

/// Where each cookie a recorded request carries came from (docs/model.md, "Where a cookie came from").
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

        public init(name: String, value: String, kind: Kind, setBy: Int?, hop: Int?) {
            (self.name, self.value, self.kind, self.setBy, self.hop) = (name, value, kind, setBy, hop)
        }
    }

    /// A cookie event that is not on the wire, inferred at an exchange.
    public struct Inference: Sendable, Hashable {
        public enum Kind: String, Sendable, Hashable, Codable {
            case scriptSet = "script-set"
            case scriptDeleted = "script-deleted"
            case preExisting = "pre-existing"
            /// Not an event but a better guess: a cookie inferred earlier with path "/" (a
            /// guess) is this cookie, with the directory of the first request that carried
            /// it, which every request that carried it lies under (`Walker.narrowPath`).
            /// Nothing happened in the page.
            case pathNarrowed = "path-narrowed"
            /// Not an event but a better guess: a cookie inferred written by script, placed
            /// host-only on the first host that carried it, is this cookie of the site's
            /// domain: the same name and value went to another host of the site, and no
            /// request to one went without it since the write (`Walker.widenScriptSet`).
            /// Nothing happened in the page: the write is the earlier one.
            case domainWidened = "domain-widened"
            /// Not an event but a reading of the request: it carried a cookie's value from
            /// before a write seconds earlier (a script's, or a response's Set-Cookie), or
            /// went without a cookie such a write added, so its Cookie header was built before
            /// the write, the request queued or pipelined behind others (E8). What it carried
            /// or lacked of that cookie says nothing of the write; the cookie is the one it
            /// carried at its older value, or the one it lacked.
            case headerBeforeWrite = "header-before-write"
            /// Not an event of the page: the browser that recorded started afresh (a
            /// page-test tool's next run or repeat view) before a top-level load with no
            /// Referer, which went without this cookie; the cookie is gone from both jars
            /// without a deletion anyone synchronises.
            case forgotten = "forgotten"
        }
        public var kind: Kind
        public var cookie: Cookie
        /// The script wrote the cookie after this time (the latest earlier request that
        /// would have carried it and did not) and before the request; nil when no earlier
        /// request bounds it.
        public var windowStart: Double?
        /// The script wrote the cookie no later than this: another host of the site carried
        /// the same value then (`Walker.siblingCarried`); nil when none did.
        public var writtenBy: Double?

        public init(kind: Kind, cookie: Cookie, windowStart: Double?, writtenBy: Double? = nil) {
            (self.kind, self.cookie, self.windowStart, self.writtenBy) = (kind, cookie, windowStart, writtenBy)
        }
    }

    /// Per exchange (index = sequence): the cookies its request carries.
    public var sent: [[SentCookie]]
    /// Per exchange: the events inferred just before its request.
    public var inferred: [[Inference]]

    /// The cookies there from the start, in the order first seen: each pre-existing
    /// inference, except a host-only guess a later exchange showed to be its site's
    /// domain cookie (`Walker.widenPreexisting`: the same name and value on a domain its
    /// host is under; `Walker.widenGuess`: a Set-Cookie of its name for such a domain),
    /// which the wider cookie stands for; and with the path a later
    /// exchange narrowed it to (`Walker.narrowPath`).
    public var startingCookies: [Cookie] {
        var all: [Cookie] = []
        var widened: [Cookie] = []
        var narrowed: [Cookie] = []
        for events in inferred {
            for event in events {
                switch event.kind {
                case .preExisting:
                    all.append(event.cookie)
                    if !event.cookie.hostOnly { widened.append(event.cookie) }
                case .pathNarrowed: narrowed.append(event.cookie)
                case .scriptSet, .scriptDeleted, .domainWidened, .forgotten, .headerBeforeWrite: break
                }
            }
        }
        if !narrowed.isEmpty {
            for i in all.indices where all[i].path == "/" {
                if let n = narrowed.first(where: { $0.name == all[i].name && $0.domain == all[i].domain && $0.hostOnly == all[i].hostOnly && $0.value == all[i].value }) {
                    all[i].path = n.path
                }
            }
        }
        guard !widened.isEmpty else { return all }
        return all.filter { cookie in
            !cookie.hostOnly || !widened.contains { $0.name == cookie.name && $0.value == cookie.value && CookieStore.domainMatches(cookie.domain, $0.domain) }
        }
    }

    /// The Cookie header of a request as (name, value) pairs, every Cookie field joined
    /// (HTTP/2 may split the header).
    public static func requestCookies(_ headers: HeaderList) -> [(name: String, value: String)] {
        var out: [(name: String, value: String)] = []
        // The fields' bytes read in place.
        headers.forEachValue("Cookie") { bytes in
            // Room for every pair at once: a pair a semicolon, and one more.
            out.reserveCapacity(out.count + 1 + bytes.reduce(0) { $0 + ($1 == 0x3B ? 1 : 0) })
            // ASCII, the usual case, is split on bytes; other text by characters, below.
            guard bytes.contains(where: { $0 >= 0x80 }) else {
                func text(_ from: Int, _ to: Int) -> String {
                    String(decoding: UnsafeBufferPointer(rebasing: bytes[from..<to]), as: UTF8.self)
                }
                var start = 0
                while start < bytes.count {
                    var end = start
                    while end < bytes.count && bytes[end] != 0x3B { end += 1 }
                    let pair = bytes.owsTrimmed(start..<end)
                    let (a, b) = (pair.lowerBound, pair.upperBound)
                    if a < b {
                        var eq = a
                        while eq < b && bytes[eq] != 0x3D { eq += 1 }
                        out.append(eq < b ? (text(a, eq), text(eq + 1, b)) : ("", text(a, b)))
                    }
                    start = end + 1
                }
                return
            }
            for piece in String(decoding: bytes, as: UTF8.self).split(separator: ";") {
                let trimmed = piece.trimmingOWS
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

    /// Provenance already walked (index = sequence); none at all for `[]`.
    public init(sent: [[SentCookie]], inferred: [[Inference]]) {
        self.sent = sent
        self.inferred = inferred
    }

    public init(recording: Recording) {
        var walker = Walker()
        var sent: [[SentCookie]] = []
        var inferred: [[Inference]] = []
        sent.reserveCapacity(recording.exchanges.count)
        inferred.reserveCapacity(recording.exchanges.count)
        for exchange in recording.exchanges {
            // An in-memory walker keeps every request, so it never asks for older ones.
            let step = try! walker.add(exchange)
            sent.append(step.sent)
            inferred.append(step.inferred)
        }
        self.sent = sent
        self.inferred = inferred
    }

    /// What a script-set window needs of an earlier request.
    public struct PastRequest: Sendable {
        public var sequence: Int
        public var startedAt: Double
        public var host: String
        public var path: String
        public var isSecure: Bool
        public var cookies: [(name: String, value: String)]
        /// Whether the request is evidence of what it lacked (E1-E6 say when it is not).
        public var isEvidence: Bool

        public init(sequence: Int, startedAt: Double, target: RequestTarget, headers: HeaderList, isEvidence: Bool = true) {
            self.init(sequence: sequence, startedAt: startedAt, target: target, cookies: CookieProvenance.requestCookies(headers), isEvidence: isEvidence)
        }

        init(sequence: Int, startedAt: Double, target: RequestTarget, cookies: [(name: String, value: String)], isEvidence: Bool = true) {
            self.isEvidence = isEvidence
            self.sequence = sequence
            self.startedAt = startedAt
            host = target.host
            path = target.path
            isSecure = target.isSecure
            self.cookies = cookies
        }

        /// The request would have carried `cookie`, and did not.
        func lacks(_ cookie: Cookie) -> Bool {
            withUnsafePointer(to: self) { Self.lacks($0, cookie) }
        }

        /// `lacks` of the request at `request`, its fields read where they are: a search of
        /// thousands of remembered requests copied each one, a retain of its host, its path
        /// and its cookies, and most of a large recording's provenance walk went to that.
        static func lacks(_ request: UnsafePointer<PastRequest>, _ cookie: Cookie) -> Bool {
            guard request.pointee.isEvidence, !(cookie.secure && !request.pointee.isSecure) else { return false }
            guard cookie.hostOnly ? request.pointee.host == cookie.domain : CookieStore.domainMatches(request.pointee.host, cookie.domain) else { return false }
            guard CookieStore.pathMatches(request.pointee.path, cookie.path) else { return false }
            return request.pointee.cookies.withUnsafeBufferPointer { sent in !sent.contains { $0.name == cookie.name && $0.value == cookie.value } }
        }
    }

    /// Provenance one exchange at a time, in sequence order, as a streaming import stores
    /// it. Memory holds the jar, the sites seen and the last `recentCapacity` requests; a
    /// script-set window that reaches further back asks `olderRequests`, which visits the
    /// requests before a sequence newest first until the visitor returns false.
    public struct Walker {
        var jar = CookieStore()
        /// Per cookie in the jar: where it came from, and for an inferred cookie whose path
        /// is the guess "/", the directory of the first request that carried it, while
        /// every request that carried it since lies under it (the path a cookie set with no
        /// Path attribute by that page would have).
        var origin: [Cookie.Key: (kind: Kind, by: Int?, hop: Int?, under: String?)] = [:]
        var sitesSeen = Set<String>()
        /// Cookies a native response set (NC1) that no request of the page has carried
        /// since: they reach the web view's jar only after a synchronisation, so a page
        /// request that lacks one shows no deletion.
        var nativeOnly = Set<Cookie.Key>()
        /// The latest requests with a target, at most `recentCapacity`.
        var recent: RecentRequests
        /// The jar's cookies inferred there from the start as host-only at "/", by name and
        /// value, oldest first: the guesses `widenPreexisting` may widen, found without a
        /// walk through the jar. An entry whose cookie has left the jar or changed is
        /// dropped when met; all are made again from the jar when they outnumber its
        /// cookies twice over, so memory stays bounded by the jar's.
        var guesses: [NameValue: [Cookie.Key]] = [:]
        var guessCount = 0

        struct NameValue: Hashable {
            var name: String
            var value: String
        }
        /// The sequence of the first request that left `recent`, if one did.
        var forgottenBefore: Int?
        /// The first exchange, when it was a document load: until its redirect chain ends,
        /// no page of the session has run a script.
        var firstDocument: Int?
        var sawFirst = false
        /// Responses whose Set-Cookie has not reached the jar: their head had not arrived
        /// when the last request left.
        var arriving = ArrivalQueue<(Exchange, RequestTarget, Bool)>()
        /// Per cookie a script wrote or a Set-Cookie changed: what the jar held before (nil
        /// for a new cookie), and when the write happened (the time of the request that
        /// first carried a script's, the arrival of a response's), for `headerBeforeWrite`.
        var recentWrites: [Cookie.Key: (previous: (value: String, kind: Kind, by: Int?, hop: Int?)?, at: Double)] = [:]
        /// When each inferred cookie was first carried (`noteCarried`).
        var firstCarried: [Cookie.Key: Double] = [:]
        /// The sizes at which `recentWrites` and `firstCarried` are next pruned.
        var recentWritesLimit = recentWritesKept, firstCarriedLimit = firstCarriedKept
        /// Guesses a domain Set-Cookie showed to be the domain's cookie (`widenGuess`), told
        /// with the next exchange's events.
        var widenedOnArrival: [Inference] = []
        public var olderRequests: ((_ before: Int, _ visit: (PastRequest) -> Bool) throws -> Void)?
        /// Per cookie, what the forgotten requests before a sequence answered: a later
        /// search reads back only the requests forgotten since, not all of them again (a
        /// cookie every request carries would otherwise have each exchange read back every
        /// request before it).
        var olderAnswers: [LackKey: (before: Int, found: Double?)] = [:]
        /// Per host of a forgotten request, the latest forgotten request's sequence: a
        /// cookie no forgotten request would have matched reads nothing back, and a read
        /// back starts at the latest request that would have (`latestForgotten`).
        var forgottenAtHost: [String: Int] = [:]
        static let olderAnswersCapacity = 4096
        /// Writes remembered before those past `queuedHeaderWindow` are dropped.
        static let recentWritesKept = 1024

        /// What `PastRequest.lacks` looks at in a cookie.
        struct LackKey: Hashable {
            var name: String
            var value: String
            var domain: String
            var path: String
            var hostOnly: Bool
            var secure: Bool

            init(_ cookie: Cookie) {
                (name, value, domain, path, hostOnly, secure) = (cookie.name, cookie.value, cookie.domain, cookie.path, cookie.hostOnly, cookie.secure)
            }
        }

        /// `recentCapacity: nil` keeps every request (an in-memory recording).
        public init(recentCapacity: Int? = nil, olderRequests: ((_ before: Int, _ visit: (PastRequest) -> Bool) throws -> Void)? = nil) {
            recent = RecentRequests(capacity: recentCapacity ?? Int.max)
            self.olderRequests = olderRequests
        }

        /// The cookies the exchange's request carries with their origin, and the events
        /// inferred just before it; then the response's Set-Cookie enters the jar.
        public mutating func add(_ exchange: Exchange) throws -> (sent: [SentCookie], inferred: [Inference]) {
            // The responses that arrived before this request left: their Set-Cookie first.
            if !arriving.isEmpty {
                for (response, target, native) in arriving.arrived(before: exchange) { receiveSetCookies(response, target: target, native: native) }
            }
            guard let target = exchange.request.target else { return ([], []) }
            if exchange.initiator == .native {
                // NC1: native code reads NativeJar, not the page's jar: what it carries or
                // lacks says nothing of the page. Its Set-Cookie reaches the page through J1.
                arriving.hold((exchange, target, true), of: exchange)
                return ([], [])
            }
            var carried: [SentCookie] = []
            var events: [Inference] = widenedOnArrival
            widenedOnArrival = []
            let time = exchange.startedAt
            let recorded = CookieProvenance.requestCookies(exchange.request.headers)
            // A sent cookie for each pair: one allocation rather than growths.
            carried.reserveCapacity(recorded.count)
            var expected = jar.cookies(for: target, at: time)
            // A pair only a response still on its way sets shows that response had arrived
            // (the recording's clock said later): it lands now, with those expected before it.
            if !arriving.isEmpty, landShownArrivals(recorded, expected: expected) {
                expected = jar.cookies(for: target, at: time)
            }
            // E1-E6: a request that got no response, whose headers were not recorded, that
            // came from cache or was cut short says what it carried, never what it lacked:
            // it does not make its site seen, bound a script write's window, or show a
            // deletion. The site is worked out and hashed once.
            let evidence = exchange.evidenceGap == nil
            let site = target.site
            let firstToSite = evidence ? sitesSeen.insert(site).inserted : !sitesSeen.contains(site)
            if !sawFirst {
                sawFirst = true
                if exchange.initiator.isDocument { firstDocument = exchange.sequence }
            }
            // A redirect hop of the session's first document load: no page has loaded yet,
            // so no script can have written a cookie.
            let beforeAnyPage = exchange.redirect.map { $0.hop > 0 && $0.chainStart == firstDocument } == true

            // The jar's cookies the request's pairs account for, each once: two cookies of
            // one name (paths "/home" and "/") are two pairs in a browser's header.
            var accounted = IndexMarks()
            // E8: the request carried a value from before a recent script write.
            var builtBeforeWrite = false
            for (name, value) in recorded {
                if let i = expected.indices.first(where: { !accounted[$0] && expected[$0].name == name && expected[$0].value == value }) {
                    accounted.mark(i)
                    let match = expected[i]
                    if !nativeOnly.isEmpty { nativeOnly.remove(match.key) }
                    let from = origin[match.key]
                    carried.append(SentCookie(name: name, value: value, kind: from?.kind ?? .serverSet, setBy: from?.by, hop: from?.hop))
                    if let under = from?.under, !CookieStore.pathMatches(target.path, under) {
                        origin[match.key]?.under = nil  // carried outside it: no directory of its own
                    }
                    continue
                }
                if let i = expected.indices.first(where: { !accounted[$0] && expected[$0].name == name }),
                   let before = carriedFromBeforeWrite(expected[i], value: value, at: time) {
                    accounted.mark(i)
                    builtBeforeWrite = true
                    var older = expected[i]
                    older.value = value
                    events.append(Inference(kind: .headerBeforeWrite, cookie: older, windowStart: nil))
                    carried.append(SentCookie(name: name, value: value, kind: before.kind, setBy: before.by, hop: before.hop))
                    continue
                }
                if let widened = try widenScriptSet(name: name, value: value, to: target, before: exchange.sequence) {
                    events.append(Inference(kind: .domainWidened, cookie: widened.cookie, windowStart: nil))
                    carried.append(SentCookie(name: name, value: value, kind: .scriptSet, setBy: widened.firstSeen, hop: nil))
                    continue
                }
                if let widened = try widenPreexisting(name: name, value: value, to: target, before: exchange.sequence) {
                    events.append(Inference(kind: .preExisting, cookie: widened.cookie, windowStart: nil))
                    carried.append(SentCookie(name: name, value: value, kind: .preExisting, setBy: widened.firstSeen, hop: nil))
                    continue
                }
                let (inference, sent) = try inferUnexplained(
                    name: name, value: value, exchange: exchange, target: target, expected: expected, accounted: &accounted, firstToSite: firstToSite, beforeAnyPage: beforeAnyPage)
                events.append(inference)
                carried.append(sent)
            }
            inferLacked(exchange: exchange, target: target, expected: expected, accounted: accounted, recorded: recorded, builtBeforeWrite: builtBeforeWrite, evidence: evidence, into: &events)
            settleShortWrites(&events, on: target)
            arriving.hold((exchange, target, false), of: exchange)
            if evidence { remember(PastRequest(sequence: exchange.sequence, startedAt: time, target: target, cookies: recorded)) }
            return (carried, events)
        }

        /// A pair of the request the jar does not explain, inferred: written by script, or
        /// there from the start; the jar and the write's notes learn it.
        @inline(__always) mutating func inferUnexplained(
            name: String, value: String, exchange: Exchange, target: RequestTarget, expected: [Cookie], accounted: inout IndexMarks, firstToSite: Bool, beforeAnyPage: Bool
        ) throws -> (Inference, SentCookie) {
            let time = exchange.startedAt
            // Not explained by the jar: written by script, or there from the start.
            // The inferred cookie is host-only on the request host, path "/", session.
            // Written by script only where the recording shows it was not there before:
            // an earlier request that would have carried it went without it (the
            // write's window). Without one (the first request to its site, or to its
            // host: another host of the site would not have been sent a cookie of this
            // one) nothing shows it new: there from the start. A script of the page's
            // site cannot write another host's host-only cookie, and a third party's
            // cookie first carried to it has no writer the recording shows.
            // Another value of a cookie the jar holds is a write on any request after
            // the site's first.
            let written = time - CookieProvenance.scriptLead
            var cookie = Cookie(name: name, value: value, domain: target.host, hostOnly: true, path: "/", creation: written)
            let replacing = expected.indices.first(where: { !accounted[$0] && expected[$0].name == name })
            let shownNew = firstToSite || replacing != nil ? nil : try windowStart(for: cookie, before: exchange.sequence)
            var kind: Inference.Kind = !firstToSite && (replacing != nil || shownNew != nil) ? .scriptSet : .preExisting
            var under: String? = CookieStore.defaultPath(target.path)
            if kind == .scriptSet, beforeAnyPage, let start = thereFromTheStart(cookie, under: under!) {
                cookie = start
                kind = .preExisting
            } else if let r = replacing {
                // A script overwrote a cookie the jar holds: keep its scope.
                accounted.mark(r)
                let replaced = expected[r]
                cookie.domain = replaced.domain
                cookie.hostOnly = replaced.hostOnly
                cookie.path = replaced.path
                cookie.creation = replaced.creation
                under = origin[replaced.key]?.under.flatMap { CookieStore.pathMatches(target.path, $0) ? $0 : nil }
            }
            if kind == .scriptSet {
                let previous = replacing.map { expected[$0] }.map { old in
                    (value: old.value, kind: origin[old.key]?.kind ?? .serverSet, by: origin[old.key]?.by, hop: origin[old.key]?.hop)
                }
                noteWrite(cookie.key, replacing: previous, at: time)
            }
            jar.set(cookie, at: written)
            let window = kind == .scriptSet ? try windowStart(for: cookie, before: exchange.sequence) : nil
            let writtenBy = kind == .scriptSet ? siblingCarried(name: name, value: value, on: target).flatMap { $0 < time ? $0 : nil } : nil
            let inference = Inference(kind: kind, cookie: cookie, windowStart: window, writtenBy: writtenBy)
            noteCarried(cookie.key, at: time)
            let provenance: Kind = kind == .preExisting ? .preExisting : .scriptSet
            origin[cookie.key] = (provenance, exchange.sequence, nil, cookie.path == "/" ? under : nil)
            noteGuess(cookie)
            return (inference, SentCookie(name: name, value: value, kind: provenance, setBy: exchange.sequence, hop: nil))
        }

        /// The jar's cookies the request lacks: deleted by script, a path guessed too wide,
        /// a header built before a write, or a browser started afresh.
        @inline(__always) mutating func inferLacked(
            exchange: Exchange, target: RequestTarget, expected: [Cookie], accounted: IndexMarks, recorded: [(name: String, value: String)], builtBeforeWrite: Bool, evidence: Bool,
            into events: inout [Inference]
        ) {
            let time = exchange.startedAt
            // A cookie the jar would send that the request lacks was deleted by script, unless
            // its path was a guess that a narrower one explains. Not on a third-party request:
            // the recording engine's third-party cookie policy (WebKit's full third-party
            // cookie blocking, a web view's page on the app's own scheme, SameSite) may have
            // kept it off, and a page's script cannot delete another site's cookie.
            let lackShowsDeletion = evidence && !exchange.frame.thirdParty
            // A main-frame document load after the first, not a redirect hop, with no
            // Referer: the browser loaded it afresh (an address typed, a test tool's next run).
            let startsAfresh = exchange.sequence > 0 && exchange.initiator.isDocument && exchange.frame.kind == .main
                && (exchange.redirect?.hop ?? 0) == 0 && exchange.request.headers.firstValue("Referer", { _ in true }) == nil
            // Nor of an HttpOnly cookie: `document.cookie` can neither see nor remove one.
            // Nor of a cookie whose name the request carries: another copy of it went (a
            // guess of its scope that a wider one replaced), so it was not deleted.
            // Nor, on a request whose header was built before a script's write (E8), of a
            // cookie that write or one as recent added.
            for (i, cookie) in expected.enumerated() where lackShowsDeletion && !accounted[i] && !cookie.httpOnly && (nativeOnly.isEmpty || !nativeOnly.contains(cookie.key))
                && !recorded.contains(where: { $0.name == cookie.name }) {
                if builtBeforeWrite && writtenRecently(cookie, at: time) {
                    // Its absence is from before the write too.
                    events.append(Inference(kind: .headerBeforeWrite, cookie: cookie, windowStart: nil))
                    continue
                }
                if let narrowed = narrowPath(of: cookie, lackedBy: target) {
                    events.append(Inference(kind: .pathNarrowed, cookie: narrowed, windowStart: nil))
                    continue
                }
                jar.remove(cookie.key)
                // A load typed or started afresh lacks what a restarted browser dropped
                // (a page-test tool's next run or repeat view), no script's deletion.
                events.append(Inference(kind: startsAfresh ? .forgotten : .scriptDeleted, cookie: cookie, windowStart: nil))
            }
            // A fresh load that carried no cookie at all where the jar held some: a fresh
            // profile (a page-test tool's first view of its next run). Every cookie is gone.
            if startsAfresh, lackShowsDeletion, recorded.isEmpty, !expected.isEmpty {
                var rest: [Cookie] = []
                jar.forEachCookie { rest.append($0) }
                for cookie in rest.sorted(by: { ($0.creationOrder, $0.key) < ($1.creationOrder, $1.key) }) {
                    jar.remove(cookie.key)
                    origin[cookie.key] = nil
                    events.append(Inference(kind: .forgotten, cookie: cookie, windowStart: nil))
                }
            }
        }

        /// Lands every held response a carried pair shows arrived: one whose Set-Cookie
        /// gives the pair the jar lacks. Whether any landed.
        mutating func landShownArrivals(_ recorded: [(name: String, value: String)], expected: [Cookie]) -> Bool {
            var landed = false
            for (name, value) in recorded where !expected.contains(where: { $0.name == name && $0.value == value }) {
                guard let shown = arriving.first(where: { Self.sets($0.0, name: name, value: value) }) else { continue }
                for (response, target, native) in arriving.arrived(through: shown.0) { receiveSetCookies(response, target: target, native: native) }
                landed = true
            }
            return landed
        }

        /// Whether a Set-Cookie of `exchange`'s response gives `name` the value `value`.
        static func sets(_ exchange: Exchange, name: String, value: String) -> Bool {
            var found = false
            exchange.response.headers.forEachValue("Set-Cookie") { header in
                guard !found else { return }
                let pair = String(decoding: header.prefix { $0 != UInt8(ascii: ";") }, as: UTF8.self)
                guard let eq = pair.firstIndex(of: "=") else { return }
                found = pair[..<eq].trimmingCharacters(in: .whitespaces) == name && pair[pair.index(after: eq)...].trimmingCharacters(in: .whitespaces) == value
            }
            return found
        }

        /// The response's Set-Cookie lands in the jar when its head arrives (held in
        /// `arriving` until then); a response served from cache sets nothing (E3).
        mutating func receiveSetCookies(_ exchange: Exchange, target: RequestTarget, native: Bool) {
            guard exchange.evidenceGap != .fromCache else { return }
            // Each field parsed where it lies in the list, not first made a string.
            let (time, sequence, hop) = (exchange.responseArrivedAt, exchange.sequence, exchange.redirect?.hop)
            exchange.response.headers.forEachValue("Set-Cookie") { header in
                guard let parsed = SetCookie.parse(bytes: header) else { return }
                let (result, replaced) = jar.storeReplacing(parsed, from: target, at: time, api: .http)
                switch result {
                case .stored(let cookie):
                    let key = cookie.key
                    var previous = replaced.flatMap { old in old.value == cookie.value ? nil : (value: old.value, kind: origin[key]?.kind ?? .serverSet, by: origin[key]?.by, hop: origin[key]?.hop) }
                    origin[key] = (.serverSet, sequence, hop, nil)
                    if native { nativeOnly.insert(key) } else if !nativeOnly.isEmpty { nativeOnly.remove(key) }
                    if !cookie.hostOnly, let guess = widenGuess(of: cookie.name, on: target.host, to: cookie.domain), previous == nil, guess.value != cookie.value {
                        previous = guess
                    }
                    if let previous { noteWrite(key, replacing: previous, at: time) }
                case .deleted(let key):
                    widenGuess(of: key.name, on: target.host, to: key.domain)
                case .ignored: break
                }
            }
        }

        /// Remembers a write of `key` at `time` (`recentWrites`).
        mutating func noteWrite(_ key: Cookie.Key, replacing previous: (value: String, kind: Kind, by: Int?, hop: Int?)?, at time: Double) {
            // Writes past the window tell nothing more: memory stays bounded. A burst of
            // more writes than that within the window raises the bar, so the filter runs
            // once per doubling, not on every write.
            if recentWrites.count >= recentWritesLimit {
                recentWrites = recentWrites.filter { time - $0.value.at <= CookieProvenance.queuedHeaderWindow }
                recentWritesLimit = max(Self.recentWritesKept, 2 * recentWrites.count)
            }
            recentWrites[key] = (previous, time)
        }

        /// The origin of the value a write replaced (a script's, or a Set-Cookie that
        /// arrived), when the request carried that value within `queuedHeaderWindow` of the
        /// write: its header was built before it.
        func carriedFromBeforeWrite(_ cookie: Cookie, value: String, at time: Double) -> (value: String, kind: Kind, by: Int?, hop: Int?)? {
            guard let write = recentWrites[cookie.key], let before = write.previous, before.value == value,
                  time - write.at <= CookieProvenance.queuedHeaderWindow
            else { return nil }
            return before
        }

        /// Whether a script or a Set-Cookie wrote the cookie within `queuedHeaderWindow`
        /// before `time`.
        func writtenRecently(_ cookie: Cookie, at time: Double) -> Bool {
            recentWrites[cookie.key].map { time - $0.at <= CookieProvenance.queuedHeaderWindow } == true
        }

        /// A cookie guessed there from the start as host-only on `host`, where the server
        /// now sets or deletes a cookie of the same name for a domain over that host: the
        /// guess was that domain's cookie (a browser holding both would go on sending the
        /// host-only one beside it, or after its deletion, and the recordings show it does
        /// not). The guess leaves the jar; the cookie there from the start is the domain's.
        /// Returns the guess's value and origin, nil when there was none.
        @discardableResult
        mutating func widenGuess(of name: String, on host: String, to domain: String) -> (value: String, kind: Kind, by: Int?, hop: Int?)? {
            // Only a guess can be widened: none held, nothing to look up.
            guard guessCount > 0 else { return nil }
            let key = Cookie.Key(name: name, domain: host, path: "/")
            guard domain != host, let guess = jar.cookie(for: key), guess.hostOnly, let from = origin[key], from.kind == .preExisting,
                  CookieStore.domainMatches(host, domain)
            else { return nil }
            var widened = guess
            widened.domain = domain
            widened.hostOnly = false
            origin[key] = nil
            _ = jar.remove(key)
            widenedOnArrival.append(Inference(kind: .preExisting, cookie: widened, windowStart: nil))
            return (guess.value, from.kind, from.by, from.hop)
        }

        /// A cookie there from the start was placed host-only on the first host that
        /// carried it: its scope was a guess. The same name and value carried to another
        /// host of the same site shows one cookie of the site's domain (a session cookie on
        /// `.shop.example` read by `www.` and `api.`), not a script write on the second
        /// host just before its request. The guess is replaced by the domain cookie, still
        /// there from the start; nil when no guess fits, or when an earlier request that is
        /// evidence went to a host of that domain without the cookie: a domain cookie there
        /// from the start would have gone with it (requests the walker has forgotten are read
        /// back, as for a write's window).
        mutating func widenPreexisting(name: String, value: String, to target: RequestTarget, before sequence: Int) throws -> (cookie: Cookie, firstSeen: Int?)? {
            let site = target.site
            guard site != target.host, !CookieStore.isPublicSuffix(site) else { return nil }
            let named = NameValue(name: name, value: value)
            guard let candidates = guesses[named] else { return nil }
            var guess: Cookie?
            var kept: [Cookie.Key] = []
            for key in candidates {
                guard let cookie = jar.cookie(for: key), cookie.value == value, cookie.hostOnly, cookie.path == "/",
                    let kind = origin[key]?.kind, kind != .serverSet
                else { continue }
                // Script writes stay for `widenScriptSet` and `siblingCarried`.
                kept.append(key)
                if guess == nil, kind == .preExisting, CookieStore.domainMatches(cookie.domain, site) { guess = cookie }
            }
            guessCount -= candidates.count - kept.count
            guesses[named] = kept.isEmpty ? nil : kept
            guard let guessed = guess else { return nil }
            var cookie = guessed
            cookie.domain = site
            cookie.hostOnly = false
            if try windowStart(for: cookie, before: sequence) != nil { return nil }
            let firstSeen = origin.removeValue(forKey: guessed.key)?.by
            _ = jar.remove(guessed.key)
            jar.set(cookie, at: cookie.creation)
            origin[cookie.key] = (.preExisting, firstSeen, nil, nil)
            return (cookie, firstSeen)
        }

        /// The same for a cookie inferred written by script: the same name and value carried
        /// to another host of the site shows the site's domain cookie the script wrote
        /// (analytics scripts write to the registrable domain), not a second write on this
        /// host. Widened only when no remembered request to a host of the domain lacked it
        /// after the write; the write keeps its time.
        mutating func widenScriptSet(name: String, value: String, to target: RequestTarget, before sequence: Int) throws -> (cookie: Cookie, firstSeen: Int?)? {
            let site = target.site
            guard site != target.host, !CookieStore.isPublicSuffix(site), let candidates = guesses[NameValue(name: name, value: value)] else { return nil }
            for key in candidates {
                guard let guessed = jar.cookie(for: key), guessed.value == value, guessed.hostOnly, guessed.path == "/",
                    origin[key]?.kind == .scriptSet, guessed.domain != target.host, CookieStore.domainMatches(guessed.domain, site)
                else { continue }
                var cookie = guessed
                cookie.domain = site
                cookie.hostOnly = false
                if let lacked = try windowStart(for: cookie, before: sequence), lacked >= guessed.creation { return nil }
                let from = origin[guessed.key]
                // Every host-only guess of this value under the site was this one cookie.
                for other in candidates {
                    guard let copy = jar.cookie(for: other), copy.value == value, copy.hostOnly, copy.path == "/",
                        origin[other]?.kind == .scriptSet, CookieStore.domainMatches(copy.domain, site)
                    else { continue }
                    origin[other] = nil
                    _ = jar.remove(other)
                }
                jar.set(cookie, at: cookie.creation)
                origin[cookie.key] = (.scriptSet, from?.by, nil, nil)
                return (cookie, from?.by)
            }
            return nil
        }

        /// When another host of `target`'s site first carried this name and value as a
        /// cookie the jar could not explain (inferred there from the start, or written by
        /// script), nil when none did. A value long enough to be a fingerprint (an analytics
        /// script's visitor and timestamp fields) carried to a second host is that one write
        /// reaching it, however late the recording first shows it there: the write happened
        /// no later than the first host carried it (requests to this host that went without
        /// it in between, or with an older copy, had headers the recording cannot explain,
        /// not a later write).
        func siblingCarried(name: String, value: String, on target: RequestTarget, fingerprint: Bool = true) -> Double? {
            guard !fingerprint || Self.isFingerprint(name: name, value: value), guessCount > 0, let candidates = guesses[NameValue(name: name, value: value)] else { return nil }
            let site = target.site
            var earliest: Double?
            for key in candidates where key.domain != target.host && CookieStore.domainMatches(key.domain, site) {
                if let at = firstCarried[key], at < earliest ?? .infinity { earliest = at }
            }
            return earliest
        }

        /// A short value (GA's `__utmt=1`) is no fingerprint on its own, but one the same
        /// request of another host carried first beside this request's fingerprinted writes
        /// came with them: it was written no later either.
        func settleShortWrites(_ events: inout [Inference], on target: RequestTarget) {
            guard let batch = events.lazy.compactMap(\.writtenBy).min() else { return }
            for k in events.indices where events[k].kind == .scriptSet && events[k].writtenBy == nil {
                let cookie = events[k].cookie
                if siblingCarried(name: cookie.name, value: cookie.value, on: target, fingerprint: false) == batch { events[k].writtenBy = batch }
            }
        }

        /// Remembers when an inferred cookie was first carried (`siblingCarried`).
        mutating func noteCarried(_ key: Cookie.Key, at time: Double) {
            if firstCarried.count >= firstCarriedLimit {
                // Only what a guess still names can be asked for; as for `recentWrites`, the
                // bar rises with what stays.
                let named = Set(guesses.values.joined())
                firstCarried = firstCarried.filter { named.contains($0.key) }
                firstCarriedLimit = max(Self.firstCarriedKept, 2 * firstCarried.count)
            }
            if firstCarried[key] == nil { firstCarried[key] = time }
        }

        /// The shortest cookie value taken as one write's fingerprint (`siblingCarried`).
        static let fingerprintLength = 8
        /// The shortest name and value together taken as one, when the value is shorter: a
        /// site's own cookie (`circgroup=digi2`), not a flag any script sets (`__utmt=1`).
        static let namedFingerprintLength = 12

        static func isFingerprint(name: String, value: String) -> Bool {
            value.utf8.count >= fingerprintLength || name.utf8.count + value.utf8.count >= namedFingerprintLength
        }
        /// Inferred cookies remembered before those no guess names are dropped.
        static let firstCarriedKept = 4096

        /// Notes a cookie inferred there from the start, a guess `widenPreexisting` may widen.
        mutating func noteGuess(_ cookie: Cookie) {
            guard cookie.hostOnly, cookie.path == "/" else { return }
            guesses[NameValue(name: cookie.name, value: cookie.value), default: []].append(cookie.key)
            guessCount += 1
            guard guessCount > 2 * max(jar.count, 512) else { return }
            // Made again from the jar, oldest first.
            var live: [Cookie] = []
            jar.forEachCookie { c in
                if c.hostOnly, c.path == "/", let kind = origin[c.key]?.kind, kind != .serverSet { live.append(c) }
            }
            live.sort { ($0.creationOrder, $0.key) < ($1.creationOrder, $1.key) }
            guesses = [:]
            for c in live { guesses[NameValue(name: c.name, value: c.value), default: []].append(c.key) }
            guessCount = live.count
        }

        /// A cookie inferred with the guessed path "/" that a request to its host lacks was
        /// not deleted when every request that carried it lies under the first one's
        /// directory and this request does not: it is that directory's cookie (a
        /// Path=/home cookie read by `/home/...` and never sent to `/Common/...`, pcap2har's
        /// `out-of-order`). The guess is replaced by the narrower cookie, which keeps its
        /// origin; nil when the request lies under the directory too, a request outside it
        /// carried the cookie, or the path was not a guess.
        mutating func narrowPath(of cookie: Cookie, lackedBy target: RequestTarget) -> Cookie? {
            guard cookie.path == "/", let from = origin[cookie.key], from.kind != .serverSet,
                let under = from.under, under != "/", !CookieStore.pathMatches(target.path, under)
            else { return nil }
            var narrowed = cookie
            narrowed.path = under
            origin[cookie.key] = nil
            _ = jar.remove(cookie.key)
            jar.set(narrowed, at: narrowed.creation)
            origin[narrowed.key] = (from.kind, from.by, from.hop, nil)
            return narrowed
        }

        /// A cookie first carried by a redirect hop of the session's first document load was
        /// there from the start, since no page has run a script yet: scoped at "/" when no
        /// earlier request to its host went without it, else at the hop's directory when
        /// that explains them (a Path=/home cookie not sent to the `/` that redirected to
        /// `/home/...`, pcap2har's `out-of-order`); nil when neither does.
        func thereFromTheStart(_ cookie: Cookie, under directory: String) -> Cookie? {
            if !recent.anyLacks(cookie) { return cookie }
            guard directory != "/" else { return nil }
            var scoped = cookie
            scoped.path = directory
            return recent.anyLacks(scoped) ? nil : scoped
        }

        mutating func remember(_ request: consuming PastRequest) {
            guard let forgotten = recent.append(request) else { return }
            forgottenBefore = forgotten.sequence + 1
            forgottenAtHost[forgotten.host] = forgotten.sequence
        }

        /// The sequence of the latest forgotten request to a host `cookie` matches: its
        /// host, or for a domain cookie any host under the domain. Asked only when a script
        /// write's window reaches past `recent`; every request that leaves `recent` updates
        /// one entry, not one per domain its host is under.
        func latestForgotten(matching cookie: Cookie) -> Int? {
            if cookie.hostOnly { return forgottenAtHost[cookie.domain] }
            var latest: Int?
            for (host, sequence) in forgottenAtHost where sequence > (latest ?? -1) && CookieStore.domainMatches(host, cookie.domain) {
                latest = sequence
            }
            return latest
        }

        /// The start of the window in which a script wrote `cookie`: the start of the latest
        /// earlier request the cookie would have matched that did not carry it.
        mutating func windowStart(for cookie: Cookie, before sequence: Int) throws -> Double? {
            if let latest = recent.latest(lacking: cookie, before: sequence) { return latest.startedAt }
            guard forgottenBefore != nil, let olderRequests else { return nil }
            // Only forgotten requests to a host the cookie matches can lack it.
            guard let latest = latestForgotten(matching: cookie) else { return nil }
            let bound = latest + 1
            let key = LackKey(cookie)
            // The requests before `known.before` were searched already.
            let known = olderAnswers[key]
            if let known, known.before >= bound { return known.found }
            var found: Double?
            var foundSince = false
            try olderRequests(bound) { request in
                if let known, request.sequence < known.before { return false }
                if request.lacks(cookie) {
                    found = request.startedAt
                    foundSince = true
                    return false
                }
                return true
            }
            if !foundSince { found = known?.found }
            if olderAnswers.count >= Self.olderAnswersCapacity { olderAnswers.removeAll(keepingCapacity: true) }
            olderAnswers[key] = (bound, found)
            return found
        }
    }

    /// How long before the request an inferred script write is placed: "just before".
    public static let scriptLead: Double = 0.001

    /// How long after a script's write a request carrying the value from before it is
    /// read as one whose header was built before the write (E8), not as a script putting
    /// the old value back: pcap2har's out-of-order.pcap, an Android browser on a slow
    /// link, sent requests queued 1.9 and 2.9 s before with the old values.
    public static let queuedHeaderWindow: Double = 3
}
