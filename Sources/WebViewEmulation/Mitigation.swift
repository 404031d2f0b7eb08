import CookieJar
import TrafficModel

/// A workaround an app layers on top of its strategy (docs/model.md, "Mitigations"): a small
/// value with one job, composed into a preset.
///
/// A mitigation acts only at the moments the model knows, through the hooks it returns in
/// `hooks`; each hook says what it changed and names the rule that justifies it. There is
/// no default: a mitigation states which hooks it has, and every rule it can cite.
/// Adding one is one file (the value, its hooks, and how a preset file writes it: its
/// `PresetPart` conformance) and one line in `PresetRegistry.mitigations`; a preset file
/// then names it by its kind (docs/presets/README.md).
public protocol Mitigation: Sendable {
    /// `body-bridge`, `cookie-header-on-load`...
    var kind: String { get }
    /// Options in `key=value` form, for listings.
    var options: [String: String] { get }
    /// Every rule a change of this mitigation can cite.
    var citedRules: [RuleID] { get }
    /// The moments it acts at.
    var hooks: MitigationHooks { get }
}

/// A part of the session that acts at moments as a mitigation does, through the same
/// `MitigationHooks`, but is not one of the preset's mitigations: the app shell comes with
/// the preset's framework (A1-A4), the offline package (O1-O4) and the prefetch config
/// (PF1-PF3) with the recording's scenario.
///
/// A sibling of `Mitigation` rather than a conformance to it: these parts have no kind or
/// options a preset file lists among its mitigations, a preset's mitigation list never holds
/// them (the scenario's parts join each preset's hooks for one replay, after its own), and
/// their hooks read what the replay input worked out once for the recording (the package's
/// verdict per exchange, the config's matched page loads), not the preset.
protocol SessionPart: Sendable {
    /// Every rule a change of this part can cite.
    var citedRules: [RuleID] { get }
    /// The moments it acts at.
    var hooks: MitigationHooks { get }
}

/// The moments of a load at which a mitigation or a session part can act, each an optional hook.
public struct MitigationHooks: Sendable {
    /// The request as the page issued it, after the strategy planned its transport: the
    /// hook changes the outcome (body, URL, headers) and records each change with its rule.
    public var requestIssued: (@Sendable (_ outcome: inout Outcome, _ request: IssuedRequest) -> Void)?
    /// The request as the page issued it, as its cookies go: the host a native session
    /// reads and stores them under when it sends the request to another (D1, D2: an
    /// HTTPDNS IP), nil for the request's own.
    public var cookieHost: (@Sendable (_ request: IssuedRequest) -> CookieHost?)?
    /// A document load of the main frame: the Cookie header the app gives `loadRequest`
    /// instead of the one WebKit would build (C1), and on its redirect hops (C2).
    public var documentLoadCookies: (@Sendable (_ load: DocumentLoad) -> LoadCookieHeader?)?
    /// A Set-Cookie the transport stored in a jar: a copy the app schedules to the other (C7).
    public var setCookieStored: (@Sendable (_ stored: StoredCookie) -> JarCopy?)?
    /// Document start of the main frame: what a user script writes to `document.cookie` (C3-C6).
    public var documentStart: (@Sendable (_ start: DocumentStart) -> [DocumentCookieWrite])?
    /// A `document.cookie` write by the page: what a hooked setter does with it (C8, C9).
    public var scriptCookieWritten: (@Sendable (_ write: ScriptCookieWrite) -> ScriptWriteEffect)?
    /// A `document.cookie` deletion by the page (an expired write): the jar a redefined
    /// setter takes it to instead of WebJar, nil when WebJar takes it (CAPC1, CAPC3).
    public var scriptCookieDeleted: (@Sendable (_ write: ScriptCookieWrite) -> JarSide?)?
    /// Before the web view loads its first document: a jar copied into the other, the load
    /// waiting for it (RNW1).
    public var beforeFirstLoad: (@Sendable () -> JarMirror?)?
    /// A Set-Cookie arriving at WebJar: the rule by which WebJar ignores it, nil when stored
    /// (ION3: not on the app's first launch).
    public var webSetCookieArriving: (@Sendable (_ arrival: SetCookieArrival) -> RuleID?)?
    /// A load about to go, before its transport is planned: what answers it without the
    /// server (A3, A4: the app's bundle; O4: a later hop of a chain the offline package
    /// answered), nil when it goes. The hook notes its changes on the outcome; the step
    /// applies the answer and ends the exchange.
    public var loadAboutToGo: (@Sendable (_ outcome: inout Outcome, _ load: PendingLoad) -> LoadAnswer?)?
    /// A load whose transport is planned, as it reaches the app's interceptor: what the app
    /// answers it with itself (O1-O3: the offline package's file), nil when it goes on to
    /// the server. A hook that answers nothing may still note what the interceptor did to
    /// the request on its way (CDV3, TAU2: a framework's handler losing the body).
    public var loadAtInterceptor: (@Sendable (_ outcome: inout Outcome, _ load: PendingLoad, _ plan: TransportPlan) -> LoadAnswer?)?
    /// A main-frame document load starts (its first hop): the API calls native code makes
    /// for the page (PF1-PF3), nil when it makes none.
    public var pageLoadStarts: (@Sendable (_ load: PendingLoad) -> PrefetchPage?)?
    /// How the jars exchange cookies under this mitigation, when it replaces the system's
    /// J1-J3 (RNW2, CAPC2).
    public var jarLink: JarLink?

