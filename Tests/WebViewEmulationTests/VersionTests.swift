import CookieJar
import Foundation
import HARFormat
import Testing
import TrafficModel
@testable import WebViewEmulation

@Suite("Rules and presets at framework and iOS releases")
struct VersionTests {
    typealias M = MitigationTests

    @Test("semver orders releases and pre-releases as npm does")
    func ordering() throws {
        let v = { (text: String) in try #require(SemanticVersion(text)) }
        #expect(try v("7.4.2") < v("7.4.3") && v("7.4.3") < v("7.10.0") && v("6.2.0-beta.1") < v("6.2.0"))
        #expect(try v("1.0.0-alpha") < v("1.0.0-alpha.1") && v("1.0.0-alpha.1") < v("1.0.0-beta") && v("1.0.0-beta.2") < v("1.0.0-beta.11"))
        #expect(try v("v8.4.2") == SemanticVersion(8, 4, 2))
        for bad in ["7.4", "7", "", "7.4.x", "a.b.c", "7.4.2-", "7..2", "-1.0.0"] { #expect(SemanticVersion(bad) == nil, "\(bad)") }
    }

    @Test("ranges in npm's syntax: comparators, alternatives, hyphens, carets, tildes, partial versions")
    func ranges() throws {
        func holds(_ range: String, _ versions: [String]) throws -> [Bool] {
            let r = try #require(VersionRange(range), "\(range)")
            return try versions.map { r.contains(try #require(SemanticVersion($0))) }
        }
        #expect(try holds(">=6.0.0 <7.4.3", ["5.7.8", "6.0.0", "7.4.2", "7.4.3", "8.4.2"]) == [false, true, true, false, false])
        #expect(try holds("<5.2.0", ["5.0.0", "5.1.9", "5.2.0"]) == [true, true, false])
        #expect(try holds(">=5.7.8 <6.0.0 || >=6.1.1", ["5.7.8", "6.0.0", "6.1.0", "6.1.1", "8.4.2"]) == [true, false, false, true, true])
        #expect(try holds("1.2.3 - 2.3", ["1.2.2", "1.2.3", "2.3.9", "2.4.0"]) == [false, true, true, false])
        #expect(try holds("^6.1.0", ["6.0.9", "6.1.0", "6.9.9", "7.0.0"]) == [false, true, true, false])
        #expect(try holds("^0.2.3", ["0.2.3", "0.2.9", "0.3.0"]) == [true, true, false])
        #expect(try holds("~7.4", ["7.4.0", "7.4.9", "7.5.0"]) == [true, true, false])
        #expect(try holds("7.x", ["6.9.9", "7.0.0", "7.99.0", "8.0.0"]) == [false, true, true, false])
        #expect(try holds(">= 18.0 < 18.1", ["17.0.0", "18.0.0", "18.0.5", "18.1.0"]) == [false, true, true, false])
        #expect(try holds("<=7", ["7.9.9", "8.0.0"]) == [true, false])
        #expect(try holds(">7", ["7.9.9", "8.0.0"]) == [false, true])
        #expect(try holds("*", ["0.0.1", "99.0.0"]) == [true, true])
        for bad in [">=abc", "1.2.3 -", "~>1.0", ">=1.0.0 <2.0.0 ||| 3", "7.4.2.1"] { #expect(VersionRange(bad) == nil, "\(bad)") }
    }

    @Test("every version-bounded rule names a known component, a range that parses, and the source of each bound")
    func boundsHaveSources() throws {
        let catalog = RuleCatalog.bundled
        #expect(!catalog.histories.isEmpty)
        for rule in catalog.rules {
            guard let history = catalog.histories[rule.id] else {
                #expect(rule.bounds == nil, "\(rule.id) has bounds but no versions")
                continue
            }
            for (component, range) in history.ranges {
                let bounds = range.bounds
                let source = history.sources[component]
                #expect(!bounds.lower || !(source?.from ?? "").isEmpty, "\(rule.id): \(component.rawValue) \(range) has no source for its lower bound")
                #expect(!bounds.upper || !(source?.until ?? "").isEmpty, "\(rule.id): \(component.rawValue) \(range) has no source for its upper bound")
                #expect(catalog.components[component] != nil, "\(rule.id): the model covers no release of \(component.rawValue)")
            }
        }
        for coverage in catalog.components.values {
            #expect(coverage.oldestVersion <= coverage.newestVersion && coverage.releases.contains(coverage.newest) && coverage.releases.contains(coverage.oldest))
        }
    }

    @Test("docs/versions.md lists every version-bounded rule with its range, and every component the model covers")
    func documented() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let doc = try String(contentsOf: root.appendingPathComponent("docs/versions.md"), encoding: .utf8)
        for rule in RuleCatalog.bundled.rules {
            for (component, range) in rule.versions ?? [:] {
                #expect(doc.contains("| \(rule.id) | \(component) | `\(range)` |"), "docs/versions.md lacks \(rule.id) \(component) \(range)")
            }
        }
        for (component, coverage) in RuleCatalog.bundled.components {
            #expect(doc.contains("| \(component.rawValue) | \(coverage.oldest) | \(coverage.newest) |"), "docs/versions.md lacks \(component.rawValue)")
        }
    }

    @Test("a rules file with an unknown component or a malformed range is refused, naming the rule")
    func badRulesFile() {
        func load(_ versions: String) -> String? {
            let text = #"{"version": 3, "rules": [{"id": "Z1", "section": "s", "statement": "s", "summary": "s", "confidence": "source", "source": "s", "findings": [], "versions": \#(versions)}]}"#
            do { _ = try RuleCatalog(data: Data(text.utf8)); return nil } catch { return String(describing: error) }
        }
        #expect(load(#"{"android": ">=1.0.0"}"#)?.contains("rule Z1: unknown component android") == true)
        #expect(load(#"{"capacitor": ">=one"}"#)?.contains("rule Z1: capacitor \">=one\" is not a version range") == true)
        #expect(load(#"{"capacitor": ">=1.0.0"}"#) == nil)
    }

    @Test("a rule holds only at the releases its range names: CAPH3 from 6.0.0 to 7.4.2, N6 on iOS 18.0, S1 before 11.3")
    func suspended() throws {
        let catalog = RuleCatalog.bundled
        func off(_ ios: IOSVersion, _ framework: (Component, SemanticVersion)? = nil) -> Set<RuleID> {
            Set(catalog.suspended(at: RunVersions(ios: ios, framework: framework.map { (component: $0.0, version: $0.1) })))
        }
        #expect(!off(IOSVersion.newest, (.capacitor, SemanticVersion(7, 4, 2))).contains("CAPH3"))
        #expect(off(IOSVersion.newest, (.capacitor, SemanticVersion(7, 4, 3))).contains("CAPH3"))
        #expect(off(IOSVersion.newest, (.capacitor, SemanticVersion(5, 7, 8))).contains("CAPH3"))
        #expect(off(IOSVersion.newest, (.capacitor, SemanticVersion(4, 8, 2))).contains("CAPH1"))
        // A Capacitor rule does not depend on a Flutter release: a run without Capacitor keeps it.
        #expect(!off(IOSVersion.newest, (.flutterInAppWebView, SemanticVersion(6, 1, 5))).contains("CAPH3"))
        #expect(!off(IOSVersion(18, 0)).contains("N6") && off(IOSVersion(18, 1)).contains("N6") && off(IOSVersion(26)).contains("N6"))
        #expect(!off(IOSVersion(11, 0)).contains("S1") && off(IOSVersion(11, 3)).contains("S1"))
        #expect(off(IOSVersion(13)).contains("N4") && !Profile(ios: IOSVersion(13)).itp && Profile(ios: IOSVersion(14)).itp)
    }

    @Test("NAME@VERSION and GLOB@VERSION select framework presets at a release, named as typed; newer than known runs as the newest with a note; the rest is refused")
    func selecting() throws {
        let one = try Preset.selecting("capacitor-http@7.4.2")
        #expect(one.presets.map(\.name) == ["capacitor-http@7.4.2"] && one.notes.isEmpty)
        #expect(one.presets[0].frameworkVersion?.version == SemanticVersion(7, 4, 2))
        let family = try Preset.selecting("capacitor*@8.4.2")
        #expect(family.presets.map(\.name) == ["capacitor@8.4.2", "capacitor-http@8.4.2", "capacitor-http-cookies@8.4.2"])
        let newer = try Preset.selecting("capacitor-http@9.0.0")
        #expect(newer.presets[0].name == "capacitor-http@9.0.0" && newer.presets[0].frameworkVersion?.version == SemanticVersion(8, 4, 2))
        #expect(newer.notes == ["capacitor-http@9.0.0: capacitor 9.0.0 is newer than the newest release the model knows (8.4.2); replayed as 8.4.2"])
        #expect(Preset.named("capacitor-http")?.frameworkVersion?.version == SemanticVersion(8, 4, 2))
        #expect(Preset.named("urlprotocol-naive")?.frameworkVersion == nil)
        func refusal(_ pattern: String) -> String? {
            do { _ = try Preset.selecting(pattern); return nil } catch { return String(describing: error) }
        }
        #expect(refusal("capacitor-http@4.0.0") == "capacitor 4.0.0 is older than the model covers (4.8.2 to 8.4.2)")
        #expect(refusal("capacitor-http@seven") == "seven is not a version (write it as 7.4.2; the model knows capacitor 4.8.2 to 8.4.2)")
        #expect(refusal("urlprotocol-naive@1.0.0")?.contains("takes no @VERSION") == true)
        #expect(try Preset.selecting("nothing@1.0.0").presets.isEmpty)
    }

    @Test("a recording made inside a framework says which, with the evidence and the presets to pick; a version only where it shows one; none for a browser's")
    func recordedFramework() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        func load(_ name: String) throws -> Recording {
            try HARImporter().recording(from: Data(contentsOf: root.appendingPathComponent("Recordings/\(name).har")), file: name, name: name)
        }
        let tauri = try #require(RecordedFramework.detect(in: try load("tauri-post")))
        #expect(tauri.name == "Tauri" && tauri.version == nil && tauri.presets == ["tauri"] && tauri.evidence.first == "the page at tauri://localhost (#0)")
        #expect(RecordedFramework.detect(in: try load("cordova-multipart-upload"))?.name == "Cordova")
        #expect(RecordedFramework.detect(in: try load("ionic-first-launch-login"))?.name == "Ionic WebView")
        #expect(RecordedFramework.detect(in: try load("sso-form-post")) == nil)
        #expect(RecordedFramework.detect(in: try load("xhr-login-then-page")) == nil)
        var api = M.exchange(0, at: 0, "GET", "https://api.example.com/_capacitor_http_interceptor_?u=https%3A%2F%2Fapi.example.com%2Fme", headers: [("User-Agent", "Mozilla/5.0 (iPhone) AppleWebKit/605.1.15 Capacitor/6.1.2")])
        api.sequence = 0
        let capacitor = try #require(RecordedFramework.detect(in: Recording(name: "t", sourceFormat: "test", exchanges: [api])))
        #expect(capacitor.name == "Capacitor" && capacitor.version == "6.1.2" && capacitor.presets == ["capacitor*"])
        #expect(capacitor.evidence == ["a URL with /_capacitor_http_interceptor_ (#0)", "User-Agent Capacitor/6.1.2 (#0)"])
    }

    /// A release of `component` outside `range`, among those the model names, if any.
    static func releaseOutside(_ range: VersionRange, of component: Component) -> SemanticVersion? {
        RuleCatalog.bundled.components[component]?.releases.map(Coverage.version).first { !range.contains($0) }
    }

    @Test("a rule outside the run's versions does not act: no outcome, jar event or finding of any bundled recording cites it")
    func suspendedRulesDoNotAct() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let names = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Recordings").path).filter { $0.hasSuffix(".har") }
        let recordings = try names.map { try HARImporter().recording(from: Data(contentsOf: root.appendingPathComponent("Recordings/\($0)")), file: $0, name: $0) }
        var checked = 0
        for (id, history) in RuleCatalog.bundled.histories {
            for (component, range) in history.ranges {
                guard let outside = Self.releaseOutside(range, of: component) else { continue }
                let presets = Preset.builtIn.filter { component == .ios || $0.release?.component == component }
                let ios = component == .ios ? IOSVersion(outside.major, outside.minor) : IOSVersion.newest
                for preset in presets {
                    let replayed = component == .ios ? preset : try preset.at(outside).preset
                    for recording in recordings {
                        let result = WebViewEmulator(preset: replayed, profile: Profile(ios: ios)).run(recording, provenance: CookieProvenance(recording: recording))
                        #expect(!Self.cites(result, id), "\(id) acted under \(replayed.name) on iOS \(ios) in \(recording.name), outside \(component.rawValue) \(range)")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked > 100)
    }

    static func cites(_ result: EmulationResult, _ id: RuleID) -> Bool {
        result.outcomes.contains { o in o.changes.contains { $0.rule == id } || o.cookieDifferences.contains { $0.rules.contains(id) } || o[.bodyChanged].contains(id) || o.removedHeaders.contains { $0.rule == id } }
            || result.jarEvents.contains { $0.rule == id }
    }
}
