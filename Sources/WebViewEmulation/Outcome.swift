import TrafficModel

/// What happened to one recorded exchange under one preset: what reached the server,
/// what the page saw, and the rule behind every difference.
public struct Outcome: Sendable, Hashable {
    public var sequence: Int
    public var deliveredMethod: String
    public var deliveredURL: String
    public var deliveredBody: BodyFingerprint
    /// The rules that emptied or changed the body on its way; empty when it arrived intact.
    public var bodyRules: [RuleID]
    /// Set when the redirect handling itself re-issued this hop with another method or no body.
    public var redirectReissueRules: [RuleID]
    /// The cookies the request carried, in header order.
    public var sentCookies: [SentCookie]
    /// Every cookie whose presence or value differs from the recording, and why.
    public var cookieDifferences: [CookieDifference]
    /// For the first request of a redirect chain: the URL the page (or loader) ends at.
    public var pageURL: String?
    public var redirectRules: [RuleID]
    /// Every change the emulator made, tagged with its rule.
    public var changes: [Change]
    /// Why the body was lost, when a rule says more than "removed" (H3's invalid header).
    public var bodyReason: String?
    /// The rules that changed the URL reaching the server (B2's id parameter).
    public var urlRules: [RuleID] = []
    /// Request headers the page did not send that reach the server.
    public var addedHeaders: [HeaderAddition] = []
    /// The rules that add a CORS preflight before this request (B9, H4).
    public var preflightRules: [RuleID] = []
    /// The rules by which the request is never sent (B4, S4).
    public var stalledRules: [RuleID] = []
    /// An observed run (`serve`): the request never arrived at the replay origin.
    public var observedMissing = false
    /// The rules that flag a body too large to move into a header (H5).
    public var tooLargeRules: [RuleID] = []
    /// The rules by which the body reaches the handler only as a stream (S3).
    public var streamOnlyRules: [RuleID] = []
    /// The rules by which the page receives a different response (X2).
    public var responseRules: [RuleID] = []
    /// Which possibility this is when the model evaluated several and kept the worse:
    /// "a fetch", "an XHR with a Blob body"; nil when there was one.
    public var alternative: String?
    /// The rules by which a third-party request went through a global interceptor (P2).
    public var thirdPartyRules: [RuleID] = []
    /// Script-set cookies a setter hook accepted for a site the page may not set (C9).
    public var crossSiteCookies: [String] = []
    /// The rules by which the page may not read the response (A1), and why.
    public var corsRules: [RuleID] = []
    public var corsReason: CORSCheck.Reason?
    /// Request headers the page sent that do not reach the server (FIA2).
    public var removedHeaders: [HeaderAddition] = []
    /// The body that arrives is the page's rebuilt in other bytes, its content kept (CAPH5).
    public var bodyReencoded = false
    /// What the offline package did for this request, when the run has one (O1-O4).
    public var offline: OfflineVerdict?
    /// The host the request really went to, when not the recorded one (an HTTPDNS IP, D1):
    /// its cookies are read and stored under it, by `deliveredHostRule`.
    public var deliveredHost: String?
    public var deliveredHostRule: RuleID?
    /// The rules by which the request fails before any server answers (D4, D5).
    public var failedRules: [RuleID] = []

    public init(sequence: Int, deliveredMethod: String, deliveredURL: String, deliveredBody: BodyFingerprint) {
        self.sequence = sequence
        self.deliveredMethod = deliveredMethod
        self.deliveredURL = deliveredURL
        self.deliveredBody = deliveredBody
        self.bodyRules = []
        self.redirectReissueRules = []
        self.sentCookies = []
        self.cookieDifferences = []
        self.pageURL = nil
        self.redirectRules = []
        self.changes = []
    }
}

/// A request header that a mitigation adds.
public struct HeaderAddition: Sendable, Hashable {
    public var name: String
    public var rule: RuleID
}

public struct SentCookie: Sendable, Hashable {
    public var name: String
    public var value: String
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

    var text: String {
        switch self {
        case .text(let text): return text
        case .bodyRemoved(let bytes): return "request body of \(bytes) bytes removed"
        case .cookieHeaderBuilt(let side): return "Cookie header built from \(side.jarName)"
        case .idParameterAdded(let name): return "\(name) added to the URL"
        case .notHookedByBridge(let base): return "not hooked by the JS bridge; sent through \(base)"
        case .headerForcesPreflight(let name): return "\(name) header forces a CORS preflight"
        case .bodyRestoredFromHeader(let name): return "body restored from the \(name) header"
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
    /// (BEHAVIOUR.md section 8).
    public var certain: Bool
    /// How likely the difference is: 1 when certain; else the synchronisation delay over
    /// the window in which the script wrote the cookie (a write equally likely at any
    /// moment of its window).
    public var likelihood: Double = 1
    /// Why, in plain words: which jar held it and when a synchronisation was due.
    public var explanation: String
    /// The cookie was set by a redirect (3xx) response.
    public var setByRedirect: Bool = false

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

    public init(preset: String, outcomes: [Outcome], divergences: [JarDivergence], jarEvents: [JarEvent], prefetch: [PrefetchOutcome] = []) {
        self.preset = preset
        self.outcomes = outcomes
        self.divergences = divergences
        self.jarEvents = jarEvents
        self.prefetch = prefetch
    }
}