    public init(
        requestIssued: (@Sendable (_ outcome: inout Outcome, _ request: IssuedRequest) -> Void)? = nil,
        cookieHost: (@Sendable (_ request: IssuedRequest) -> CookieHost?)? = nil,
        documentLoadCookies: (@Sendable (_ load: DocumentLoad) -> LoadCookieHeader?)? = nil,
        setCookieStored: (@Sendable (_ stored: StoredCookie) -> JarCopy?)? = nil,
        documentStart: (@Sendable (_ start: DocumentStart) -> [DocumentCookieWrite])? = nil,
        scriptCookieWritten: (@Sendable (_ write: ScriptCookieWrite) -> ScriptWriteEffect)? = nil,
        scriptCookieDeleted: (@Sendable (_ write: ScriptCookieWrite) -> JarSide?)? = nil,
        beforeFirstLoad: (@Sendable () -> JarMirror?)? = nil,
        webSetCookieArriving: (@Sendable (_ arrival: SetCookieArrival) -> RuleID?)? = nil,
        loadAboutToGo: (@Sendable (_ outcome: inout Outcome, _ load: PendingLoad) -> LoadAnswer?)? = nil,
        loadAtInterceptor: (@Sendable (_ outcome: inout Outcome, _ load: PendingLoad, _ plan: TransportPlan) -> LoadAnswer?)? = nil,
        pageLoadStarts: (@Sendable (_ load: PendingLoad) -> PrefetchPage?)? = nil,
        jarLink: JarLink? = nil
    ) {
        self.requestIssued = requestIssued
        self.cookieHost = cookieHost
        self.documentLoadCookies = documentLoadCookies
        self.setCookieStored = setCookieStored
        self.documentStart = documentStart
        self.scriptCookieWritten = scriptCookieWritten
        self.scriptCookieDeleted = scriptCookieDeleted
        self.beforeFirstLoad = beforeFirstLoad
        self.webSetCookieArriving = webSetCookieArriving
        self.loadAboutToGo = loadAboutToGo
        self.loadAtInterceptor = loadAtInterceptor
        self.pageLoadStarts = pageLoadStarts
        self.jarLink = jarLink
    }

    /// How many moments these hooks act at.
    public var count: Int {
        [requestIssued != nil, cookieHost != nil, documentLoadCookies != nil, setCookieStored != nil, documentStart != nil, scriptCookieWritten != nil, scriptCookieDeleted != nil,
         beforeFirstLoad != nil, webSetCookieArriving != nil, loadAboutToGo != nil, loadAtInterceptor != nil, pageLoadStarts != nil, jarLink != nil].filter { $0 }.count
    }
}

