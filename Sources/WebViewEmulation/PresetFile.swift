import Foundation
import TrafficModel

/// Preset and profile files: how a team describes its own app without touching Swift.
///
/// A preset file is a JSON object (or an array of them):
///
///     {"name": "our-app", "summary": "what the app does",
///      "strategy": {"kind": "urlprotocol", "redirects": "silent"},
///      "mitigations": [{"kind": "body-bridge", "covers": ["xhr", "fetch"], "idParameter": "rid", "stripsId": true},
///                      {"kind": "cookie-setter-hook", "synchronous": true, "checksDomain": true}],
///      "profile": {"jarSyncDelay": 0.3}}
///
/// Strategy kinds: `native`; `urlprotocol` (redirects `silent` or `forwarded`);
/// `schemehandler` (redirects `silent`, `reload-document` or `spi`); `jsproxy` (`base`: a
/// strategy, `hooksFetch`, `serialisesBinary`). Mitigation kinds: `body-bridge`
/// (`covers`, `idParameter`, `stripsId`, `when`: `always` or `below-11.3-or-blob`,
/// `relaysFrames`, `rebuildsFormData`, `rejoinsURLSearchParams`, `markerHeader`),
/// `body-in-header` (`header`, `base64Binary`, `sizeLimit`), `cookie-header-on-load`
/// (`carriedOnRedirect`), `cookie-script-inject`, `cookie-store-sync`,
/// `cookie-setter-hook` (`synchronous`, `checksDomain`).
/// Framework kinds: strategies `capacitor-http` and `tauri-http-plugin`; mitigations
/// `capacitor-cookies`, `script-cookies-lost` (`rule`), `shared-cookies`,
/// `first-launch-cookies-ignored`, `ajax-interception` and `httpdns` (`hosts`: name to IP,
/// `certificateHostCheck`, `sni`, `copiesCookies`). A framework that serves the page from its own scheme says so with
/// `"app": {"framework": "capacitor", "scheme": "capacitor", "hostname": "localhost",
/// "handlerBodies": "kept"}` (`framework`: capacitor, cordova, ionic-webview, tauri or
/// other; `handlerBodies`: kept, formdata-file-lost, post-lost or
/// post-lost-under-dev-server, the scenario's `devServer` saying when; Cordova's `https`
/// scheme falls back to `app`, CDV1; `"cookieObserver": true` for a Capacitor app that
/// keeps the web view's cookie observer alive itself, which no release does, CAP3).
/// `"version": "7.4.2"` replays a framework preset at that release (the framework is the
/// app's, or the one the strategy or a mitigation belongs to); without it, the newest the
/// model knows.
/// A profile object (in a preset, or a `--profile-file`) overrides any of `ios`,
/// `simulator`, `jarSyncDelay`, `jarDeletionDelay`, `scriptWriteDelay` (null: never),
/// `cookieStoreSyncDelay`, `cookieSetterHookDelay`, `itp`.
public enum PresetFile {
    public struct Error: Swift.Error, CustomStringConvertible, Sendable {
        public let file: String
        public let place: String
        public let problem: String
        public var description: String { "\(file): \(place): \(problem)" }
    }

    public static func load(_ data: Data, file: String) throws -> [Preset] {
        var notes: [String] = []
        return try load(data, file: file, notes: &notes)
    }

    /// The presets of a file, and a note for each `version` newer than the model knows
    /// (replayed as the newest).
    public static func load(_ data: Data, file: String, notes: inout [String]) throws -> [Preset] {
        guard let json = try? JSONSerialization.jsonObject(with: data) else { throw Error(file: file, place: "(file)", problem: "not valid JSON") }
        let objects: [[String: Any]]
        if let one = json as? [String: Any] {
            objects = [one]
        } else if let many = json as? [[String: Any]] {
            objects = many
        } else {
            throw Error(file: file, place: "(file)", problem: "expected a preset object or an array of them")
        }
        return try objects.enumerated().map { i, o in
            let (preset, note) = try self.preset(o, file: file, place: objects.count > 1 ? "[\(i)]" : "")
            if let note { notes.append("\(file): \(note)") }
            return preset
        }
    }

