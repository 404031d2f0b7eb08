import Foundation
import Pipeline
import HARFormat
import PacketCapture
import Testing
import TrafficModel
import WebViewEmulation
@testable import ReportStore

/// Every bundled recording under every preset and three profiles, against its golden
/// expectation file `Recordings/expected/NAME.json`: the findings (preset, code, exchange,
/// rules, severity, the cookies they name, likelihood and rank) and the rules that acted. Any difference fails. Set
/// `H5REPLAY_UPDATE_GOLDENS=1` to re-record the files after a deliberate change.
@Suite("Golden scenarios")
struct GoldenScenarioTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let recordings = root.appendingPathComponent("Recordings")
    static let profiles: [(String, Profile)] = [("default", Profile()), ("ios-11.0", Profile(ios: IOSVersion(11, 0))), ("simulator", Profile(simulator: true)),
        ("ios-18.0-older-frameworks", Profile(ios: IOSVersion(18, 0)))]
    /// The framework releases the `older-frameworks` profile replays: where rules that no
    /// current release has still held (CAPH3 before 7.4.3, FIA2 before 5.2.0).
    static let olderReleases: [Component: SemanticVersion] = [.capacitor: SemanticVersion(7, 4, 2), .flutterInAppWebView: SemanticVersion(5, 0, 0)]

    /// The presets a profile's label replays: the built-in ones, at older framework
    /// releases for `older-frameworks`.
    static func presets(for label: String) throws -> [Preset] {
        guard label.hasSuffix("older-frameworks") else { return Preset.builtIn }
        return try Preset.builtIn.map { preset in
            guard let component = preset.release?.component, let version = olderReleases[component] else { return preset }
            return try preset.at(version).preset
        }
    }
    /// Rules no bundled scenario can exercise, and why; none at present.
    static let notExpressed: [RuleID: String] = [:]

    /// HAR flows and the captures a real browser engine produced (Tools/record-browser-flow.py).
    static var names: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: recordings.path)) ?? []).filter { $0.hasSuffix(".har") || $0.hasSuffix(".pcap") }
            .map { ($0 as NSString).deletingPathExtension }.sorted()
    }

    static func load(_ name: String) throws -> Recording {
        let har = recordings.appendingPathComponent("\(name).har")
        if FileManager.default.fileExists(atPath: har.path) {
            return try HARImporter().recording(from: Data(contentsOf: har), file: name, name: name)
        }
        return try CaptureImporter.read(path: recordings.appendingPathComponent("\(name).pcap").path, name: name).recordings[0]
    }

    /// The golden document of one recording, computed now.
    static func compute(_ name: String) throws -> [String: Any] {
        let recording = try load(name)
        // The sidecars beside the recording: scenario, offline package, prefetch config.
        let file = ["har", "pcap"].map { recordings.appendingPathComponent("\(name).\($0)").path }.first { FileManager.default.fileExists(atPath: $0) }
        let scenario = try Sidecars.scenario(for: file) ?? Scenario()
        var profiles: [String: Any] = [:]
        for (label, profile) in profiles_() {
            let results = ReplayRunner(presets: try presets(for: label), profile: profile, scenario: scenario).replay([recording])
            var findings: [[String: Any]] = []
            var acted: [String: [String]] = [:]
            var coverage: [String: [String: Int]] = [:]
            for r in results {
                var rules = Set<String>()
                for o in r.outcomes {
                    rules.formUnion(o.changes.map(\.rule.rawValue))
                    for d in o.cookieDifferences { rules.formUnion(d.rules.map(\.rawValue)) }
                }
                rules.formUnion(r.jarEvents.compactMap { $0.rule?.rawValue })
                for f in r.findings {
                    rules.formUnion(f.rules.map(\.rawValue))
                    var entry: [String: Any] = ["preset": f.preset, "code": f.code.rawValue, "sequence": f.sequence, "severity": f.severity.rawValue, "rules": f.rules.map(\.rawValue)]
                    if let subject = f.subject { entry["subject"] = subject }
                    if f.subjects.count > 1 { entry["subjects"] = f.subjects }
                    if let likelihood = f.likelihood { entry["likelihood"] = (likelihood * 1000).rounded() / 1000 }
                    if f.baseline { entry["baseline"] = true }
                    entry["rank"] = f.rank.rawValue
                    findings.append(entry)
                }
                acted[r.preset] = rules.sorted { RuleID($0) < RuleID($1) }
                if !r.coverage.isEmpty {
                    var counts: [String: Int] = [:]
                    for item in r.coverage { counts["\(item.kind.rawValue) \(item.verdict)", default: 0] += 1 }
                    coverage[r.preset] = counts
                }
            }
            profiles[label] = coverage.isEmpty ? ["findings": findings, "acted": acted] : ["findings": findings, "acted": acted, "coverage": coverage]
        }
        return ["recording": name, "profiles": profiles]
    }

    static func profiles_() -> [(String, Profile)] { profiles }

    static func encode(_ object: Any) throws -> Data {
        try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    }

    @Test("each recording's findings and acting rules match its golden file", arguments: names)
    func golden(_ name: String) throws {
        let computed = try Self.encode(try Self.compute(name))
        let file = Self.recordings.appendingPathComponent("expected/\(name).json")
        if ProcessInfo.processInfo.environment["H5REPLAY_UPDATE_GOLDENS"] == "1" {
            try (computed + Data("\n".utf8)).write(to: file)
            return
        }
        let golden = try Data(contentsOf: file)
        let expected = String(decoding: golden, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let actual = String(decoding: computed, as: UTF8.self)
        if expected != actual {
            let e = expected.split(separator: "\n"), a = actual.split(separator: "\n")
            let first = zip(e, a).enumerated().first { $0.element.0 != $0.element.1 }
            Issue.record("\(name): differs from Recordings/expected/\(name).json at line \((first?.offset ?? min(e.count, a.count)) + 1): expected \(first.map { String($0.element.0) } ?? "(end)"), got \(first.map { String($0.element.1) } ?? "(end)"). Re-record with H5REPLAY_UPDATE_GOLDENS=1 if the change is meant.")
        }
    }

    @Test("every rule of the behaviour model acts in at least one golden scenario")
    func coverage() throws {
        var seen = Set<String>()
        for name in Self.names {
            let object = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: Self.recordings.appendingPathComponent("expected/\(name).json"))) as? [String: Any])
            for case let profile as [String: Any] in (object["profiles"] as? [String: Any] ?? [:]).values {
                for case let rules as [String] in (profile["acted"] as? [String: Any] ?? [:]).values { seen.formUnion(rules) }
            }
        }
        let missing = RuleCatalog.bundled.rules.map(\.id).filter { !seen.contains($0.rawValue) && Self.notExpressed[$0] == nil }
        #expect(missing.isEmpty, "rules no golden scenario exercises: \(missing.map(\.rawValue).joined(separator: ", "))")
    }
}
