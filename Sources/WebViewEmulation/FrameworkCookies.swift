import TrafficModel

/// Capacitor's CapacitorCookies plugin (`plugins.CapacitorCookies.enabled`): a
/// `document.cookie` patched into NativeJar, and copies between the jars (CAPC1, CAPC2)
/// that carry no deletion (CAPC3).
/// The patch is part of the bridge's main-frame user script: an iframe's writes are
/// WebKit's own (CAP2).
public struct CapacitorCookies: Mitigation {
    public init() {}
    public var options: [String: String] { [:] }
    public var citedRules: [RuleID] { ["CAP2", "CAPC1", "CAPC2", "CAPC3"] }

    public var hooks: MitigationHooks {
        MitigationHooks(
            scriptCookieWritten: { write in
                // CAP2: no bridge in an iframe, so its document.cookie is WebKit's.
                guard write.inMainFrame else { return ScriptWriteEffect(copy: nil, acceptedCrossSite: false) }
                // CAPC1: the redefined setter prompt()s into HTTPCookieStorage.shared, not WebJar;
                // CAPC2: the native setter then copies NativeJar to WebJar, each cookie by an
                // asynchronous WKHTTPCookieStore.setCookie from the main queue (as C7's).
                let back = JarCopy(to: .web, due: write.time + write.profile.cookieStoreSyncDelay, rule: "CAPC2")
                return ScriptWriteEffect(copy: JarCopy(to: .native, due: write.time, rule: "CAPC1"), acceptedCrossSite: false, pageWrite: .replaced(by: "CAPC1", copiedBack: back))
            },
            scriptCookieDeleted: { write in
                // CAPC1: the expired write goes to HTTPCookieStorage.shared like any other;
                // CAPC3: syncCookiesToWebView then sets cookies and removes none.
                write.inMainFrame ? .native : nil
            },
            // CAP3: Capacitor's cookie observer never fires, so WebJar reaches NativeJar by the
            // system's synchronisation; CAPC3: syncCookiesToWebView only sets cookies, so a
            // deletion stays in its own jar.
            jarLink: .systemHolding(deletions: .eitherWay("CAPC3")))
    }
}

/// `document.cookie` writes that are never stored: Cordova's custom scheme (CDV2),
/// cordova-plugin-ionic-webview (ION2). Only a page on the app's scheme loses them: once
/// the web view has gone on to a page from a server, that page's writes are stored as in
/// any WKWebView. A preset with this mitigation therefore needs an app page.
public struct ScriptCookiesLost: Mitigation {
    /// The rule that says so for the framework.
    public var rule: RuleID

    public init(rule: RuleID) {
        self.rule = rule
    }

    public var options: [String: String] { ["rule": rule.rawValue] }
    public var citedRules: [RuleID] { [rule] }

    public var hooks: MitigationHooks {
        let rule = self.rule
        return MitigationHooks(scriptCookieWritten: { write in
            ScriptWriteEffect(copy: nil, acceptedCrossSite: false, pageWrite: write.onAppPage ? .lost(by: rule) : .kept)
        })
    }
}

/// On the app's first launch after install, WebKit ignores the responses' Set-Cookie
/// (cordova-plugin-ionic-webview and other WKWebView shells, ION3); the scenario says when
/// a recording is a first launch (`"firstLaunch": true`).
public struct FirstLaunchCookiesIgnored: Mitigation {
    public var rule: RuleID

    public init(rule: RuleID = "ION3") {
        self.rule = rule
    }

    public var options: [String: String] { ["rule": rule.rawValue] }
    public var citedRules: [RuleID] { [rule] }

    public var hooks: MitigationHooks {
        let rule = self.rule
        return MitigationHooks(webSetCookieArriving: { arrival in arrival.firstLaunch ? rule : nil })
    }
}

/// react-native-webview's `sharedCookiesEnabled`: NativeJar copied into WebJar before the
/// first load (RNW1), and an observer that copies WebJar's additions back, never its
/// deletions (RNW2).
public struct SharedCookies: Mitigation {
    public init() {}
    public var options: [String: String] { [:] }
    public var citedRules: [RuleID] { ["RNW1", "RNW2"] }

