import CookieJar
import TrafficModel

/// NativeJar and WebJar with the synchronisations in flight between them
/// (J1-J3, docs/model.md, "The jars and the page"). Every cookie remembers the rules by which it reached its jar.
struct JarPair {
    /// How a cookie reached a jar: the rules on its way, and for a script write, when
    /// it was written and the earliest it could have been written.
    struct Origin: Hashable {
        typealias Source = CookieNote
        var rules: [RuleID]
        var source: Source
        var scriptWindowStart: Double?
        var writtenAt: Double?
        /// Set by a redirect (3xx) response.
        var fromRedirect = false
        var isScriptWrite: Bool { writtenAt != nil }

        init(rules: [RuleID], source: Source, scriptWindowStart: Double? = nil, writtenAt: Double? = nil) {
            self.rules = rules
            self.source = source
            self.scriptWindowStart = scriptWindowStart
            self.writtenAt = writtenAt
        }

        /// Set-Cookie on exchange `setBy`, a redirect's when `redirectStatus` is given.
        init(rules: [RuleID], setBy: Int, redirectStatus: Int?) {
            self.init(rules: rules, source: .setCookie(exchange: setBy, redirectStatus: redirectStatus))
        }

        /// A `document.cookie` write, after `scriptWindowStart` when known, placed at `writtenAt`.
        init(rules: [RuleID], scriptWindowStart: Double?, writtenAt: Double) {
            self.init(rules: rules, source: .scriptWrite, scriptWindowStart: scriptWindowStart, writtenAt: writtenAt)
        }

        /// A deletion by script at `deletedByScriptAt`.
        init(rules: [RuleID], deletedByScriptAt: Double) {
            self.init(rules: rules, source: .scriptDeletion, writtenAt: deletedByScriptAt)
        }

        /// Written by a document-start user script.
        init(rules: [RuleID], injectedAtDocumentStart: Bool) {
            self.init(rules: rules, source: .documentStartInjection)
        }

        var what: String { source.text }
    }

    /// A change on its way from one jar to the other.
    struct PendingSync {
        var due: Double
        var to: JarSide
        var cookie: Cookie
        var isDeletion: Bool
        var rule: RuleID
        var origin: Origin
    }

    var native = CookieStore()
    var web = CookieStore()
    /// How the jars exchange cookies: the system's J1-J3, or what replaces it (RNW2, TAU3).
    var link: JarLink = .system
    /// Changes to a cookie, by name, that the link never carried to a jar, and the rule.
    private(set) var heldBack = SmallMap<String, RuleID>()
    /// Every change to either jar, in the order it happened: the jar timelines of reports.
    private(set) var events: [JarEvent] = []
    /// Adds to the jar timeline, with room for a usual flow's changes from the first.
    private mutating func record(_ event: consuming JarEvent) {
        if events.capacity == 0 { events.reserveCapacity(8) }
        events.append(event)
    }

    /// How each cookie reached its jar: a cookie's `tag` is its origin's place here, plus
    /// one. The jar carries the tag with the cookie, so a cookie and its origin are stored,
    /// replaced and removed together, without a table keyed by name, domain and path.
    private var origins: [Origin] = []
    private(set) var pending: [PendingSync] = []

    subscript(side: JarSide) -> CookieStore {
        get { side == .native ? native : web }
        // In place: a change through a copy would copy the jar's storage each time.
        _modify {
            if side == .native { yield &native } else { yield &web }
        }
    }

    /// The cookies a request to `url` carries from `side`'s jar at `time`, read in place: the
    /// subscript's getter returns a copy of the jar, a retain of each of its parts.
    @inline(__always) func cookies(in side: JarSide, for url: RequestTarget, at time: Double) -> [Cookie] {
        side == .native ? native.cookies(for: url, at: time) : web.cookies(for: url, at: time)
    }

    /// How `cookie`, read from one of the jars, reached it.
    func origin(of cookie: Cookie) -> Origin? { cookie.tag == 0 ? nil : origins[Int(cookie.tag) - 1] }

    func origin(of key: Cookie.Key, in side: JarSide) -> Origin? { self[side].cookie(for: key).flatMap(origin(of:)) }

    /// The tag of a new origin, for the cookie it describes.
    private mutating func tag(_ origin: consuming Origin) -> UInt32 {
        if origins.capacity == 0 { origins.reserveCapacity(8) }
        origins.append(origin)
        return UInt32(origins.count)
    }

