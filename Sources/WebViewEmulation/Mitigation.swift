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

/// The moments of a load at which a mitigation can act, each an optional hook.
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
        self.jarLink = jarLink
    }

    /// How many moments these hooks act at.
    public var count: Int {
        [requestIssued != nil, cookieHost != nil, documentLoadCookies != nil, setCookieStored != nil, documentStart != nil, scriptCookieWritten != nil, scriptCookieDeleted != nil,
         beforeFirstLoad != nil, webSetCookieArriving != nil, jarLink != nil].filter { $0 }.count
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

/// Every hook of a preset's mitigations, gathered once per preset in preset order. A class
/// of constants, so a preset's copy shares it rather than copying eight arrays.
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
    /// The first mitigation's link, else the app shell's, else the strategy's.
    let jarLink: JarLink

    init(_ mitigations: [any Mitigation], strategy: any InterceptionStrategy, app: AppShell? = nil) {
        let hooks = mitigations.map(\.hooks)
        requestIssued = hooks.compactMap(\.requestIssued)
        cookieHost = hooks.compactMap(\.cookieHost)
        documentLoadCookies = hooks.compactMap(\.documentLoadCookies)
        setCookieStored = hooks.compactMap(\.setCookieStored)
        documentStart = hooks.compactMap(\.documentStart)
        scriptCookieWritten = hooks.compactMap(\.scriptCookieWritten)
        scriptCookieDeleted = hooks.compactMap(\.scriptCookieDeleted)
        beforeFirstLoad = hooks.compactMap(\.beforeFirstLoad)
        webSetCookieArriving = hooks.compactMap(\.webSetCookieArriving)
        jarLink = hooks.lazy.compactMap(\.jarLink).first ?? app?.jarLink ?? strategy.jarLink
    }
}