    public var hooks: MitigationHooks {
        MitigationHooks(
            beforeFirstLoad: { JarMirror(from: .native, to: .web, rule: "RNW1") },
            jarLink: .observed(to: .native, rule: "RNW2", deletions: .towardObserved("RNW2")))
    }
}

/// flutter_inappwebview's ajax and fetch interception: the request is observed, handed to
/// Dart, then sent by WebKit itself (FIA1); a fetch's body re-sent as a Uint8Array loses the
/// Content-Type WebKit derived from it (FIA2).
public struct AjaxInterception: Mitigation {
    /// FIA2 and FIA3 as the profile asks them, once per request.
    static let fia2 = Profile.Bounded("FIA2"), fia3 = Profile.Bounded("FIA3")
    public init() {}

    /// A Content-Type only WebKit writes, derived from the body's type: a page cannot know a
    /// FormData's boundary, and writes the form and text types without WebKit's charset.
    static func derivedByWebKit(_ type: String) -> Bool {
        type.hasPrefix("multipart/form-data; boundary=----WebKitFormBoundary")
            || type == urlSearchParamsType || type == "text/plain;charset=UTF-8"
    }

    /// The Content-Type WebKit gives a URLSearchParams body.
    static let urlSearchParamsType = "application/x-www-form-urlencoded;charset=UTF-8"

    public var options: [String: String] { ["bodies": "unchanged"] }
    public var citedRules: [RuleID] { ["FIA1", "FIA2", "FIA3"] }

    public var hooks: MitigationHooks {
        MitigationHooks(requestIssued: { outcome, request in
            let e = request.exchange
            guard e.initiator == .xhr || e.initiator == .fetch || e.initiator == .ajax else { return }
            outcome.note(Change(rule: "FIA1", what: "observed by the interception script, then sent by WebKit"))
            guard e.initiator == .fetch, !e.request.body.isEmpty, let type = e.request.headers.first("Content-Type") else { return }
            if request.context.profile.holds(Self.fia2) {
                // FIA2: before 5.2.0 fetch re-sends the body as a Uint8Array; a Content-Type WebKit derived from the body goes.
                if Self.derivedByWebKit(type) { outcome.removedHeaders.append(HeaderAddition(name: "Content-Type", rule: "FIA2")) }
            } else if request.context.profile.holds(Self.fia3), type == Self.urlSearchParamsType {
                // FIA3: from 5.2.0 a URLSearchParams goes again as its string, which WebKit types text/plain.
                outcome.removedHeaders.append(HeaderAddition(name: "Content-Type", rule: "FIA3"))
            }
        })
    }
}

// MARK: - as a preset file writes them

extension CapacitorCookies: PresetPart {
    public static var kindName: String { "capacitor-cookies" }
    public static var component: Component? { .capacitor }
    public init(options: NoOptions) {}
}

extension ScriptCookiesLost: PresetPart {
    public static var kindName: String { "script-cookies-lost" }

    public struct Options: PartOptions {
        /// CDV2 (Cordova, the default) or ION2 (Ionic WebView).
        public var rule: String?
        enum CodingKeys: String, CodingKey, CaseIterable { case rule }
        public static let keys = CodingKeys.allCases.map(\.stringValue)
    }

    public init(options: Options) throws {
        let rule = options.rule ?? "CDV2"
        guard rule == "CDV2" || rule == "ION2" else { throw ConfigProblem(at: "rule", "CDV2 (Cordova) or ION2 (Ionic WebView)") }
        self.init(rule: RuleID(rule))
    }
}

extension FirstLaunchCookiesIgnored: PresetPart {
    public static var kindName: String { "first-launch-cookies-ignored" }
    public init(options: NoOptions) { self.init() }
}

extension SharedCookies: PresetPart {
    public static var kindName: String { "shared-cookies" }
    public static var component: Component? { .reactNativeWebView }
    public init(options: NoOptions) {}
}

extension AjaxInterception: PresetPart {
    public static var kindName: String { "ajax-interception" }
    public static var component: Component? { .flutterInAppWebView }
    public init(options: NoOptions) {}
}