    /// `cookie` carrying `origin`.
    private mutating func tagged(_ cookie: consuming Cookie, _ origin: consuming Origin) -> Cookie {
        var cookie = cookie
        cookie.tag = tag(origin)
        return cookie
    }

    /// The path of a cookie inferred with the guess "/" replaced by the narrower one the
    /// recording showed (`CookieProvenance.Inference.Kind.pathNarrowed`), in both jars and
    /// on its way between them, origin and creation kept. Nothing happened in the page, so
    /// the timeline shows nothing.
    mutating func narrowPath(to cookie: Cookie) {
        let guessed = Cookie.Key(name: cookie.name, domain: cookie.domain, path: "/")
        for side in [JarSide.native, .web] {
            if var held = self[side].remove(guessed) {
                held.path = cookie.path
                self[side].set(held, at: held.creation)
            }
        }
        for i in pending.indices where pending[i].cookie.key == guessed { pending[i].cookie.path = cookie.path }
    }

    /// A host-only cookie inferred from the first host that carried it is `cookie`, its
    /// site's domain cookie (`CookieProvenance.Inference.Kind.domainWidened`): re-scoped
    /// in both jars and in pending synchronisations, keeping its creation.
    mutating func widenDomain(to cookie: Cookie) {
        for side in [JarSide.native, .web] {
            // Every host-only copy of the value under the domain is the one cookie.
            var copies: [Cookie] = []
            self[side].forEachCookie { c in
                if c.hostOnly, c.name == cookie.name, c.path == cookie.path, c.value == cookie.value, CookieStore.domainMatches(c.domain, cookie.domain) { copies.append(c) }
            }
            guard var widened = copies.min(by: { $0.creation < $1.creation }) else { continue }
            for copy in copies { self[side].remove(copy.key) }
            widened.domain = cookie.domain
            widened.hostOnly = false
            self[side].set(widened, at: widened.creation)
        }
        for i in pending.indices where pending[i].cookie.name == cookie.name && pending[i].cookie.hostOnly && pending[i].cookie.value == cookie.value
            && CookieStore.domainMatches(pending[i].cookie.domain, cookie.domain)
        {
            pending[i].cookie.domain = cookie.domain
            pending[i].cookie.hostOnly = false
        }
    }

    /// The recording's browser started afresh without `cookie`
    /// (`CookieProvenance.Inference.Kind.forgotten`): gone from both jars and from pending
    /// synchronisations, as a replay of the same fresh start would have it.
    mutating func forget(_ cookie: Cookie) {
        for side in [JarSide.native, .web] { self[side].remove(cookie.key) }
        pending.removeAll { $0.cookie.key == cookie.key }
    }

    /// Puts `cookie` in `side` at `time`, and schedules its synchronisation to the other
    /// jar after `syncDelay` (nil: it never propagates).
    mutating func put(_ cookie: Cookie, in side: JarSide, at time: Double, origin: Origin, syncDelay: Double?, syncRule: RuleID) {
        self[side].set(tagged(cookie, origin), at: time)
        record(JarEvent(time: time, jar: side, name: cookie.name, domain: cookie.domain, path: cookie.path, change: .set, rule: origin.rules.last, note: origin.source))
        if let (delay, rule) = linked(syncRule, delay: syncDelay, to: side.other, deletion: false, name: cookie.name) {
            schedule(PendingSync(due: time + delay, to: side.other, cookie: cookie, isDeletion: false, rule: rule, origin: origin))
        }
    }

    /// Removes a cookie from `side` and schedules the deletion to the other jar. A jar that
    /// does not hold the cookie is not changed by the deletion, so no observer hears of it
    /// and nothing crosses to the other jar (J2 carries changes, not requests).
    mutating func delete(_ cookie: Cookie, in side: JarSide, at time: Double, origin: Origin, syncDelay: Double?, syncRule: RuleID) {
        guard self[side].remove(cookie.key) != nil else { return }
        record(JarEvent(time: time, jar: side, name: cookie.name, domain: cookie.domain, path: cookie.path, change: .deleted, rule: origin.rules.last, note: origin.source))
        if let (delay, rule) = linked(syncRule, delay: syncDelay, to: side.other, deletion: true, name: cookie.name) {
            schedule(PendingSync(due: time + delay, to: side.other, cookie: cookie, isDeletion: true, rule: rule, origin: origin))
        }
    }

