import CookieJar
import Testing
import TrafficModel
@testable import WebViewEmulation

/// Interception as values: each mitigation acts through hooks it declares, and each
/// strategy and mitigation names the rules it can cite.
@Suite("Interception values and their hooks")
struct InterceptionValuesTests {
    /// Every mitigation a preset file can name: the registry's list.
    static let mitigations: [any Mitigation] = PresetRegistry.exampleMitigations

    @Test("every mitigation acts at one moment at least and cites rules of the catalogue")
    func hooksAndRules() {
        for m in Self.mitigations {
            #expect(m.hooks.count >= 1, "\(m.kind) has no hook")
            #expect(!m.citedRules.isEmpty, "\(m.kind) cites no rule")
            for rule in m.citedRules { #expect(RuleCatalog.bundled[rule] != nil, "\(m.kind) cites unknown rule \(rule)") }
        }
    }

    /// Every part that acts at moments without being a preset's mitigation: an app shell,
    /// an offline package, a prefetch config.
    static let sessionParts: [any SessionPart] = [
        AppShell.capacitor, OfflinePackage(resources: []), PrefetchConfig(entries: [], file: ""),
    ]

    @Test("every session part acts at one moment at least and cites rules of the catalogue")
    func sessionPartHooks() {
        for part in Self.sessionParts {
            #expect(part.hooks.count >= 1, "\(type(of: part)) has no hook")
            #expect(!part.citedRules.isEmpty, "\(type(of: part)) cites no rule")
            for rule in part.citedRules { #expect(RuleCatalog.bundled[rule] != nil, "\(type(of: part)) cites unknown rule \(rule)") }
        }
    }

    @Test("every rule of the catalogue is cited by a strategy, mitigation or session part, or acts in the emulator's own walk")
    func everyRuleHasAnOwner() {
        // Rules the emulator applies itself, whatever the preset: the jars' synchronisation
        // (J1-J4), the first-request, ITP and SameSite rules (N3-N6), WebKit's
        // ReadableStream refusal (S4), the native code's requests that pass no web view
        // (NC1), WebSockets (WS1), EventSources (ES1). The evidence rules (E1-E8) act in
        // cookie provenance and the comparison. The offline package (O1-O4) and prefetch
        // (PF1-PF3) rules are their session parts'.
        let emulator: Set<RuleID> = ["J1", "J2", "J3", "J4", "N3", "N4", "N5", "N6", "S4", "NC1", "WS1", "ES1", "E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8", "W1"]
        var owned = emulator
        for p in Preset.builtIn { owned.formUnion(p.citedRules) }
        for m in Self.mitigations { owned.formUnion(m.citedRules) }
        for s in PresetRegistry.exampleStrategies { owned.formUnion(s.citedRules) }
        for part in Self.sessionParts { owned.formUnion(part.citedRules) }
        let orphans = RuleCatalog.bundled.rules.map(\.id).filter { !owned.contains($0) }
        #expect(orphans.isEmpty, "rules no value can cite: \(orphans.map(\.rawValue))")
    }

    @Test("a preset composed with the builder equals the one listed")
    func builder() {
        func composed(syncsStore: Bool) -> Preset {
            Preset(name: "x", summary: "", strategy: URLProtocolStrategy()) {
                BodyBridge(idParameter: "rid")
                if syncsStore { CookieStoreSync() } else { CookieScriptInject() }
                CookieSetterHook(synchronous: true)
            }
        }
        #expect(composed(syncsStore: true).mitigations.map(\.kind) == ["body-bridge", "cookie-store-sync", "cookie-setter-hook"])
        #expect(composed(syncsStore: false).mitigations.map(\.kind) == ["body-bridge", "cookie-script-inject", "cookie-setter-hook"])
        // The preset acts through the hooks it gathered: C7's copy is there only with the store sync.
        #expect(composed(syncsStore: true).hooks.setCookieStored.count == 1 && composed(syncsStore: false).hooks.setCookieStored.isEmpty)
    }

    @Test("a hook's change names its rule: C7 copies a NativeJar Set-Cookie to WebJar after the profile's delay")
    func storeSyncHook() throws {
        let hook = try #require(CookieStoreSync().hooks.setCookieStored)
        let cookie = Cookie(name: "sid", value: "1", domain: "example.com", hostOnly: true, path: "/", creation: 0)
        let copy = hook(StoredCookie(cookie: cookie, jar: .native, time: 10, profile: Profile()))
        #expect(copy == JarCopy(to: .web, due: 10 + Profile().cookieStoreSyncDelay, rule: "C7"))
        #expect(hook(StoredCookie(cookie: cookie, jar: .web, time: 10, profile: Profile())) == nil)
    }

    @Test("B2: the bridge's id goes before the fragment, after any query", arguments: [
        ("https://a.example/api", "https://a.example/api?rid=7"),
        ("https://a.example/api?x=1", "https://a.example/api?x=1&rid=7"),
        ("https://a.example/api?x=1#top", "https://a.example/api?x=1&rid=7#top"),
        ("https://a.example/p#f?g", "https://a.example/p?rid=7#f?g"),
        ("https://例え.jp/検索", "https://例え.jp/検索?rid=7"),
    ])
    func bridgeID(url: String, tagged: String) {
        #expect(BodyBridge.adding(parameter: "rid", value: "7", to: url) == tagged)
    }
}
