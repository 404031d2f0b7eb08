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

    /// Every bundled recording (HAR and capture), with its sidecars, made ready for the
    /// adviser as a run of every built-in preset makes it: plain the baseline.
    static let bundled: (recordings: [Recording], runner: ReplayRunner) = {
        let folder = root.appendingPathComponent("Recordings")
        let names = (try! FileManager.default.contentsOfDirectory(atPath: folder.path)).filter { $0.hasSuffix(".har") || $0.hasSuffix(".pcap") }.sorted()
        var runner = ReplayRunner(presets: Preset.builtIn, profile: Profile())
        let recordings = names.flatMap { file -> [Recording] in
            let path = folder.appendingPathComponent(file).path
            let name = (file as NSString).deletingPathExtension
            if let scenario = try! Sidecars.scenario(for: path) { runner.scenarios[name] = scenario }
            return try! ImportPipeline().read(path, name: name)
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

    /// Every built-in preset, and the two framework releases the named checks replay.
    static let everyPreset = Preset.builtIn.map(\.name) + ["capacitor-http@7.4.2"]

    @Test("every advice on the bundled recordings, applied as written in the preset's own file, replays to the count it gave", arguments: everyPreset)
    func appliedSnippets(_ name: String) throws {
        let (preset, advice, adviser) = try Self.advise(name)
        if name == "plain" {
            // The baseline: its findings are the web view's own, nothing to fix.
            #expect(advice.findings == 0 && advice.advice.isEmpty, "\(advice)")
            return
        }
        #expect(advice.findings == 0 || !advice.advice.isEmpty || !advice.unsolved.isEmpty, "\(name): findings but neither advice nor unsolved groups")
        for a in advice.advice {
            let changed = try Self.applied(a, to: preset)
            let after = adviser.findings(changed, on: Array(adviser.inputs.indices))
            let count = after.reduce(0) { $0 + ($1?.count ?? 0) }
            #expect(count == advice.findings - a.removes + a.adds, "\(name) with \(a.kind.rawValue) \(a.snippet): \(count) findings, advised \(advice.findings) - \(a.removes) + \(a.adds)")
        }
    }

    @Test("kkjsbridge-protocolhook: set-option advice comes from the registry's choices, written over the part it changes")
    func setOption() throws {
        let (_, advice, _) = try Self.advise("kkjsbridge-protocolhook")
        let options = advice.advice.filter { $0.kind == .setOption }
        #expect(!options.isEmpty, "advice: \(advice.advice.map(\.snippet))")
        for a in options {
            let object = try #require(WrittenValue(json: a.snippet), "\(a.snippet)")
            var kind = ""
            if case .string(let k)? = object["kind"] { kind = k }
            let strategyChoices: [OptionChoice] = PresetRegistry.strategies.first { $0.name == kind }?.choices ?? []
            let mitigationChoices: [OptionChoice] = PresetRegistry.mitigations.first { $0.name == kind }?.choices ?? []
            let matching = (strategyChoices + mitigationChoices).filter { choice in
                let value: WrittenValue = object[choice.key] ?? WrittenValue.null
                return a.change.contains("'s \(choice.key) to ") && choice.counters.contains(value)
            }
            #expect(!matching.isEmpty, "\(a.change): \(a.snippet)")
            #expect(a.removes > 0 && a.codes.values.reduce(0, +) == a.removes)
        }
    }

    @Test("the baseline preset's findings are nothing to fix: plain's own on third-party-iframe are counted under no preset's advice")
    func baselineLeftOut() throws {
        let recordings = Self.bundled.recordings.filter { $0.name == "third-party-iframe" }
        let adviser = Adviser(runner: Self.bundled.runner, recordings: recordings)
        var none = Self.bundled.runner
        none.baselinePreset = nil
        let everything = Adviser(runner: none, recordings: recordings)
        let plain = try #require(Preset.named("plain")), naive = try #require(Preset.named("urlprotocol-naive"))
        #expect(adviser.allFindings(plain, on: [0])[0]?.isEmpty == false, "plain has a finding on third-party-iframe")
        #expect(adviser.advise(plain, others: Preset.builtIn).findings == 0)
        #expect(everything.advise(plain).findings > 0, "without a baseline, plain's own findings count")
        let counted = adviser.advise(naive, others: Preset.builtIn).findings, all = everything.advise(naive).findings
        #expect(counted < all, "what urlprotocol-naive shares with plain is not its to fix: \(counted) of \(all)")
        #expect(counted == adviser.findings(naive, on: [0])[0]?.count)
    }

    /// The preset the advice makes, as a user makes it: the preset's own file with the
    /// snippet added (add-mitigation) or written over the object of its kind (set-option),
    /// a `NAME@VERSION`, or another preset's name.
    static func applied(_ advice: Advice, to preset: Preset) throws -> Preset {
        switch advice.kind {
        case .version, .preset: return try #require(try Preset.selecting(advice.snippet).presets.first)
        case .addMitigation, .setOption:
            let folder = root.appendingPathComponent("Sources/WebViewEmulation/Resources/presets")
            let file = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).first { $0.hasSuffix("-\(preset.release?.baseName ?? preset.name).json") })
            var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(file))) as? [String: Any])
            let part = try #require(try JSONSerialization.jsonObject(with: Data(advice.snippet.utf8)) as? [String: Any])
            var mitigations = (object["mitigations"] as? [[String: Any]]) ?? []
            if advice.kind == .addMitigation {
                mitigations.append(part)
            } else if let i = mitigations.firstIndex(where: { $0["kind"] as? String == part["kind"] as? String }) {
                mitigations[i] = part
            } else {
                #expect((object["strategy"] as? [String: Any])?["kind"] as? String == part["kind"] as? String, "\(advice.snippet) names no part of \(file)")
                object["strategy"] = part
            }
            object["mitigations"] = mitigations
            object["name"] = "advised"
            if let version = preset.frameworkVersion, preset.release?.version != nil { object["version"] = version.version.description }
            return try #require(try PresetFile.load(JSONSerialization.data(withJSONObject: object), file: "advised.json").first)
        }
    }
}
