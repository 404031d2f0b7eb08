import CookieJar
import TrafficModel

/// What happened to one recorded exchange under one preset: what reached the server,
/// what the page saw, and the rule behind every difference.
public struct Outcome: Sendable, Hashable {
    /// The fields sit behind one reference, copied only when a shared outcome is changed:
    /// a run passes each outcome through the emulator, the detector and the store, and a
    /// copy then costs one retain, not one per list.
    @usableFromInline struct Fields: Sendable, Hashable {
        @usableFromInline var sequence: Int
        @usableFromInline var deliveredMethod: String
        @usableFromInline var deliveredURL: String
        @usableFromInline var deliveredBody: BodyFingerprint
        @usableFromInline var sentCookies: [Cookie] = []
        @usableFromInline var cookieDifferences: [CookieDifference] = []
        @usableFromInline var changes = ChangeList()
        /// The fields most outcomes leave empty, behind a reference of their own: nil
        /// until one is set, so an outcome that is the recorded request is made and freed
        /// without two dozen empty lists.
        @usableFromInline nonisolated(unsafe) var rare: RareBox?

        @usableFromInline static func == (a: Fields, b: Fields) -> Bool {
            a.sequence == b.sequence && a.deliveredMethod == b.deliveredMethod && a.deliveredURL == b.deliveredURL && a.deliveredBody == b.deliveredBody
                && a.sentCookies == b.sentCookies && a.cookieDifferences == b.cookieDifferences && a.changes == b.changes
                && (a.rare === b.rare || (a.rare?.fields ?? RareFields()) == (b.rare?.fields ?? RareFields()))
        }

        @usableFromInline func hash(into hasher: inout Hasher) {
            hasher.combine(sequence)
            hasher.combine(deliveredURL)
            hasher.combine(changes)
            hasher.combine(rare?.fields ?? RareFields())
        }
    }

    /// The rarely set fields (the effects, the redirect and CORS verdicts, the headers a
    /// mitigation adds or removes...).
    @usableFromInline struct RareFields: Sendable, Hashable {
        /// Each effect's rules, one list per case of `Effect` (`subscript(effect:)`): a
        /// list of (effect, rules) pairs cost 190 more instructions an evaluation (callgrind,
        /// Tools/bench's method), an allocation and a search on every read and write.
        /// One bit per effect with rules (`1 << rawValue`), kept by the subscript's modify:
        /// `has` and `hasEffects` read it, not the lists.
        @usableFromInline var effectMask: UInt16 = 0
        @usableFromInline var failed: [RuleID] = []
        @usableFromInline var neverSent: [RuleID] = []
        @usableFromInline var urlChanged: [RuleID] = []
        @usableFromInline var preflightAdded: [RuleID] = []
        @usableFromInline var tooLargeForHeader: [RuleID] = []
        @usableFromInline var streamOnly: [RuleID] = []
        @usableFromInline var responseChanged: [RuleID] = []
        @usableFromInline var corsBlocked: [RuleID] = []
        @usableFromInline var thirdPartyIntercepted: [RuleID] = []
        @usableFromInline var bodyChanged: [RuleID] = []
        @usableFromInline var redirectReissued: [RuleID] = []
        @usableFromInline var redirectHidden: [RuleID] = []
        @usableFromInline var pageURL: String? = nil
        @usableFromInline var bodyReason: String? = nil
        @usableFromInline var addedHeaders: [HeaderAddition] = []
        @usableFromInline var observedMissing: Bool = false
        @usableFromInline var alternative: String? = nil
        @usableFromInline var crossSiteCookies: [String] = []
        @usableFromInline var corsReason: CORSCheck.Reason? = nil
        @usableFromInline var removedHeaders: [HeaderAddition] = []
        @usableFromInline var bodyReencoded: Bool = false
        @usableFromInline var offline: OfflineVerdict? = nil

        @usableFromInline init() {}

        /// Whether `effect` has rules.
        @inlinable func has(_ effect: Effect) -> Bool { effectMask & (1 << effect.rawValue) != 0 }

        @inlinable mutating func mark(_ effect: Effect, _ rules: [RuleID]) {
            if rules.isEmpty { effectMask &= ~(1 << effect.rawValue) } else { effectMask |= 1 << effect.rawValue }
        }