    /// How the link carries a change toward `side` that the system would carry by `rule`
    /// after `delay`: the delay and rule it takes, or nil when it never arrives.
    private mutating func linked(_ rule: RuleID, delay: Double?, to side: JarSide, deletion: Bool, name: String) -> (Double, RuleID)? {
        guard rule == "J1" || rule == "J2" || rule == "J3" else { return delay.map { ($0, rule) } }
        switch link {
        case .system:
            return delay.map { ($0, rule) }
        case .separate(let by):
            if delay != nil { heldBack[name] = by }
            return nil
        case .systemHolding(.eitherWay(let held)) where deletion, .systemHolding(.towardObserved(let held)) where deletion:
            heldBack[name] = held
            return nil
        case .systemHolding:
            return delay.map { ($0, rule) }
        case .observed(let to, let by, let deletions):
            if deletion {
                switch deletions {
                case .eitherWay(let held):
                    heldBack[name] = held
                    return nil
                case .towardObserved(let held) where side == to:
                    heldBack[name] = held
                    return nil
                default:
                    break
                }
            }
            // The observer hears of every change to the jar it watches (WebKit registers
            // it with the network process's cookie manager) and copies it itself: it does
            // not wait on the system's synchronisation, and carries a script's write the
            // system never would (J3 on the simulator). A write the caller placed in both
            // jars at once (no delay, J1) needs no copy.
            if side == to && (delay != nil || rule == "J3") { return (0, by) }
            return delay.map { ($0, rule) }
        }
    }

    /// Copies every cookie of one jar that the other lacks or holds with another value,
    /// now, by `rule` (RNW1, CAPC2).
    mutating func mirror(_ m: JarMirror, at time: Double) {
        var copied: [Cookie] = []
        self[m.from].forEachCookie { c in
            if !c.isExpired(at: time), self[m.to].cookie(for: c.key)?.value != c.value { copied.append(c) }
        }
        for cookie in copied {
            var origin = self.origin(of: cookie) ?? Origin(rules: [], source: .fromStart)
            origin.rules.append(m.rule)
            self[m.to].set(tagged(cookie, origin), at: time)
            record(JarEvent(time: time, jar: m.to, name: cookie.name, domain: cookie.domain, path: cookie.path, change: .set, rule: m.rule, note: .synchronised(from: m.from)))
        }
    }

    /// Schedules a copy of `cookie` into `side` at `due` by `rule` (C7, C8).
    mutating func copy(_ cookie: Cookie, to side: JarSide, due: Double, rule: RuleID, origin: Origin) {
        schedule(PendingSync(due: due, to: side, cookie: cookie, isDeletion: false, rule: rule, origin: origin))
    }

    /// J4: a web view with a new WKProcessPool starts without the session cookies of WebJar.
    mutating func dropSessionCookies(from side: JarSide, at time: Double) {
        for cookie in self[side].all where cookie.expiry == nil {
            self[side].remove(cookie.key)
            block(cookie.name, from: side, by: "J4")
            record(JarEvent(time: time, jar: side, name: cookie.name, domain: cookie.domain, path: cookie.path, change: .deleted, rule: "J4", note: .newProcessPool))
        }
    }

    /// Cookies a rule kept out of a jar (C3: HttpOnly cookies a script cannot write).
    private var nativeBlocked = SmallMap<String, RuleID>()
    private var webBlocked = SmallMap<String, RuleID>()

    /// The rule that kept a cookie named `name` out of `side`, if one did.
    func blocker(of name: String, in side: JarSide) -> RuleID? { side == .native ? nativeBlocked[name] : webBlocked[name] }

    mutating func block(_ name: String, from side: JarSide, by rule: RuleID) {
        if side == .native { nativeBlocked[name] = rule } else { webBlocked[name] = rule }
    }

