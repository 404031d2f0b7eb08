import Foundation
import HARFormat
import Testing
import TrafficModel
import WebViewEmulation
@testable import Findings
@testable import Pipeline
@testable import ReportStore
@testable import Reports

/// The web view apart from the strategy: what `plain` finds on an exchange is the
/// baseline, and another preset's same finding is counted under `plain` alone.
@Suite("Baseline preset")
struct BaselineTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func recording(_ name: String) throws -> Recording {
        try HARImporter().recording(from: Data(contentsOf: root.appendingPathComponent("Recordings/\(name).har")), file: name, name: name)
    }

    static func presets(_ names: [String]) -> [Preset] { names.map { name in Preset.builtIn.first { $0.name == name }! } }

    @Test("third-party-iframe: ITP's finding under plain is the baseline; the presets that leave the request to WebKit share it and do not count it, the interceptors' own findings stay theirs")
    func shared() throws {
        let recording = try Self.recording("third-party-iframe")
        let runner = ReplayRunner(presets: Self.presets(["plain", "urlprotocol-naive", "capacitor"]), profile: Profile())
        let results = runner.replay([recording])
        let plain = results.first { $0.preset == "plain" }!.findings
        #expect(!plain.isEmpty && plain.allSatisfy(\.baseline), "plain's own findings are the baseline")
        for result in results where result.preset != "plain" {
            for f in result.findings {
                let same = plain.contains { $0.sequence == f.sequence && $0.code == f.code && Set($0.subjects).isSuperset(of: f.subjects) && f.severity <= $0.severity }
                #expect(f.baseline == same, "\(f.preset) \(f.code.rawValue) #\(f.sequence) \(f.subjects): baseline \(f.baseline), plain has it: \(same)")
            }
        }
        let shared = results.filter { $0.preset != "plain" }.flatMap(\.findings).filter(\.baseline)
        #expect(!shared.isEmpty, "a preset that leaves a third-party request to WebKit finds what plain finds")

        // The report counts the strategy's own: the shared findings leave the preset's cell.
        var run = RunRow(id: 1, startedAt: "t", finishedAt: "t", toolVersion: "t", profile: "p", ios: "18", simulator: false,
                         presets: "plain,urlprotocol-naive,capacitor", label: nil, gitRevision: nil, recordingCount: 1, exchangeCount: recording.exchanges.count, baselinePreset: "plain")
        let model = ReportModel(run: run, recordings: [recording.name], presets: ["plain", "urlprotocol-naive", "capacitor"], findings: results.flatMap(\.findings))
        for preset in ["urlprotocol-naive", "capacitor"] {
            let own = results.first { $0.preset == preset }!.findings.filter { !$0.baseline }
            let cell = model.cell(recording: recording.name, preset: preset)
            #expect(cell.errors + cell.warnings + cell.infos == own.count)
            #expect(cell.shared == shared.filter { $0.preset == preset }.count)
        }
        let table = TableReport(color: false, showSecrets: false).render(model)
        #expect(table.contains("Baseline plain:") && table.contains("\(shared.count) finding(s) of the other presets are the same"))
        #expect(table.contains("plain (the baseline: the web view's own):"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(try JSONReport(showSecrets: false).render(model).utf8)) as? [String: Any])
        let findings = try #require(json["findings"] as? [[String: Any]])
        #expect(findings.count == results.flatMap(\.findings).count, "the JSON lists every finding, each marked")
        #expect(findings.filter { $0["baseline"] as? Bool == true }.count == plain.count + shared.count)
        #expect((json["run"] as? [String: Any])?["baselinePreset"] as? String == "plain")

        // No baseline: every finding counts under its own preset.
        run.baselinePreset = nil
        var none = runner
        none.baselinePreset = nil
        let unmarked = none.replay([recording]).flatMap(\.findings)
        #expect(unmarked.allSatisfy { !$0.baseline })
        let counted = ReportModel(run: run, recordings: [recording.name], presets: ["plain", "urlprotocol-naive", "capacitor"], findings: unmarked)
        #expect(counted.findingCount == unmarked.count)
    }

    @Test("a run without plain has no baseline: nothing is marked")
    func withoutPlain() throws {
        let results = ReplayRunner(presets: Self.presets(["urlprotocol-naive", "capacitor"]), profile: Profile()).replay([try Self.recording("third-party-iframe")])
        #expect(results.flatMap(\.findings).allSatisfy { !$0.baseline })
    }

    @Test("the gate judges a shared finding once, under the baseline preset: a new one under another preset fails nothing")
    func gate() {
        func finding(_ preset: String, baseline: Bool) -> Finding {
            var f = Finding(code: .cookieMissing, severity: .error, preset: preset, recording: "r", sequence: 3, method: "GET", url: "https://ads.example/p", subject: "id",
                            rules: ["N4"], confidence: .measured, expected: [:], actual: [:], detail: "m")
            f.baseline = baseline
            return f
        }
        let run = RunRow(id: 2, startedAt: "t", finishedAt: "t", toolVersion: "t", profile: "p", ios: "18", simulator: false, presets: "plain,capacitor", label: nil, gitRevision: nil,
                         recordingCount: 1, exchangeCount: 4, baselinePreset: "plain")
        let result = Gate().evaluate(run: run, findings: [finding("plain", baseline: true), finding("capacitor", baseline: true)], baseline: nil, baselineFindings: [])
        #expect(result.new.map(\.preset) == ["plain"])
    }
}