/// How NativeJar and WebJar exchange cookies.
public enum JarLink: Sendable, Hashable {
    /// The system carries changes both ways after a delay (J1-J3).
    case system
    /// The jars never exchange cookies (TAU3: the HTTP plugin's jar is its own).
    case separate(rule: RuleID)
    /// An observer carries the other jar's additions to `to` at once, by `rule`; the other
    /// way stays J1-J3, but for the deletions `deletions` holds back.
    case observed(to: JarSide, rule: RuleID, deletions: HeldDeletions)
    /// The system carries additions and changes (J1, J3), and copies that only set cookies
    /// keep deletions where they happened (CAPC3).
    case systemHolding(deletions: HeldDeletions)
}

/// Deletions a jar link never carries (the copies between the jars set cookies and never
/// remove one).
public enum HeldDeletions: Sendable, Hashable {
    /// Deletions never reach the observed jar, by the rule (RNW2).
    case towardObserved(RuleID)
    /// Deletions reach neither jar from the other, by the rule (CAPC3).
    case eitherWay(RuleID)
}

/// A Set-Cookie on its way into WebJar.
public struct SetCookieArrival: Sendable {
    public var name: String
    /// The scenario says the recording is the app's first launch after install.
    public var firstLaunch: Bool
}

/// Every cookie of one jar copied into the other, now, by a rule (RNW1, CAPC2).
public struct JarMirror: Sendable, Hashable {
    public var from: JarSide
    public var to: JarSide
    public var rule: RuleID

    public init(from: JarSide, to: JarSide, rule: RuleID) {
        self.from = from
        self.to = to
        self.rule = rule
    }
}

// MARK: - The moments

/// A request the page issued (the first hop of a load), with the strategy's plan.
///
/// A class, handed to every mitigation's hook as one reference: a hook is called through
/// a list of closures, and as a struct (an exchange, a plan and a context, two dozen
/// references between them) each call copied it whole and destroyed the copy after,
/// about 1,800 instructions a hook.
public final class IssuedRequest: Sendable {
    public let exchange: Exchange
    public let plan: TransportPlan
    public let context: EmulationContext
    let input: ReplayInput
    /// What the replay input computed once for this exchange.
    public var facts: ExchangeFacts { input.facts[exchange.sequence] }

    init(exchange: Exchange, plan: TransportPlan, context: EmulationContext, input: ReplayInput) {
        self.exchange = exchange
        self.plan = plan
        self.context = context
        self.input = input
    }
}

/// A load at one of its moments before the server: about to go, at the app's interceptor,
/// or a page load starting. Only plain values and one reference, built only for a moment
/// some part hooks: a copy of the exchange in it would cost each hook call its references.
public struct PendingLoad: Sendable {
    /// Not counted: a load is built for one moment of a replay and handed to the hooks
    /// borrowed, while the replay holds its input. Counting it cost each load a retain and
    /// a release, about a third of the moment's cost for a preset with an app shell.
    unowned(unsafe) let input: ReplayInput
    public let sequence: Int
    /// The sequence of its redirect chain's first hop (its own for a first hop).
    public let chainStart: Int
    /// 0 for the load itself, then each redirect hop.
    public let hop: Int
    /// Whether the main frame is on the app's bundled page as the load goes (A1-A3).
    public let fromAppPage: Bool
    /// The rule of the answer an earlier hop of its chain was given for the chain's later
    /// hops (`LoadAnswer.chainRule`), nil when none was.
    public let chainAnsweredBy: RuleID?

    /// The recorded exchange, read in place.
    public var exchange: Exchange {
        _read { yield input.recording.exchanges[sequence] }
    }
    /// What the replay input computed once for this exchange.
    public var facts: ExchangeFacts {
        _read { yield input.facts[sequence] }
    }
    /// The main frame's first document load (hop 0), when the recording holds one.
    public var firstDocument: Int? { input.firstDocument }
    /// Where the recorded page was (`ReplayInput.recordedPage`).
    public var recordedPage: RequestTarget? { input.recordedPage }
}

