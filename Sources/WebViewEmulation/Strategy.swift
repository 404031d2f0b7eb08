import TrafficModel

/// Which of the two jars a transport reads or writes (BEHAVIOUR.md section 1).
public enum JarSide: String, Sendable, Hashable, Codable {
    case native, web

    public var other: JarSide { self == .native ? .web : .native }
    /// `NativeJar` or `WebJar`, as the model names them.
    public var jarName: String { self == .native ? "NativeJar" : "WebJar" }
}

/// How a redirect chain is followed, and so what the page sees.
public enum RedirectHandling: String, Sendable, Hashable, Codable {
    /// WebKit follows each hop itself: the page sees every hop and ends at the last URL.
    case engine
    /// A native session follows the chain and hands the final response to the page under
    /// the original URL (P4 silent, S5 silent).
    case silent
    /// WebKit is told of each hop and follows, but each hop crosses IPC again (P4 forwarded).
    case forwarded
}

/// What a strategy does to one load: a request the page issued and, when it redirects,
/// the hops that follow. Each decision carries the rule that makes it.
public struct TransportPlan: Sendable, Hashable {
    public var requestJar: JarSide
    public var requestJarRule: RuleID
    public var responseJar: JarSide
    public var responseJarRule: RuleID
    /// The rule that empties the page's request body, nil when it arrives.
    public var bodyLostBy: RuleID?
    public var redirects: RedirectHandling
    public var redirectRule: RuleID

    public init(requestJar: JarSide, requestJarRule: RuleID, responseJar: JarSide, responseJarRule: RuleID, bodyLostBy: RuleID?, redirects: RedirectHandling, redirectRule: RuleID) {
        self.requestJar = requestJar
        self.requestJarRule = requestJarRule
        self.responseJar = responseJar
        self.responseJarRule = responseJarRule
        self.bodyLostBy = bodyLostBy
        self.redirects = redirects
        self.redirectRule = redirectRule
    }
}

/// What the emulator knows while planning a load.
public struct EmulationContext: Sendable {
    public var profile: Profile
    public var scenario: Scenario

    public init(profile: Profile, scenario: Scenario) {
        self.profile = profile
        self.scenario = scenario
    }
}

/// An interception strategy: the transport path a WKWebView's traffic takes
/// (BEHAVIOUR.md section 3). A small value with one job, composed into a preset.
public protocol InterceptionStrategy: Sendable {
    /// `native`, `urlprotocol`, `schemehandler`.
    var kind: String { get }
    /// Options in `key=value` form, for listings.
    var options: [String: String] { get }
    func plan(for exchange: Exchange, in context: EmulationContext) -> TransportPlan
}

// MARK: - native

/// Plain WKWebView, no interception (N1, N2; N3 and N4 act through the jars).
public struct NativeStrategy: InterceptionStrategy {
    public init() {}
    public var kind: String { "native" }
    public var options: [String: String] { [:] }

    public func plan(for exchange: Exchange, in context: EmulationContext) -> TransportPlan {
        TransportPlan(requestJar: .web, requestJarRule: "N2", responseJar: .web, responseJarRule: "N2", bodyLostBy: nil, redirects: .engine, redirectRule: "N1")
    }
}

// MARK: - urlprotocol

/// NSURLProtocol registered for http and https through `registerSchemeForCustomProtocol:`.
public struct URLProtocolStrategy: InterceptionStrategy {
    /// P4: `silent` (dataTask with a completion handler) or `forwarded`
    /// (`wasRedirectedToRequest:`).
    public var redirects: RedirectHandling

    public init(redirects: RedirectHandling = .silent) {
        self.redirects = redirects
    }

    public var kind: String { "urlprotocol" }
    public var options: [String: String] { ["redirects": redirects.rawValue] }

    public func plan(for exchange: Exchange, in context: EmulationContext) -> TransportPlan {
        TransportPlan(
            requestJar: .native, requestJarRule: "P3",  // P3: re-sent natively with NativeJar cookies
            responseJar: .native, responseJarRule: "P3",  // P3: Set-Cookie lands in NativeJar
            bodyLostBy: exchange.request.body.isEmpty ? nil : "P1",  // P1: no HTTPBody across IPC
            redirects: redirects, redirectRule: "P4")
    }
}

// MARK: - schemehandler

/// WKURLSchemeHandler for http and https, by hooking `handlesURLScheme:`.
public struct SchemeHandlerStrategy: InterceptionStrategy {
    /// S5: only `silent` is built so far; `reload-document` and `spi` come with the
    /// full behaviour model.
    public var redirects: RedirectHandling

    public init(redirects: RedirectHandling = .silent) {
        self.redirects = redirects
    }

    public var kind: String { "schemehandler" }
    public var options: [String: String] { ["redirects": redirects.rawValue] }

    public func plan(for exchange: Exchange, in context: EmulationContext) -> TransportPlan {
        var lostBy: RuleID?
        if !exchange.request.body.isEmpty {
            if context.profile.ios < IOSVersion(11, 3) {
                lostBy = "S1"  // S1: before iOS 11.3 every body is lost
            } else if exchange.bodyKind.isBlobBacked(binaryAsBlob: context.scenario.binaryAsBlob) {
                lostBy = "S2"  // S2: a Blob-backed body arrives empty
            }
        }
        return TransportPlan(
            requestJar: .native, requestJarRule: "S7",  // S7: NativeJar cookies
            responseJar: .native, responseJarRule: "S6",  // S6: Set-Cookie not applied to WebJar
            bodyLostBy: lostBy,
            redirects: redirects, redirectRule: "S5")
    }
}