        @inlinable subscript(effect: Effect) -> [RuleID] {
            get {
                switch effect {
                case .failed: failed
                case .neverSent: neverSent
                case .urlChanged: urlChanged
                case .preflightAdded: preflightAdded
                case .tooLargeForHeader: tooLargeForHeader
                case .streamOnly: streamOnly
                case .responseChanged: responseChanged
                case .corsBlocked: corsBlocked
                case .thirdPartyIntercepted: thirdPartyIntercepted
                case .bodyChanged: bodyChanged
                case .redirectReissued: redirectReissued
                case .redirectHidden: redirectHidden
                }
            }
            _modify {
                switch effect {
                case .failed:
                    yield &failed
                    mark(.failed, failed)
                case .neverSent:
                    yield &neverSent
                    mark(.neverSent, neverSent)
                case .urlChanged:
                    yield &urlChanged
                    mark(.urlChanged, urlChanged)
                case .preflightAdded:
                    yield &preflightAdded
                    mark(.preflightAdded, preflightAdded)
                case .tooLargeForHeader:
                    yield &tooLargeForHeader
                    mark(.tooLargeForHeader, tooLargeForHeader)
                case .streamOnly:
                    yield &streamOnly
                    mark(.streamOnly, streamOnly)
                case .responseChanged:
                    yield &responseChanged
                    mark(.responseChanged, responseChanged)
                case .corsBlocked:
                    yield &corsBlocked
                    mark(.corsBlocked, corsBlocked)
                case .thirdPartyIntercepted:
                    yield &thirdPartyIntercepted
                    mark(.thirdPartyIntercepted, thirdPartyIntercepted)
                case .bodyChanged:
                    yield &bodyChanged
                    mark(.bodyChanged, bodyChanged)
                case .redirectReissued:
                    yield &redirectReissued
                    mark(.redirectReissued, redirectReissued)
                case .redirectHidden:
                    yield &redirectHidden
                    mark(.redirectHidden, redirectHidden)
                }
            }
        }
    }

    @usableFromInline final class RareBox: ManagedBuffer<RareFields, Never> {
        @usableFromInline static func make(_ fields: RareFields) -> RareBox {
            unsafeDowncast(RareBox.create(minimumCapacity: 0) { _ in fields }, to: RareBox.self)
        }
        @usableFromInline var fields: RareFields { withUnsafeMutablePointerToHeader { $0.pointee } }
    }

    /// The fields' one reference: a buffer whose header is reached through a pointer, not
    /// a class property's checked access; changed only while uniquely referenced.
    @usableFromInline final class Box: ManagedBuffer<Fields, Never> {}

    /// Safe to share across threads: a buffer is changed only once `unique()` has made it
    /// this value's alone.
    @usableFromInline nonisolated(unsafe) var box: Box

    public init(sequence: Int, deliveredMethod: String, deliveredURL: String, deliveredBody: BodyFingerprint) {
        box = Self.box(Fields(sequence: sequence, deliveredMethod: deliveredMethod, deliveredURL: deliveredURL, deliveredBody: deliveredBody))
    }

    @usableFromInline static func box(_ fields: Fields) -> Box { unsafeDowncast(Box.create(minimumCapacity: 0) { _ in fields }, to: Box.self) }

    /// The fields, for a change: the pointer is valid while `box` holds the buffer.
    @usableFromInline var header: UnsafeMutablePointer<Fields> { box.withUnsafeMutablePointerToHeader { $0 } }

    @usableFromInline mutating func unique() {
        if !isKnownUniquelyReferenced(&box) { box = Self.box(box.withUnsafeMutablePointerToHeader { $0.pointee }) }
    }

    /// The rare fields, for a read; nil while none was ever set. Valid while `box` holds them.
    @usableFromInline var rarePointer: UnsafeMutablePointer<RareFields>? {
        box.withUnsafeMutablePointerToHeader { $0.pointee.rare?.withUnsafeMutablePointerToHeader { $0 } }
    }

    /// The rare fields, for a change: made on first use, copied first when shared.
    @usableFromInline var uniqueRare: UnsafeMutablePointer<RareFields> {
        mutating get {
            unique()
            let fields = header
            if fields.pointee.rare == nil {
                fields.pointee.rare = RareBox.make(RareFields())
            } else if !isKnownUniquelyReferenced(&fields.pointee.rare) {
                fields.pointee.rare = RareBox.make(fields.pointee.rare!.fields)
            }
            return fields.pointee.rare!.withUnsafeMutablePointerToHeader { $0 }
        }
    }