    /// The framework a preset file's preset belongs to: its app's, else its strategy's or a
    /// mitigation's.
    static func component(app: String?, strategy: any InterceptionStrategy, mitigations: [any Mitigation]) -> Component? {
        let byApp: [String: Component] = ["capacitor": .capacitor, "cordova": .cordovaIOS, "ionic-webview": .ionicWebView, "tauri": .tauri]
        let byKind: [String: Component] = ["capacitor-http": .capacitor, "tauri-http-plugin": .tauri, "capacitor-cookies": .capacitor,
            "ajax-interception": .flutterInAppWebView, "shared-cookies": .reactNativeWebView]
        return app.flatMap { byApp[$0] } ?? byKind[strategy.kind] ?? mitigations.lazy.compactMap { byKind[$0.kind] }.first
    }

    static func preset(_ o: [String: Any], file: String, place: String) throws -> (Preset, note: String?) {
        let r = Reader(object: o, file: file, place: place)
        try r.only(["name", "summary", "strategy", "mitigations", "profile", "app", "framework", "version", "comment"])
        let name = try r.string("name")
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." }) else {
            throw Error(file: file, place: r.path("name"), problem: "a preset name is letters, digits, '-', '_' or '.'")
        }
        guard let strategyObject = o["strategy"] as? [String: Any] else { throw Error(file: file, place: r.path("strategy"), problem: "an object with a kind is required") }
        let strategy = try self.strategy(strategyObject, file: file, place: r.path("strategy"))
        var mitigations: [any Mitigation] = []
        if let list = o["mitigations"] {
            guard let items = list as? [[String: Any]] else { throw Error(file: file, place: r.path("mitigations"), problem: "expected an array of objects") }
            for (i, item) in items.enumerated() { mitigations.append(try mitigation(item, file: file, place: r.path("mitigations[\(i)]"))) }
        }
        var app: AppShell?
        if let a = o["app"] {
            guard let ao = a as? [String: Any] else { throw Error(file: file, place: r.path("app"), problem: "expected an object with a scheme") }
            app = try appShell(ao, file: file, place: r.path("app"))
        }
        if app == nil, let i = mitigations.firstIndex(where: { $0.kind == "script-cookies-lost" }) {
            // CDV2, ION2 are about a page on the app's own scheme: without one they never apply.
            throw Error(file: file, place: r.path("mitigations[\(i)]"), problem: "script-cookies-lost applies to the app's own page; add an \"app\" (for Cordova: {\"framework\": \"cordova\", \"scheme\": \"app\"})")
        }
        var preset = Preset(name: name, summary: try r.optionalString("summary") ?? "from \((file as NSString).lastPathComponent)", framework: try r.optionalString("framework"), app: app, strategy: strategy, mitigations: mitigations)
        if let profile = o["profile"] {
            guard let p = profile as? [String: Any] else { throw Error(file: file, place: r.path("profile"), problem: "expected an object") }
            preset.profileOverride = try ProfileOverride.parse(p, file: file, place: r.path("profile"))
        }
        if let component = component(app: (o["app"] as? [String: Any])?["framework"] as? String, strategy: strategy, mitigations: mitigations) {
            preset.release = Preset.Release(component: component, baseName: name)
        }
        guard let text = try r.optionalString("version") else { return (preset, nil) }
        guard preset.release != nil else {
            throw Error(file: file, place: r.path("version"), problem: "a version picks a framework's release; this preset names no framework (an app, or a framework's strategy or mitigation)")
        }
        guard let version = SemanticVersion(text) else { throw Error(file: file, place: r.path("version"), problem: "a release such as 7.4.2") }
        do {
            let (versioned, note) = try preset.at(version, typed: name)
            return (versioned, note)
        } catch let error as Preset.VersionRequest {
            throw Error(file: file, place: r.path("version"), problem: error.description)
        }
    }

    /// The framework's origin rule, by the name a preset file gives it.
    static let originRules: [String: (rule: RuleID, scheme: String)] = [
        "capacitor": ("CAP1", "capacitor"), "cordova": ("CDV1", "app"), "ionic-webview": ("ION1", "ionic"), "tauri": ("TAU1", "tauri"), "other": ("A1", ""),
    ]

    static func appShell(_ o: [String: Any], file: String, place: String) throws -> AppShell {
        let r = Reader(object: o, file: file, place: place)
        try r.only(["framework", "scheme", "hostname", "handlerBodies", "cookieObserver", "comment"])
        let framework = try r.optionalString("framework") ?? "other"
        guard let (rule, defaultScheme) = originRules[framework] else {
            throw Error(file: file, place: r.path("framework"), problem: "one of \(originRules.keys.sorted().joined(separator: ", "))")
        }
        // CAP3: Capacitor registers a cookie observer (PR #6086) that nothing retains, so it
        // never fires; an app that keeps one alive itself says `"cookieObserver": true`.
        let observer = try r.optionalBool("cookieObserver")
        if observer != nil && framework != "capacitor" {
            throw Error(file: file, place: r.path("cookieObserver"), problem: "only Capacitor's web view has a cookie observer (CAP3); leave it out for \(framework)")
        }
        var scheme = try r.optionalString("scheme") ?? defaultScheme
        guard !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }) else {
            throw Error(file: file, place: r.path("scheme"), problem: "a URL scheme such as capacitor or app")
        }
        // CDV1: cordova-ios falls back to app:// when the scheme is set to https.
        if framework == "cordova" && (scheme == "https" || scheme == "http") { scheme = "app" }
        guard scheme != "http" && scheme != "https" else {
            throw Error(file: file, place: r.path("scheme"), problem: "a page on http(s) is not on an app scheme; leave app out")
        }
        let bodiesText = try r.optionalString("handlerBodies") ?? "kept"
        guard let bodies = AppShell.HandlerBodies(rawValue: bodiesText) else {
            throw Error(file: file, place: r.path("handlerBodies"), problem: "kept, formdata-file-lost, post-lost or post-lost-under-dev-server")
        }
        let bodiesRule: RuleID? = bodies == .formDataWithFileLost ? "CDV3" : bodies == .postLost || bodies == .postLostUnderDevServer ? "TAU2" : nil
        return AppShell(scheme: scheme, host: try r.optionalString("hostname") ?? "localhost", originRule: rule, handlerBodies: bodies, handlerBodiesRule: bodiesRule,
            jarLink: framework == "capacitor" && observer == true ? AppShell.capacitorCookieObserver : nil)
    }

    static func strategy(_ o: [String: Any], file: String, place: String) throws -> any InterceptionStrategy {
        let r = Reader(object: o, file: file, place: place)
        switch try r.string("kind") {
        case "native":
            try r.only(["kind"])
            return NativeStrategy()
        case "urlprotocol":
            try r.only(["kind", "redirects"])
            switch try r.optionalString("redirects") ?? "silent" {
            case "silent": return URLProtocolStrategy(redirects: .silent)
            case "forwarded": return URLProtocolStrategy(redirects: .forwarded)
            default: throw Error(file: file, place: r.path("redirects"), problem: "urlprotocol redirects are silent or forwarded (P4)")
            }
        case "schemehandler":
            try r.only(["kind", "redirects"])
            switch try r.optionalString("redirects") ?? "silent" {
            case "silent": return SchemeHandlerStrategy(redirects: .silent)
            case "reload-document": return SchemeHandlerStrategy(redirects: .reloadDocument)
            case "spi": return SchemeHandlerStrategy(redirects: .engine)
            default: throw Error(file: file, place: r.path("redirects"), problem: "schemehandler redirects are silent, reload-document or spi (S5)")
            }
        case "jsproxy":
            try r.only(["kind", "base", "hooksFetch", "serialisesBinary"])
            var base: any InterceptionStrategy = NativeStrategy()
            if let b = o["base"] {
                guard let bo = b as? [String: Any] else { throw Error(file: file, place: r.path("base"), problem: "expected a strategy object") }
                base = try strategy(bo, file: file, place: r.path("base"))
            }
            return JSProxyStrategy(base: base, hooksFetch: try r.optionalBool("hooksFetch") ?? false, serialisesBinary: try r.optionalBool("serialisesBinary") ?? false)
        case "capacitor-http":
            try r.only(["kind"])
            return CapacitorHttpStrategy()
        case "tauri-http-plugin":
            try r.only(["kind"])
            return TauriHTTPPluginStrategy()
        case let other:
            throw Error(file: file, place: r.path("kind"), problem: "unknown strategy \"\(other)\"; known: native, urlprotocol, schemehandler, jsproxy, capacitor-http, tauri-http-plugin")
        }
    }

    static func mitigation(_ o: [String: Any], file: String, place: String) throws -> any Mitigation {
        let r = Reader(object: o, file: file, place: place)
        switch try r.string("kind") {
        case "body-bridge":
            try r.only(["kind", "covers", "idParameter", "stripsId", "when", "relaysFrames", "rebuildsFormData", "rejoinsURLSearchParams", "markerHeader"])
            var covers: Set<BodyBridge.Coverage> = [.xhr, .fetch]
            if let list = o["covers"] {
                guard let names = list as? [String] else { throw Error(file: file, place: r.path("covers"), problem: "expected an array of xhr, fetch, form.submit") }
                covers = []
                for n in names {
                    guard let c = BodyBridge.Coverage(rawValue: n) else { throw Error(file: file, place: r.path("covers"), problem: "\"\(n)\" is not one of xhr, fetch, form.submit") }
                    covers.insert(c)
                }
            }
            let whenText = try r.optionalString("when") ?? "always"
            guard let when = BodyBridge.When(rawValue: whenText) else { throw Error(file: file, place: r.path("when"), problem: "always or below-11.3-or-blob") }
            return BodyBridge(covers: covers, idParameter: try r.optionalString("idParameter") ?? "requestId", stripsID: try r.optionalBool("stripsId") ?? false, when: when,
                relaysFrames: try r.optionalBool("relaysFrames") ?? false, rebuildsFormData: try r.optionalBool("rebuildsFormData") ?? false,
                rejoinsURLSearchParams: try r.optionalBool("rejoinsURLSearchParams") ?? false, markerHeader: try r.optionalString("markerHeader"))
        case "body-in-header":
            try r.only(["kind", "header", "base64Binary", "sizeLimit"])
            return BodyInHeader(headerName: try r.optionalString("header") ?? "bodyParam", base64Binary: try r.optionalBool("base64Binary") ?? false, sizeLimit: Int(try r.optionalNumber("sizeLimit") ?? Double(2 << 20)))
        case "cookie-header-on-load":
            try r.only(["kind", "carriedOnRedirect"])
            return CookieHeaderOnLoad(carriedOnRedirect: try r.optionalBool("carriedOnRedirect") ?? true)
        case "cookie-script-inject":
            try r.only(["kind"])
            return CookieScriptInject()
        case "cookie-store-sync":
            try r.only(["kind"])
            return CookieStoreSync()
        case "cookie-setter-hook":
            try r.only(["kind", "synchronous", "checksDomain"])
            return CookieSetterHook(synchronous: try r.optionalBool("synchronous") ?? false, checksDomain: try r.optionalBool("checksDomain") ?? false)
        case "capacitor-cookies":
            try r.only(["kind"])
            return CapacitorCookies()
        case "script-cookies-lost":
            try r.only(["kind", "rule"])
            let rule = try r.optionalString("rule") ?? "CDV2"
            guard rule == "CDV2" || rule == "ION2" else { throw Error(file: file, place: r.path("rule"), problem: "CDV2 (Cordova) or ION2 (Ionic WebView)") }
            return ScriptCookiesLost(rule: RuleID(rule))
        case "shared-cookies":
            try r.only(["kind"])
            return SharedCookies()
        case "httpdns":
            try r.only(["kind", "hosts", "certificateHostCheck", "sni", "copiesCookies"])
            guard let hosts = o["hosts"] as? [String: String], !hosts.isEmpty, hosts.values.allSatisfy(Scenario.isIP) else {
                throw Error(file: file, place: r.path("hosts"), problem: "an object of host name to IP address")
            }
            return HTTPDNS(hosts: hosts, certificateHostCheck: try r.optionalBool("certificateHostCheck") ?? true, sni: try r.optionalBool("sni") ?? true, copiesCookies: try r.optionalBool("copiesCookies") ?? false)
        case "first-launch-cookies-ignored":
            try r.only(["kind"])
            return FirstLaunchCookiesIgnored()
        case "ajax-interception":
            try r.only(["kind"])
            return AjaxInterception()
        case let other:
            throw Error(file: file, place: r.path("kind"), problem: "unknown mitigation \"\(other)\"; known: body-bridge, body-in-header, cookie-header-on-load, cookie-script-inject, cookie-store-sync, cookie-setter-hook, capacitor-cookies, script-cookies-lost, shared-cookies, first-launch-cookies-ignored, ajax-interception, httpdns")
        }
    }

    /// Typed reads from a JSON object, naming the key path in every error.
    struct Reader {
        let object: [String: Any]
        let file: String
        let place: String

        func path(_ key: String) -> String { place.isEmpty ? key : "\(place).\(key)" }

        func only(_ keys: Set<String>) throws {
            for key in object.keys where !keys.contains(key) {
                throw Error(file: file, place: path(key), problem: "unknown key; known: \(keys.sorted().joined(separator: ", "))")
            }
        }

        func string(_ key: String) throws -> String {
            guard let s = object[key] as? String else { throw Error(file: file, place: path(key), problem: "a string is required") }
            return s
        }

        func optionalString(_ key: String) throws -> String? {
            guard let v = object[key], !(v is NSNull) else { return nil }
            guard let s = v as? String else { throw Error(file: file, place: path(key), problem: "expected a string") }
            return s
        }

        func optionalBool(_ key: String) throws -> Bool? {
            guard let v = object[key], !(v is NSNull) else { return nil }
            guard let b = v as? Bool else { throw Error(file: file, place: path(key), problem: "expected true or false") }
            return b
        }

        func optionalNumber(_ key: String) throws -> Double? {
            guard let v = object[key], !(v is NSNull) else { return nil }
            guard let n = v as? NSNumber, !(v is Bool) else { throw Error(file: file, place: path(key), problem: "expected a number") }
            return n.doubleValue
        }
    }
}