    /// Applies a parsed `Set-Cookie` to `side`, scheduling J1 (change) or J2 (deletion);
    /// returns what the jar did.
    @discardableResult
    mutating func receive(_ header: SetCookie, from url: RequestTarget, in side: JarSide, at time: Double, origin: Origin, profile: Profile) -> CookieStore.StoreResult {
        // The origin is recorded before the jar decides; one it refuses is never read.
        let (result, replaced) = self[side].storeReplacing(header, from: url, at: time, api: .http, tag: tag(origin))
        switch result {
        case .stored(let cookie):
            record(JarEvent(time: time, jar: side, name: cookie.name, domain: cookie.domain, path: cookie.path, change: .set, rule: origin.rules.last, note: origin.source))
            if let (delay, rule) = linked("J1", delay: profile.jarSyncDelay, to: side.other, deletion: false, name: cookie.name) {
                schedule(PendingSync(due: time + delay, to: side.other, cookie: cookie, isDeletion: false, rule: rule, origin: origin))
            }
        case .deleted(let key):
            record(JarEvent(time: time, jar: side, name: key.name, domain: key.domain, path: key.path, change: .deleted, rule: origin.rules.last, note: origin.source))
            if let old = replaced ?? self[side.other].cookie(for: key),
                let (delay, rule) = linked("J2", delay: profile.jarDeletionDelay, to: side.other, deletion: true, name: key.name)
            {
                schedule(PendingSync(due: time + delay, to: side.other, cookie: old, isDeletion: true, rule: rule, origin: origin))
            }
        case .ignored:
            break
        }
        return result
    }

    /// Applies every synchronisation due at or before `time`, in due order.
    mutating func completeSyncs(upTo time: Double) {
        // The first sync's time read in place: `pending.first` would copy it, a retain of
        // its cookie and origin, at every exchange.
        guard !pending.isEmpty, pending[0].due <= time else { return }
        var applied = 0
        while applied < pending.count, pending[applied].due <= time {
            let sync = pending[applied]
            if sync.isDeletion {
                self[sync.to].remove(sync.cookie.key)
            } else {
                var origin = sync.origin
                origin.rules.append(sync.rule)
                self[sync.to].set(tagged(sync.cookie, origin), at: sync.due)
            }
            let c = sync.cookie
            record(JarEvent(time: sync.due, jar: sync.to, name: c.name, domain: c.domain, path: c.path, change: sync.isDeletion ? .deleted : .set, rule: sync.rule, note: .synchronised(from: sync.to.other)))
            applied += 1
        }
        pending.removeFirst(applied)
    }

    /// The synchronisation of a cookie named `name` still on its way to `side`.
    func pendingSync(named name: String, to side: JarSide) -> PendingSync? {
        pending.first { $0.to == side && $0.cookie.name == name }
    }

    /// Queues a synchronisation. A change still on its way that would land after this newer
    /// one, for the same cookie and jar, is dropped: the jars converge on the latest state,
    /// so a slow deletion (J2, 10 s) never undoes a later write that crossed faster (J1, J3).
    private mutating func schedule(_ sync: consuming PendingSync) {
        // The sync moves into the queue: the closures read its fields, not the sync.
        let due = sync.due
        if !pending.isEmpty {
            let (to, key) = (sync.to, sync.cookie.key)
            func overtaken(_ p: PendingSync) -> Bool { p.to == to && p.due >= due && p.cookie.key == key }
            if pending.contains(where: overtaken) { pending.removeAll(where: overtaken) }
        }
        // Most changes are due after every one already on its way.
        if let index = pending.firstIndex(where: { $0.due > due }) {
            pending.insert(sync, at: index)
        } else {
            if pending.capacity == 0 { pending.reserveCapacity(4) }
            pending.append(sync)
        }
    }
}

/// Where a cookie in a jar came from, or what changed it: words only when a report asks.
enum CookieNote: Sendable, Hashable {
    case setCookie(exchange: Int, redirectStatus: Int?)
    case atSessionStart
    case fromStart
    case scriptWrite
    case scriptDeletion
    case documentStartInjection
    case newProcessPool
    case synchronised(from: JarSide)
    case text(String)

    /// `text`, appended to `out` in pieces, with no string of its own.
    func write(to out: inout Words) {
        guard case let .setCookie(exchange, status) = self else {
            out += text
            return
        }
        out += "Set-Cookie on exchange "
        out.append(exchange)
        if let status {
            out += " (a "
            out.append(status)
            out += " redirect)"
        }
    }

    var text: String {
        switch self {
        case let .setCookie(exchange, status): return "Set-Cookie on exchange \(exchange)" + (status.map { " (a \($0) redirect)" } ?? "")
        case .atSessionStart: return "there at session start"
        case .fromStart: return "there from the start"
        case .scriptWrite: return "written by script"
        case .scriptDeletion: return "deleted by script"
        case .documentStartInjection: return "injected at document start"
        case .newProcessPool: return "a new process pool starts without session cookies"
        case .synchronised(let side): return "synchronised from \(side.jarName)"
        case .text(let text): return text
        }
    }
}