    @inlinable public var sequence: Int {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.sequence } }
        _modify { unique(); yield &header.pointee.sequence }
    }
    @inlinable public var deliveredMethod: String {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.deliveredMethod } }
        _modify { unique(); yield &header.pointee.deliveredMethod }
    }
    @inlinable public var deliveredURL: String {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.deliveredURL } }
        _modify { unique(); yield &header.pointee.deliveredURL }
    }
    @inlinable public var deliveredBody: BodyFingerprint {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.deliveredBody } }
        _modify { unique(); yield &header.pointee.deliveredBody }
    }
    /// The cookies the request carried, in header order, as the jar held them: the list
    /// the jar handed over, kept as it is rather than copied into names and values.
    @inlinable public var sentCookies: [Cookie] {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.sentCookies } }
        _modify { unique(); yield &header.pointee.sentCookies }
    }
    /// Every cookie whose presence or value differs from the recording, and why.
    @inlinable public var cookieDifferences: [CookieDifference] {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.cookieDifferences } }
        _modify { unique(); yield &header.pointee.cookieDifferences }
    }
    /// For the first request of a redirect chain: the URL the page (or loader) ends at.
    @inlinable public var pageURL: String? {
        get { rarePointer?.pointee.pageURL ?? nil }
        _modify { yield &uniqueRare.pointee.pageURL }
    }
    /// Every change the emulator made, tagged with its rule.
    @inlinable public var changes: ChangeList {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.changes } }
        _modify { unique(); yield &header.pointee.changes }
    }
    /// Why the body was lost, when a rule says more than "removed" (H3's invalid header).
    @inlinable public var bodyReason: String? {
        get { rarePointer?.pointee.bodyReason ?? nil }
        _modify { yield &uniqueRare.pointee.bodyReason }
    }
    /// Request headers the page did not send that reach the server.
    @inlinable public var addedHeaders: [HeaderAddition] {
        get { rarePointer?.pointee.addedHeaders ?? [] }
        _modify { yield &uniqueRare.pointee.addedHeaders }
    }
    /// Which possibility this is when the model evaluated several and kept the worse:
    /// "a fetch", "an XHR with a Blob body"; nil when there was one.
    @inlinable public var alternative: String? {
        get { rarePointer?.pointee.alternative ?? nil }
        _modify { yield &uniqueRare.pointee.alternative }
    }
    /// Script-set cookies a setter hook accepted for a site the page may not set (C9).
    @inlinable public var crossSiteCookies: [String] {
        get { rarePointer?.pointee.crossSiteCookies ?? [] }
        _modify { yield &uniqueRare.pointee.crossSiteCookies }
    }
    @inlinable public var corsReason: CORSCheck.Reason? {
        get { rarePointer?.pointee.corsReason ?? nil }
        _modify { yield &uniqueRare.pointee.corsReason }
    }
    /// Request headers the page sent that do not reach the server (FIA2).
    @inlinable public var removedHeaders: [HeaderAddition] {
        get { rarePointer?.pointee.removedHeaders ?? [] }
        _modify { yield &uniqueRare.pointee.removedHeaders }
    }
    /// What the offline package did for this request, when the run has one (O1-O4).
    @inlinable public var offline: OfflineVerdict? {
        get { rarePointer?.pointee.offline ?? nil }
        _modify { yield &uniqueRare.pointee.offline }
    }
    /// An observed run (`serve`): the request never arrived at the replay origin.
    @inlinable public var observedMissing: Bool {
        get { rarePointer?.pointee.observedMissing ?? false }
        _modify { yield &uniqueRare.pointee.observedMissing }
    }
    /// The body that arrives is the page's rebuilt in other bytes, its content kept (CAPH5).
    @inlinable public var bodyReencoded: Bool {
        get { rarePointer?.pointee.bodyReencoded ?? false }
        _modify { yield &uniqueRare.pointee.bodyReencoded }
    }

    /// The rules that had `effect` on this exchange; empty when none did.
    @inlinable public subscript(effect: Effect) -> [RuleID] {
        get { rarePointer?.pointee[effect] ?? [] }
        _modify { yield &uniqueRare.pointee[effect] }
    }

    /// Every effect on this exchange with the rules that did it, in `Effect` order.
    public var effects: [EffectRules] {
        guard let rare = rarePointer else { return [] }
        return Effect.allCases.compactMap { effect in rare.pointee.has(effect) ? EffectRules(effect: effect, rules: rare.pointee[effect]) : nil }
    }

    /// Whether a rule had `effect` on this exchange, read without copying its rules.
    /// Always inlined: the detector's calls stayed calls otherwise (9,005 instructions an
    /// evaluation against 8,975).
    @inlinable @inline(__always) public func has(_ effect: Effect) -> Bool { rarePointer?.pointee.has(effect) ?? false }

    /// Whether any rule had an effect on this exchange.
    @inlinable public var hasEffects: Bool { rarePointer.map { $0.pointee.effectMask != 0 } ?? false }

    /// How bad the outcome is for the page, to keep the worse of two possibilities the
    /// model cannot tell apart: each effect's weight, counted once for effects that weigh
    /// alike, and one for each header a mitigation added.
    public var severity: Int {
        var counted: UInt8 = 0, score = addedHeaders.count
        func count(_ kind: UInt8, _ weight: Int) {
            if counted & kind == 0 { (counted, score) = (counted | kind, score + weight) }
        }
        if !removedHeaders.isEmpty { count(4, 50) }
        guard let rare = rarePointer else { return score }
        for raw in 0...Effect.last.rawValue where rare.pointee.has(Effect(rawValue: raw)!) {
            let effect = Effect(rawValue: raw)!
            switch effect {
            case .neverSent: count(1, 1000)
            case .bodyChanged: count(2, deliveredBody.isEmpty ? 100 : bodyReencoded ? 20 : 80)
            case .corsBlocked: count(4, 50)
            case .responseChanged: count(8, 60)
            case .urlChanged, .preflightAdded: count(16, 10)
            case .streamOnly, .tooLargeForHeader: count(32, 5)
            case .failed, .redirectReissued, .redirectHidden, .thirdPartyIntercepted: break
            }
        }
        return score
    }

    /// Adds a change.
    public mutating func note(_ change: consuming Change) {
        unique()
        header.pointee.changes.append(change)
    }

    public static func == (a: Outcome, b: Outcome) -> Bool { a.box === b.box || a.box.withUnsafeMutablePointerToHeader { x in b.box.withUnsafeMutablePointerToHeader { x.pointee == $0.pointee } } }
    public func hash(into hasher: inout Hasher) { box.withUnsafeMutablePointerToHeader { hasher.combine($0.pointee) } }
}

