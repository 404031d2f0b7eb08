/// `loadRequest` carries a Cookie header built from NativeJar (seeds 002, 003; C1, C2).
public struct CookieHeaderOnLoad: Mitigation {
    /// C2: whether the header follows a server redirect (default carried; seed 003 says dropped).
    public var carriedOnRedirect: Bool

    public init(carriedOnRedirect: Bool = true) {
        self.carriedOnRedirect = carriedOnRedirect
    }

    public var kind: String { "cookie-header-on-load" }
    public var options: [String: String] { ["redirects": carriedOnRedirect ? "carried" : "dropped"] }
}

/// A document-start user script writes NativeJar into `document.cookie`
/// (seeds 000, 002; C3-C6).
public struct CookieScriptInject: Mitigation {
    public init() {}
    public var kind: String { "cookie-script-inject" }
    public var options: [String: String] { [:] }
}

/// `WKHTTPCookieStore.setCookie` for every Set-Cookie the interceptor sees (C7).
public struct CookieStoreSync: Mitigation {
    public init() {}
    public var kind: String { "cookie-store-sync" }
    public var options: [String: String] { [:] }
}

/// `document.cookie`'s setter also sends the cookie to NativeJar (seeds 000, 001, 004; C8, C9).
public struct CookieSetterHook: Mitigation {
    /// C8: NetEase writes synchronously before the page's write; KKJSBridge asynchronously.
    public var synchronous: Bool
    /// C9: whether the native side checks that the page may set the cookie's domain.
    public var checksDomain: Bool

    public init(synchronous: Bool, checksDomain: Bool = false) {
        self.synchronous = synchronous
        self.checksDomain = checksDomain
    }

    public var kind: String { "cookie-setter-hook" }
    public var options: [String: String] { ["mode": synchronous ? "sync" : "async", "domain-check": String(checksDomain)] }
}

/// The cookie mitigations of a preset, looked up once per replay.
struct CookieMitigations {
    var headerOnLoad: CookieHeaderOnLoad?
    var scriptInject: CookieScriptInject?
    var storeSync: CookieStoreSync?
    var setterHook: CookieSetterHook?

    init(_ mitigations: [any Mitigation]) {
        for m in mitigations {
            if let m = m as? CookieHeaderOnLoad { headerOnLoad = m }
            if let m = m as? CookieScriptInject { scriptInject = m }
            if let m = m as? CookieStoreSync { storeSync = m }
            if let m = m as? CookieSetterHook { setterHook = m }
        }
    }
}