/// What answered a load without the server, for the step to apply: the Set-Cookie it drops
/// from the jars, the chain it stands for, whether the app handled it. The hook that gave
/// it has already noted its changes on the outcome.
public struct LoadAnswer: Sendable, Hashable {
    /// The rule by which the response's Set-Cookie reaches neither jar, the answer carrying
    /// none (O3, O4); nil when the answer keeps nothing out.
    public var dropsSetCookies: RuleID?
    /// The rule by which the answer stands for the later hops of the load's redirect chain,
    /// handed back to the hooks as `PendingLoad.chainAnsweredBy` (A4, O4); nil when it does not.
    public var chainRule: RuleID?
    /// Whether it counts among the exchanges the app handled itself (`interceptedExchanges`).
    public var intercepted: Bool

    public init(dropsSetCookies: RuleID? = nil, chainRule: RuleID? = nil, intercepted: Bool = false) {
        self.dropsSetCookies = dropsSetCookies
        self.chainRule = chainRule
        self.intercepted = intercepted
    }
}

/// The host a request's cookies are read and stored under instead of its own, by a rule.
public struct CookieHost: Sendable, Hashable {
    public var host: String
    public var rule: RuleID

    public init(host: String, rule: RuleID) {
        self.host = host
        self.rule = rule
    }
}

/// A hop of the main frame's first document load.
public struct DocumentLoad: Sendable {
    /// 0 for the load itself, then each redirect hop.
    public var hop: Int
}

/// Which Cookie header a document load carries instead of WebKit's own.
public struct LoadCookieHeader: Sendable, Hashable {
    public enum Source: Sendable, Hashable {
        /// Built from NativeJar when the load starts.
        case nativeJarNow
        /// The header built for the load, carried unchanged on a redirect hop.
        case headerOfLoad
    }
    public var source: Source
    public var rule: RuleID

    public init(source: Source, rule: RuleID) {
        self.source = source
        self.rule = rule
    }
}

/// A cookie a transport stored from a Set-Cookie.
public struct StoredCookie: Sendable {
    public var cookie: Cookie
    public var jar: JarSide
    public var time: Double
    public var profile: Profile
}

/// A copy of a cookie into a jar, due at a time, by a rule.
public struct JarCopy: Sendable, Hashable {
    public var to: JarSide
    public var due: Double
    public var rule: RuleID

    public init(to: JarSide, due: Double, rule: RuleID) {
        self.to = to
        self.due = due
        self.rule = rule
    }
}

/// Document start of the main frame, with the NativeJar cookies for the page.
public struct DocumentStart: Sendable {
    public var nativeCookies: [Cookie]
    public var time: Double
    /// ITP caps script-written cookies (C6, from iOS 14).
    public var capsScriptCookies: Bool
}

/// What a document-start script does with one cookie.
public enum DocumentCookieWrite: Sendable, Hashable {
    /// Written to WebJar (possibly changed, e.g. its expiry capped), with the rules on its way.
    case written(Cookie, rules: [RuleID])
    /// Not written, by `rule` (C3: HttpOnly; C4: a value the script cannot quote).
    case blocked(name: String, rule: RuleID)
}

/// A `document.cookie` write by the page.
public struct ScriptCookieWrite: Sendable {
    public var cookie: Cookie
    /// When the script wrote it.
    public var time: Double
    /// The document of the frame that wrote it.
    public var page: RequestTarget?
    /// Whether that document is the app's own page on its custom scheme (A3), not a page
    /// the web view went on to load from a server.
    public var onAppPage: Bool
    /// Whether that frame is the main frame, where an app's user scripts for the main
    /// frame only (Capacitor's bridge, CAP2) run.
    public var inMainFrame: Bool
    public var profile: Profile
}

/// What a hooked `document.cookie` setter does with a write.
public struct ScriptWriteEffect: Sendable, Hashable {
    /// What becomes of the write in WebJar, where the page's own setter puts it.
    public enum PageWrite: Sendable, Hashable {
        case kept
        /// The setter is redefined and writes elsewhere instead (CAPC1); the write reaches
        /// WebJar only by `copiedBack`, when there is one (CAPC2).
        case replaced(by: RuleID, copiedBack: JarCopy?)
        /// The write is stored nowhere (CDV2, ION2).
        case lost(by: RuleID)
    }
    /// A copy to NativeJar (C8).
    public var copy: JarCopy?
    /// The hook accepted a cookie for a site the page may not set (C9).
    public var acceptedCrossSite: Bool
    public var pageWrite: PageWrite