/// A request header that a mitigation adds.
public struct HeaderAddition: Sendable, Hashable {
    public var name: String
    public var rule: RuleID
}

/// What a rule did to a request, or to what the page saw of its response, other than its
/// cookies: one case per kind, recorded on the outcome with the rules that did it
/// (`outcome[.bodyChanged]`). Severity reads them in `Outcome.severity`, and each has its
/// detector in Findings (FindingDetector), called in the order of the cases: a new kind of
/// effect is a case here, its weight there, and its detector.
public enum Effect: UInt8, CaseIterable, Sendable, Hashable {
    /// The request fails before any server answers (D4, D5).
    case failed
    /// The request is never sent (B4, S4).
    case neverSent
    /// The URL reaching the server is not the page's (B2's id parameter).
    case urlChanged
    /// A CORS preflight goes before the request (B9, H4).
    case preflightAdded
    /// The body is too large to move into a header (H5).
    case tooLargeForHeader
    /// The body reaches the handler only as a stream (S3).
    case streamOnly
    /// The page receives another response than the server's (X2; O2, the package's file).
    case responseChanged
    /// The page may not read the response (A1); `corsReason` says why.
    case corsBlocked
    /// A global interceptor took a third party's request (P2).
    case thirdPartyIntercepted
    /// The body was emptied or changed on its way (`bodyReason`, `bodyReencoded`).
    case bodyChanged
    /// A redirect's hop was re-issued with another method or without its body.
    case redirectReissued
    /// The page stays at an earlier URL of a redirect chain than its last (`pageURL`).
    case redirectHidden

    /// The last case: the cases' raw values run from 0 to this one's.
    public static let last = Effect.redirectHidden
}

/// An effect and the rules that had it, in the order they acted.
public struct EffectRules: Sendable, Hashable {
    public var effect: Effect
    public var rules: [RuleID]

    public init(effect: Effect, rules: [RuleID]) {
        self.effect = effect
        self.rules = rules
    }
}

