import Foundation
import HARFormat
import Testing
import TrafficModel
import WebViewEmulation
@testable import Findings
@testable import Pipeline

/// Advice proven by replay (issue 70), on the bundled recordings: the change advised
/// removes what it says, and a preset file written from its snippet replays to the count.
@Suite("Advice")
struct AdviceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every bundled HAR recording, with its sidecar scenario, made ready for the adviser.
    static let bundled: (recordings: [Recording], runner: ReplayRunner) = {
        let folder = root.appendingPathComponent("Recordings")
        let names = (try! FileManager.default.contentsOfDirectory(atPath: folder.path)).filter { $0.hasSuffix(".har") }.sorted()
        var runner = ReplayRunner(presets: [], profile: Profile())
        let recordings = names.map { file in
            let path = folder.appendingPathComponent(file).path
            let name = String(file.dropLast(4))
            if let scenario = try! Sidecars.scenario(for: path) { runner.scenarios[name] = scenario }
            return try! HARImporter().recording(from: Data(contentsOf: URL(fileURLWithPath: path)), file: path, name: name)
        }
        return (recordings, runner)
    }()

    static func advise(_ name: String, on only: [String]? = nil) throws -> (preset: Preset, advice: PresetAdvice, adviser: Adviser) {
        let preset = try #require(try Preset.selecting(name).presets.first)
        let recordings = bundled.recordings.filter { only?.contains($0.name) ?? true }
        let adviser = Adviser(runner: bundled.runner, recordings: recordings)
        return (preset, adviser.advise(preset, others: Preset.builtIn), adviser)
    }

    @Test("urlprotocol-naive on xhr-json-post: a mitigation removes the lost XHR body and adds nothing")
    func lostBody() throws {
        let (_, advice, _) = try Self.advise("urlprotocol-naive", on: ["xhr-json-post"])
        let mitigation = advice.advice.first { $0.kind == .addMitigation && ($0.codes["BODY_LOST"] ?? 0) > 0 }
        let found = try #require(mitigation, "advice: \(advice.advice.map(\.snippet))")
        #expect(found.adds == 0)
        #expect(advice.advice.first == found, "the best advice is the one that removes the lost body and adds nothing")
    }

    @Test("capacitor-http@7.4.2 on capacitor-uploads: the FormData body CAPH3 loses is answered by the release that fixes it")
    func fixingRelease() throws {
        let (_, advice, _) = try Self.advise("capacitor-http@7.4.2", on: ["capacitor-uploads"])
        let version = try #require(advice.advice.first { $0.kind == .version }, "advice: \(advice.advice.map(\.snippet))")
        #expect(version.snippet == "capacitor-http@7.4.3")
        #expect((version.codes["BODY_LOST"] ?? 0) > 0, "\(version)")
        // Once sent, the multipart body is rebuilt natively (CAPH5): a warning, not an error.
        #expect(version.added.keys.allSatisfy { $0 == "BODY_REENCODED" }, "\(version.added)")
        #expect(!advice.unsolved.contains { $0.rules.contains("CAPH3") })
    }

    @Test("every advice for urlprotocol-naive and capacitor-http@7.4.2 on the bundled recordings, applied as written, replays to the count it gave")
    func appliedSnippets() throws {
        for name in ["urlprotocol-naive", "capacitor-http@7.4.2"] {
            let (preset, advice, adviser) = try Self.advise(name)
            #expect(!advice.advice.isEmpty, "\(name) has findings and gets advice")
            for a in advice.advice {
                let changed = try Self.applied(a, to: preset)
                let count = adviser.findings(changed, on: Array(adviser.inputs.indices)).values.reduce(0) { $0 + $1.count }
                #expect(count == advice.findings - a.removes + a.adds, "\(name) with \(a.snippet): \(count) findings, advised \(advice.findings) - \(a.removes) + \(a.adds)")
            }
        }
    }

    /// The preset the advice makes, as a user makes it: a preset file with the snippet
    /// added to the preset's own file, a `NAME@VERSION`, or another preset's name.
    static func applied(_ advice: Advice, to preset: Preset) throws -> Preset {
        switch advice.kind {
        case .version, .preset: return try #require(try Preset.selecting(advice.snippet).presets.first)
        case .addMitigation:
            let folder = root.appendingPathComponent("Sources/WebViewEmulation/Resources/presets")
            let file = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).first { $0.hasSuffix("-\(preset.release?.baseName ?? preset.name).json") })
            var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(file))) as? [String: Any])
            let mitigation = try JSONSerialization.jsonObject(with: Data(advice.snippet.utf8))
            object["mitigations"] = ((object["mitigations"] as? [Any]) ?? []) + [mitigation]
            object["name"] = "advised"
            if let version = preset.frameworkVersion, preset.release?.version != nil { object["version"] = version.version.description }
            return try #require(try PresetFile.load(JSONSerialization.data(withJSONObject: object), file: "advised.json").first)
        }
    }
}