/// Profile numbers a preset file or a profile file overrides; nil leaves the number alone.
public struct ProfileOverride: Sendable, Hashable {
    public var ios: IOSVersion?
    public var simulator: Bool?
    public var jarSyncDelay: Double?
    public var jarDeletionDelay: Double?
    /// `.some(nil)`: a document.cookie write never reaches NativeJar.
    public var scriptWriteDelay: Double??
    public var cookieStoreSyncDelay: Double?
    public var cookieSetterHookDelay: Double?
    public var itp: Bool?

    public init() {}

    /// Reads a profile object, naming the key of any error.
    public static func parse(_ o: [String: Any], file: String, place: String = "") throws -> ProfileOverride {
        let r = PresetFile.Reader(object: o, file: file, place: place)
        try r.only(["ios", "simulator", "jarSyncDelay", "jarDeletionDelay", "scriptWriteDelay", "cookieStoreSyncDelay", "cookieSetterHookDelay", "itp", "comment"])
        var p = ProfileOverride()
        if let text = try r.optionalString("ios") {
            guard let v = IOSVersion(text), v.isKnown else {
                throw PresetFile.Error(file: file, place: r.path("ios"), problem: "one of \(IOSVersion.supported.map(\.description).joined(separator: ", "))")
            }
            p.ios = v
        }
        p.simulator = try r.optionalBool("simulator")
        func seconds(_ key: String) throws -> Double? {
            guard let v = try r.optionalNumber(key) else { return nil }
            guard v >= 0 else { throw PresetFile.Error(file: file, place: r.path(key), problem: "a delay in seconds, not negative") }
            return v
        }
        p.jarSyncDelay = try seconds("jarSyncDelay")
        p.jarDeletionDelay = try seconds("jarDeletionDelay")
        if o.keys.contains("scriptWriteDelay") { p.scriptWriteDelay = .some(try seconds("scriptWriteDelay")) }
        p.cookieStoreSyncDelay = try seconds("cookieStoreSyncDelay")
        p.cookieSetterHookDelay = try seconds("cookieSetterHookDelay")
        p.itp = try r.optionalBool("itp")
        return p
    }
}

extension Profile {
    /// This profile with an override's numbers; a new iOS version or device kind first
    /// resets the numbers that depend on it.
    public func applying(_ o: ProfileOverride) -> Profile {
        var p = self
        if o.ios != nil || o.simulator != nil { p = Profile(ios: o.ios ?? ios, simulator: o.simulator ?? simulator) }
        if let v = o.jarSyncDelay { p.jarSyncDelay = v }
        if let v = o.jarDeletionDelay { p.jarDeletionDelay = v }
        if let v = o.scriptWriteDelay { p.scriptWriteDelay = v }
        if let v = o.cookieStoreSyncDelay { p.cookieStoreSyncDelay = v }
        if let v = o.cookieSetterHookDelay { p.cookieSetterHookDelay = v }
        if let v = o.itp { p.itp = v }
        return p
    }
}