/// One change the emulator made, and the rule that justifies it.
public struct Change: Sendable, Hashable {
    public var rule: RuleID
    /// What changed, in words, built when asked (most changes are never read).
    public var what: String { note.text }
    let note: ChangeNote

    public init(rule: RuleID, what: String) {
        self.init(rule: rule, note: .text(what))
    }

    init(rule: RuleID, note: ChangeNote) {
        self.rule = rule
        self.note = note
    }

    /// Equal by rule and words; two equal notes give the same words without building them
    /// (the adviser's watch compares outcomes at every hook, and built both texts each time).
    public static func == (a: Change, b: Change) -> Bool { a.rule == b.rule && (a.note == b.note || a.what == b.what) }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(rule)
        hasher.combine(what)
    }
}

/// The words of a change, kept as their parts until a report asks.
enum ChangeNote: Sendable, Hashable {
    case text(String)
    case bodyRemoved(bytes: Int)
    case cookieHeaderBuilt(from: JarSide)
    case idParameterAdded(String)
    case notHookedByBridge(base: String)
    case headerForcesPreflight(String)
    case bodyRestoredFromHeader(String)
    case mirroredBeforeFirstLoad(from: JarSide, to: JarSide)
    case pageOrigin(String)
    case bundledFile(origin: String)
    case unreadableResponse(origin: String, reason: CORSCheck.Reason)
    case cookiesNotCompared(reason: String)
    case hopResentWithoutBody(status: Int)
    case hopReissuedAcrossIPC(status: Int)
    case hopReloadedAsGET(status: Int)
    case sentToIP(String, host: String)
    case certificateNamesHost(String, ip: String)
    case noSNI(ip: String)

    var text: String {
        switch self {
        case .text(let text): return text
        case .bodyRemoved(let bytes): return "request body of \(bytes) bytes removed"
        case .cookieHeaderBuilt(let side): return "Cookie header built from \(side.jarName)"
        case .idParameterAdded(let name): return "\(name) added to the URL"
        case .notHookedByBridge(let base): return "not hooked by the JS bridge; sent through \(base)"
        case .headerForcesPreflight(let name): return "\(name) header forces a CORS preflight"
        case .bodyRestoredFromHeader(let name): return "body restored from the \(name) header"
        case .mirroredBeforeFirstLoad(let from, let to): return "\(from.jarName) copied into \(to.jarName) before the web view's first load"
        case .pageOrigin(let origin): return "the page's origin is \(origin)"
        case .bundledFile(let origin): return "a file of the app's bundle, served at \(origin); no server sees this load"
        case .unreadableResponse(let origin, let reason): return "the page at \(origin) may not read the response: \(reason.text)"
        case .cookiesNotCompared(let reason): return "cookies not compared: \(reason)"
        case .hopResentWithoutBody(let status): return "the session re-sent the \(status) hop with the body it had: none"
        case .hopReissuedAcrossIPC(let status): return "the \(status) hop was re-issued across IPC without its body"
        case .hopReloadedAsGET(let status): return "the document's \(status) was reloaded as a GET without body"
        case .sentToIP(let ip, let host): return "sent to \(ip) with Host: \(host)"
        case .certificateNamesHost(let host, let ip): return "the certificate names \(host), not \(ip)"
        case .noSNI(let ip): return "without SNI, \(ip) cannot tell which of its names' certificates to send"
        }
    }
}

/// A cookie the replayed request carries differently from the recorded one.
public struct CookieDifference: Sendable, Hashable {
    public var name: String
    /// The value in the recording; nil when the recording did not carry it.
    public var recordedValue: String?
    /// The value in the replay; nil when the replay did not carry it.
    public var sentValue: String?
    public var rules: [RuleID]
    /// False when the difference happens only if the script wrote late in its window
    /// (docs/model.md, "Where a cookie came from").
    public var certain: Bool
    /// How likely the difference is: 1 when certain; else the synchronisation delay over
    /// the window in which the script wrote the cookie (a write equally likely at any
    /// moment of its window).
    public var likelihood: Double = 1
    /// Why, in plain words: which jar held it and when a synchronisation was due.
    public var explanation: String
    /// The cookie was set by a redirect (3xx) response.
    public var setByRedirect: Bool = false
    /// Where the recorded cookie came from when no response of the recording set it: an
    /// inference (`CookieProvenance.Kind`'s raw value: script-set, pre-existing) and the
    /// exchange that first carried it. Nil for a cookie a Set-Cookie set.
    public var recordedSource: RecordedSource? = nil

