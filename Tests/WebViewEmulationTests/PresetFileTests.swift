import Foundation
import Testing
import TrafficModel
@testable import WebViewEmulation

@Suite("Preset, profile and scenario files")
struct PresetFileTests {
    @Test("a preset file describes a strategy with options, mitigations with options and a profile")
    func presetFile() throws {
        let json = #"""
            [{"name": "our-app", "strategy": {"kind": "schemehandler", "redirects": "spi"},
              "mitigations": [{"kind": "body-bridge", "covers": ["xhr"], "idParameter": "rid", "stripsId": true, "when": "below-11.3-or-blob"},
                              {"kind": "cookie-store-sync"}],
              "profile": {"jarSyncDelay": 0.25, "scriptWriteDelay": null}},
             {"name": "proxy", "strategy": {"kind": "jsproxy", "hooksFetch": true, "base": {"kind": "urlprotocol"}}}]
            """#
        let presets = try PresetFile.load(Data(json.utf8), file: "app.json")
        #expect(presets.map(\.name) == ["our-app", "proxy"])
        #expect(presets[0].strategy.kind == "schemehandler" && presets[0].strategy.options["redirects"] == "spi")
        #expect(presets[0].mitigations.map(\.kind) == ["body-bridge", "cookie-store-sync"])
        #expect(presets[0].mitigations[0].options["strips-id"] == "true")
        let profile = presets[0].profile(over: Profile())
        #expect(profile.jarSyncDelay == 0.25 && profile.scriptWriteDelay == nil)
        #expect(presets[1].strategy.options["base"] == "urlprotocol" && presets[1].strategy.options["fetch"] == "hooked")
    }

    @Test("errors name the file and the key", arguments: [
        (#"{"name": "x", "strategy": {"kind": "magic"}}"#, "app.json: strategy.kind: unknown strategy \"magic\""),
        (#"{"name": "x", "strategy": {"kind": "native"}, "mitigations": [{"kind": "body-bridge", "covers": ["beacon"]}]}"#, "app.json: mitigations[0].covers:"),
        (#"{"name": "x", "strategy": {"kind": "native"}, "profile": {"jarSyncDelay": -1}}"#, "app.json: profile.jarSyncDelay: a delay in seconds"),
        (#"{"name": "x", "strategy": {"kind": "native", "redirects": "silent"}}"#, "app.json: strategy.redirects: unknown key"),
        (#"{"name": "bad name", "strategy": {"kind": "native"}}"#, "app.json: name:"),
        (#"{"name": "x", "strategy": {"kind": "native"}, "mitigations": [{"kind": "body-bridge"}, {"kind": "script-cookies-lost"}]}"#, "app.json: mitigations[1]: script-cookies-lost applies to the app's own page"),
    ])
    func errors(_ json: String, _ message: String) {
        #expect {
            try PresetFile.load(Data(json.utf8), file: "app.json")
        } throws: { error in
            String(describing: error).hasPrefix(message)
        }
    }

    @Test("a profile override resets what depends on the device kind, then overrides numbers")
    func profileOverride() throws {
        let o = try ProfileOverride.parse(["simulator": true, "cookieStoreSyncDelay": 0.2], file: "p.json")
        let p = Profile().applying(o)
        #expect(p.simulator && p.scriptWriteDelay == nil && p.cookieStoreSyncDelay == 0.2 && p.jarSyncDelay == 1.0)
        #expect(throws: PresetFile.Error.self) { try ProfileOverride.parse(["ios": "9"], file: "p.json") }
    }

    @Test("scenario overrides pin initiator and body kind by method and URL pattern, and the first-party sites")
    func scenarioOverrides() throws {
        let json = #"""
            {"firstPartySites": ["shop.example.com", "cdn-shop.net"],
             "exchanges": [{"method": "POST", "url": "https://shop.example.com/api/*", "initiator": "fetch", "bodyKind": "stream"},
                           {"url": "*/upload*", "uploadListener": true}]}
            """#
        let scenario = try Scenario.load(Data(json.utf8), file: "s.json")
        let recording = Recording(name: "r", sourceFormat: "t", exchanges: [
            Exchange(sequence: 0, startedAt: 0, request: RecordedRequest(method: "POST", url: "https://shop.example.com/api/pay"), response: RecordedResponse(status: 200), initiator: .ajax),
            Exchange(sequence: 1, startedAt: 1, request: RecordedRequest(method: "GET", url: "https://img.cdn-shop.net/a.png"), response: RecordedResponse(status: 200), frame: Frame(kind: .main, thirdParty: true)),
            Exchange(sequence: 2, startedAt: 2, request: RecordedRequest(method: "POST", url: "https://up.example.org/upload?x"), response: RecordedResponse(status: 200)),
        ])
        let applied = scenario.applied(to: recording)
        #expect(applied.exchanges[0].initiator == .fetch && applied.exchanges[0].bodyKind == .stream)
        #expect(applied.exchanges.map(\.frame.thirdParty) == [false, false, true])
        #expect(scenario.uploadListener(applied.exchanges[2]) && !scenario.uploadListener(applied.exchanges[0]))
        #expect(throws: Scenario.FileError.self) { try Scenario.load(Data(#"{"exchanges": [{"url": "*", "bodyKind": "blob"}]}"#.utf8), file: "s.json") }
    }
}
