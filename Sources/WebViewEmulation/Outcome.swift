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

    /// The rarely set fields (every rule list but the changes, the redirect and CORS
    /// verdicts, HTTPDNS's host...).
    @usableFromInline struct RareFields: Sendable, Hashable {
        @usableFromInline var bodyRules: [RuleID] = []
        @usableFromInline var redirectReissueRules: [RuleID] = []
        @usableFromInline var pageURL: String? = nil
        @usableFromInline var redirectRules: [RuleID] = []
        @usableFromInline var bodyReason: String? = nil
        @usableFromInline var urlRules: [RuleID] = []
        @usableFromInline var addedHeaders: [HeaderAddition] = []
        @usableFromInline var preflightRules: [RuleID] = []
        @usableFromInline var stalledRules: [RuleID] = []
        @usableFromInline var observedMissing: Bool = false
        @usableFromInline var tooLargeRules: [RuleID] = []
        @usableFromInline var streamOnlyRules: [RuleID] = []
        @usableFromInline var responseRules: [RuleID] = []
        @usableFromInline var alternative: String? = nil
        @usableFromInline var thirdPartyRules: [RuleID] = []
        @usableFromInline var crossSiteCookies: [String] = []
        @usableFromInline var corsRules: [RuleID] = []
        @usableFromInline var corsReason: CORSCheck.Reason? = nil
        @usableFromInline var removedHeaders: [HeaderAddition] = []
        @usableFromInline var bodyReencoded: Bool = false
        @usableFromInline var offline: OfflineVerdict? = nil
        @usableFromInline var failedRules: [RuleID] = []

        @usableFromInline init() {}
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
    /// The rules that emptied or changed the body on its way; empty when it arrived intact.
    @inlinable public var bodyRules: [RuleID] {
        get { rarePointer?.pointee.bodyRules ?? [] }
        _modify { yield &uniqueRare.pointee.bodyRules }
    }
    /// Set when the redirect handling itself re-issued this hop with another method or no body.
    @inlinable public var redirectReissueRules: [RuleID] {
        get { rarePointer?.pointee.redirectReissueRules ?? [] }
        _modify { yield &uniqueRare.pointee.redirectReissueRules }
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
    @inlinable public var redirectRules: [RuleID] {
        get { rarePointer?.pointee.redirectRules ?? [] }
        _modify { yield &uniqueRare.pointee.redirectRules }
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
    /// The rules that changed the URL reaching the server (B2's id parameter).
    @inlinable public var urlRules: [RuleID] {
        get { rarePointer?.pointee.urlRules ?? [] }
        _modify { yield &uniqueRare.pointee.urlRules }
    }
    /// Request headers the page did not send that reach the server.
    @inlinable public var addedHeaders: [HeaderAddition] {
        get { rarePointer?.pointee.addedHeaders ?? [] }
        _modify { yield &uniqueRare.pointee.addedHeaders }
    }
    /// The rules that add a CORS preflight before this request (B9, H4).
    @inlinable public var preflightRules: [RuleID] {
        get { rarePointer?.pointee.preflightRules ?? [] }
        _modify { yield &uniqueRare.pointee.preflightRules }
    }
    /// The rules by which the request is never sent (B4, S4).
    @inlinable public var stalledRules: [RuleID] {
        get { rarePointer?.pointee.stalledRules ?? [] }
        _modify { yield &uniqueRare.pointee.stalledRules }
    }
    /// The rules that flag a body too large to move into a header (H5).
    @inlinable public var tooLargeRules: [RuleID] {
        get { rarePointer?.pointee.tooLargeRules ?? [] }
        _modify { yield &uniqueRare.pointee.tooLargeRules }
    }
    /// The rules by which the body reaches the handler only as a stream (S3).
    @inlinable public var streamOnlyRules: [RuleID] {
        get { rarePointer?.pointee.streamOnlyRules ?? [] }
        _modify { yield &uniqueRare.pointee.streamOnlyRules }
    }
    /// The rules by which the page receives a different response (X2).
    @inlinable public var responseRules: [RuleID] {
        get { rarePointer?.pointee.responseRules ?? [] }
        _modify { yield &uniqueRare.pointee.responseRules }
    }
    /// Which possibility this is when the model evaluated several and kept the worse:
    /// "a fetch", "an XHR with a Blob body"; nil when there was one.
    @inlinable public var alternative: String? {
        get { rarePointer?.pointee.alternative ?? nil }
        _modify { yield &uniqueRare.pointee.alternative }
    }
    /// The rules by which a third-party request went through a global interceptor (P2).
    @inlinable public var thirdPartyRules: [RuleID] {
        get { rarePointer?.pointee.thirdPartyRules ?? [] }
        _modify { yield &uniqueRare.pointee.thirdPartyRules }
    }
    /// Script-set cookies a setter hook accepted for a site the page may not set (C9).
    @inlinable public var crossSiteCookies: [String] {
        get { rarePointer?.pointee.crossSiteCookies ?? [] }
        _modify { yield &uniqueRare.pointee.crossSiteCookies }
    }
    /// The rules by which the page may not read the response (A1), and why.
    @inlinable public var corsRules: [RuleID] {
        get { rarePointer?.pointee.corsRules ?? [] }
        _modify { yield &uniqueRare.pointee.corsRules }
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
    /// The rules by which the request fails before any server answers (D4, D5).
    @inlinable public var failedRules: [RuleID] {
        get { rarePointer?.pointee.failedRules ?? [] }
        _modify { yield &uniqueRare.pointee.failedRules }
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

    public static func == (a: Change, b: Change) -> Bool { a.rule == b.rule && a.what == b.what }
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
