import TrafficModel

/// `document.cookie`'s setter also sends the cookie to NativeJar (C8, C9).
public struct CookieSetterHook: Mitigation {
    /// C8: NetEase writes synchronously before the page's write; KKJSBridge asynchronously.
    public var synchronous: Bool
    /// C9: whether the native side checks that the page may set the cookie's domain.
    public var checksDomain: Bool

    public init(synchronous: Bool, checksDomain: Bool = false) {
        self.synchronous = synchronous
        self.checksDomain = checksDomain
    }

    public var options: [String: String] { ["mode": synchronous ? "sync" : "async", "domain-check": String(checksDomain)] }
    public var citedRules: [RuleID] { ["C8", "C9"] }

    public var hooks: MitigationHooks {
        MitigationHooks(scriptCookieWritten: { write in
            // C8: the hook sends the write to NativeJar too.
            let delay = synchronous ? 0 : write.profile.cookieSetterHookDelay
            // C9: a hook that does not check the domain accepts a cookie for another site.
            let crossSite = !checksDomain && write.page.map { Site.of(host: write.cookie.domain) != $0.site } == true
            return ScriptWriteEffect(copy: JarCopy(to: .native, due: write.time + delay, rule: "C8"), acceptedCrossSite: crossSite)
        })
    }
}

extension CookieSetterHook: PresetPart {
    public static var kindName: String { "cookie-setter-hook" }
    /// C8: a synchronous hook writes NativeJar before the next request; C9: a hook that
    /// checks the domain refuses another site's cookie.
    public static var choices: [OptionChoice] {
        [OptionChoice("synchronous", default: "false", counters: ["true"], rules: ["C8"]), OptionChoice("checksDomain", default: "false", counters: ["true"], rules: ["C9"])]
    }

    public struct Options: PartOptions {
        public var synchronous: Bool?
        public var checksDomain: Bool?
        enum CodingKeys: String, CodingKey, CaseIterable { case synchronous, checksDomain }
        public static let keys = CodingKeys.allCases.map(\.stringValue)
    }

    public init(options: Options) {
        self.init(synchronous: options.synchronous ?? false, checksDomain: options.checksDomain ?? false)
    }
}