    public init(copy: JarCopy?, acceptedCrossSite: Bool, pageWrite: PageWrite = .kept) {
        self.copy = copy
        self.acceptedCrossSite = acceptedCrossSite
        self.pageWrite = pageWrite
    }
}

/// Every hook of a preset's mitigations and of its app shell, gathered once per preset in
/// preset order, the shell's last; a scenario's parts (offline package, prefetch config)
/// join after them for a replay (`joined`). A class of constants, so a preset's copy
/// shares it rather than copying a dozen arrays.
final class ComposedHooks: Sendable {
    let requestIssued: [@Sendable (_ outcome: inout Outcome, _ request: IssuedRequest) -> Void]
    let cookieHost: [@Sendable (_ request: IssuedRequest) -> CookieHost?]
    let documentLoadCookies: [@Sendable (_ load: DocumentLoad) -> LoadCookieHeader?]
    let setCookieStored: [@Sendable (_ stored: StoredCookie) -> JarCopy?]
    let documentStart: [@Sendable (_ start: DocumentStart) -> [DocumentCookieWrite]]
    let scriptCookieWritten: [@Sendable (_ write: ScriptCookieWrite) -> ScriptWriteEffect]
    let scriptCookieDeleted: [@Sendable (_ write: ScriptCookieWrite) -> JarSide?]
    let beforeFirstLoad: [@Sendable () -> JarMirror?]
    let webSetCookieArriving: [@Sendable (_ arrival: SetCookieArrival) -> RuleID?]
    let loadAboutToGo: [@Sendable (_ outcome: inout Outcome, _ load: PendingLoad) -> LoadAnswer?]
    let loadAtInterceptor: [@Sendable (_ outcome: inout Outcome, _ load: PendingLoad, _ plan: TransportPlan) -> LoadAnswer?]
    let pageLoadStarts: [@Sendable (_ load: PendingLoad) -> PrefetchPage?]
    /// The first part's link (a mitigation's, else the app shell's), else the strategy's.
    let jarLink: JarLink
    /// Each part's hooks in order, and the strategy's link, for `joined`.
    let parts: [MitigationHooks]
    let strategyLink: JarLink

    convenience init(_ mitigations: [any Mitigation], strategy: any InterceptionStrategy, app: AppShell? = nil) {
        var parts = mitigations.map(\.hooks)
        if let app { parts.append(app.hooks) }
        self.init(parts, strategyLink: strategy.jarLink)
    }

    init(_ hooks: [MitigationHooks], strategyLink: JarLink) {
        requestIssued = hooks.compactMap(\.requestIssued)
        cookieHost = hooks.compactMap(\.cookieHost)
        documentLoadCookies = hooks.compactMap(\.documentLoadCookies)
        setCookieStored = hooks.compactMap(\.setCookieStored)
        documentStart = hooks.compactMap(\.documentStart)
        scriptCookieWritten = hooks.compactMap(\.scriptCookieWritten)
        scriptCookieDeleted = hooks.compactMap(\.scriptCookieDeleted)
        beforeFirstLoad = hooks.compactMap(\.beforeFirstLoad)
        webSetCookieArriving = hooks.compactMap(\.webSetCookieArriving)
        loadAboutToGo = hooks.compactMap(\.loadAboutToGo)
        loadAtInterceptor = hooks.compactMap(\.loadAtInterceptor)
        pageLoadStarts = hooks.compactMap(\.pageLoadStarts)
        jarLink = hooks.firstNonNil(\.jarLink) ?? strategyLink
        parts = hooks
        self.strategyLink = strategyLink
    }

    /// These hooks with `more` after them: a scenario's parts for one replay.
    func joined(_ more: [MitigationHooks]) -> ComposedHooks {
        more.isEmpty ? self : ComposedHooks(parts + more, strategyLink: strategyLink)
    }
}
