import TrafficModel

/// `WKHTTPCookieStore.setCookie` for every Set-Cookie the interceptor sees (C7).
public struct CookieStoreSync: Mitigation {
    public init() {}
    public var options: [String: String] { [:] }
    public var citedRules: [RuleID] { ["C7"] }

    public var hooks: MitigationHooks {
        MitigationHooks(setCookieStored: { stored in
            // C7: a cookie the interceptor stored in NativeJar is handed to WKHTTPCookieStore.
            guard stored.jar == .native else { return nil }
            return JarCopy(to: .web, due: stored.time + stored.profile.cookieStoreSyncDelay, rule: "C7")
        })
    }
}

extension CookieStoreSync: PresetPart {
    public static var kindName: String { "cookie-store-sync" }
    public init(options: NoOptions) {}
}