    public init(name: String, recordedValue: String?, sentValue: String?, rules: [RuleID], certain: Bool, explanation: String, setByRedirect: Bool = false) {
        self.name = name
        self.recordedValue = recordedValue
        self.sentValue = sentValue
        self.rules = rules
        self.certain = certain
        self.explanation = explanation
        self.setByRedirect = setByRedirect
    }
}

/// Where a recorded cookie came from when the recording does not show it: inferred.
public struct RecordedSource: Sendable, Hashable {
    /// `CookieProvenance.Kind`'s raw value: script-set or pre-existing.
    public var kind: String
    /// The exchange that first carried the cookie.
    public var firstCarriedBy: Int?

    public init(kind: String, firstCarriedBy: Int?) {
        self.kind = kind
        self.firstCarriedBy = firstCarriedBy
    }
}

/// A cookie on which the two jars still disagree once every synchronisation has completed.
public struct JarDivergence: Sendable, Hashable {
    public var name: String
    public var domain: String
    public var path: String
    public var nativeValue: String?
    public var webValue: String?
    public var rules: [RuleID]
    public var explanation: String
}

/// One change to NativeJar or WebJar during a replay.
public struct JarEvent: Sendable, Hashable {
    public enum Change: String, Sendable, Hashable { case set, deleted }
    /// Seconds since 1970, on the recording's clock.
    public var time: Double
    public var jar: JarSide
    public var name: String
    public var domain: String
    public var path: String
    public var change: Change
    /// The rule by which the change happened (J1 for a synchronisation, P3 for an
    /// intercepted Set-Cookie...), nil for what the page itself did.
    public var rule: RuleID?
    /// What happened, in words, built when asked.
    public var what: String { note.text }
    var note: CookieNote

    public init(time: Double, jar: JarSide, name: String, domain: String, path: String, change: Change, rule: RuleID?, what: String) {
        self.init(time: time, jar: jar, name: name, domain: domain, path: path, change: change, rule: rule, note: .text(what))
    }

    init(time: Double, jar: JarSide, name: String, domain: String, path: String, change: Change, rule: RuleID?, note: CookieNote) {
        self.time = time
        self.jar = jar
        self.name = name
        self.domain = domain
        self.path = path
        self.change = change
        self.rule = rule
        self.note = note
    }

    /// Equal when they say the same, however the words are kept.
    public static func == (a: JarEvent, b: JarEvent) -> Bool {
        a.time == b.time && a.jar == b.jar && a.name == b.name && a.domain == b.domain && a.path == b.path && a.change == b.change && a.rule == b.rule && a.what == b.what
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(time)
        hasher.combine(name)
        hasher.combine(what)
    }
}

/// What became of one prefetched API call of a page load (PF1-PF3).
public struct PrefetchOutcome: Sendable, Hashable {
    /// The page load (its first hop) the config matched.
    public var page: Int
    public var interface: Int
    public var method: String
    /// The URL native code requested.
    public var url: String
    public var verdict: PrefetchVerdict
    /// The page's own request for the same API, when it made one.
    public var pageRequest: Int?
    /// Why, in words: what differed.
    public var detail: String

    public init(page: Int, interface: Int, method: String, url: String, verdict: PrefetchVerdict, pageRequest: Int?, detail: String) {
        self.page = page
        self.interface = interface
        self.method = method
        self.url = url
        self.verdict = verdict
        self.pageRequest = pageRequest
        self.detail = detail
    }
}

/// The result of replaying a recording under one preset.
public struct EmulationResult: Sendable {
    public var preset: String
    public var outcomes: [Outcome]
    public var divergences: [JarDivergence]
    /// Both jars' changes in time order, synchronisations completed at the end included.
    public var jarEvents: [JarEvent]
    /// Each prefetched API call, when the run has a prefetch config.
    public var prefetch: [PrefetchOutcome]
    /// How many exchanges went through the preset's interceptor or its app shell: none
    /// means the strategy was never exercised by this recording.
    public var interceptedExchanges = 0

    public init(preset: String, outcomes: [Outcome], divergences: [JarDivergence], jarEvents: [JarEvent], prefetch: [PrefetchOutcome] = []) {
        self.preset = preset
        self.outcomes = outcomes
        self.divergences = divergences
        self.jarEvents = jarEvents
        self.prefetch = prefetch
    }
}
