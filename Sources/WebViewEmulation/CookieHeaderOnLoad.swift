import TrafficModel

/// `loadRequest` carries a Cookie header built from NativeJar (C1, C2).
public struct CookieHeaderOnLoad: Mitigation {
    /// C2: whether the header follows a server redirect (default carried; the notes headed 记录一下 WKWebView 相关使用, untitled and undated says dropped).
    public var carriedOnRedirect: Bool

    public init(carriedOnRedirect: Bool = true) {
        self.carriedOnRedirect = carriedOnRedirect
    }

    public var options: [String: String] { ["redirects": carriedOnRedirect ? "carried" : "dropped"] }
    public var citedRules: [RuleID] { ["C1", "C2"] }

    public var hooks: MitigationHooks {
        MitigationHooks(documentLoadCookies: { load in
            // C1: the load's header is built from NativeJar; C2: a redirect hop carries it as is.
            if load.hop == 0 { return LoadCookieHeader(source: .nativeJarNow, rule: "C1") }
            return carriedOnRedirect ? LoadCookieHeader(source: .headerOfLoad, rule: "C2") : nil
        })
    }
}

extension CookieHeaderOnLoad: PresetPart {
    public static var kindName: String { "cookie-header-on-load" }
    /// C2: a header not carried on a redirect sends no stale or foreign cookie there.
    public static var choices: [OptionChoice] { [OptionChoice("carriedOnRedirect", default: "true", counters: ["false"], rules: ["C2"])] }

    public struct Options: PartOptions {
        public var carriedOnRedirect: Bool?
        enum CodingKeys: String, CodingKey, CaseIterable { case carriedOnRedirect }
        public static let keys = CodingKeys.allCases.map(\.stringValue)
    }

    public init(options: Options) {
        self.init(carriedOnRedirect: options.carriedOnRedirect ?? true)
    }
}
