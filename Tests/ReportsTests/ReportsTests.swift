import Foundation
import Pipeline
import Findings
import HARFormat
import ReportStore
import Testing
import TrafficModel
import WebViewEmulation
@testable import Reports

@Suite("Reports")
struct ReportsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func model(simulator: Bool = false) throws -> ReportModel {
        let store = try ReportStore.inMemory()
        var recordings: [Recording] = []
        for name in ["script-cookie-api", "xhr-json-post"] {
            let data = try Data(contentsOf: root.appendingPathComponent("Recordings/\(name).har"))
            let r = try HARImporter().recording(from: data, file: name, name: name)
            try store.save(r)
            recordings.append(r)
        }
        let id = try ReplayRunner(presets: Preset.builtIn, profile: Profile(simulator: simulator)).run(recordings, in: store, label: "ci", toolVersion: "t", gitRevision: nil)
        return try #require(try ReportModel.load(from: store, run: id))
    }

    @Test("the report of the run just replayed, built from the results in hand, lists the findings in the order the stored run reads them")
    func inHandOrder() throws {
        let store = try ReportStore.inMemory()
        let folder = Self.root.appendingPathComponent("Recordings")
        // Reversed, so that the results come in another order than the report's.
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".har") }.sorted().reversed()
        var recordings: [Recording] = []
        for file in names {
            let name = String(file.dropLast(4))
            let r = try HARImporter().recording(from: try Data(contentsOf: folder.appendingPathComponent(file)), file: file, name: name)
            try store.save(r)
            recordings.append(r)
        }
        let presets = Array(Preset.builtIn.reversed())
        let (row, results) = try ReplayRunner(presets: presets, profile: Profile()).runKeeping(recordings, in: store, label: nil, toolVersion: "t", gitRevision: nil)
        let inHand = ReportModel(run: row, results: results)
        let stored = try #require(try ReportModel.load(from: store, run: row.id))
        #expect(inHand.findings.count > 100)
        #expect(inHand.findings == stored.findings)
        #expect(inHand.recordings == stored.recordings)
    }

    @Test("a replay that keeps only the findings the table shows prints the same table as the stored run, counts and all")
    func shownOnly() throws {
        let store = try ReportStore.inMemory()
        let folder = Self.root.appendingPathComponent("Recordings")
        var recordings: [Recording] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path).filter({ $0.hasSuffix(".har") }).sorted() {
            let r = try HARImporter().recording(from: try Data(contentsOf: folder.appendingPathComponent(file)), file: file, name: String(file.dropLast(4)))
            try store.save(r)
            recordings.append(r)
        }
        var builder = ReportModel.Builder(shownPerCode: TableReport.shownPerCode)
        let row = try ReplayRunner(presets: Preset.builtIn, profile: Profile()).run(recordings, in: store, label: nil, toolVersion: "t", gitRevision: nil) { builder.add($0) }
        let kept = builder.model(run: row)
        let stored = try #require(try ReportModel.load(from: store, run: row.id))
        #expect(!kept.holdsEveryFinding && stored.holdsEveryFinding)
        // Three per preset and code at most, of many more.
        #expect(kept.findings.count < stored.findings.count / 2)
        #expect(kept.findingCount == stored.findings.count)
        let table = TableReport(color: false, showSecrets: false)
        let text = table.render(kept)
        #expect(text == table.render(stored))
        #expect(text.contains("more, less important (--verbose shows all)"))
        for preset in stored.presets { #expect(kept.summary(preset: preset) == stored.summary(preset: preset)) }
        for severity in Findings.Severity.allCases { #expect(kept.count(severity) == stored.count(severity)) }
    }

    @Test("the JSON report carries the contract's fields")
    func jsonContract() throws {
        let text = try JSONReport(showSecrets: false).render(try Self.model())
        let object = try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let run = try #require(object["run"] as? [String: Any])
        #expect(run["label"] as? String == "ci")
        #expect(run["profile"] as? String == "iOS 18 device")
        #expect(run["presets"] as? [String] == Preset.builtIn.map(\.name))
        #expect(run["id"] != nil)
        let findings = try #require(object["findings"] as? [[String: Any]])
        #expect(!findings.isEmpty)
        for f in findings {
            for key in ["preset", "code", "severity", "recording", "sequence", "method", "url", "rules", "confidence", "message"] {
                #expect(f[key] != nil, "finding.\(key)")
            }
        }
        let bodyLost = try #require(findings.first { $0["code"] as? String == "BODY_LOST" && $0["preset"] as? String == "urlprotocol-naive" })
        #expect(bodyLost["sequence"] as? Int == 2)
        #expect(bodyLost["rules"] as? [String] == ["P1"])
        let summary = try #require(object["summary"] as? [String: Int])
        #expect(summary["findings"] == findings.count)
    }

    @Test("cookie values are redacted unless --show-secrets")
    func redaction() throws {
        let model = try Self.model()
        let hidden = try JSONReport(showSecrets: false).render(model)
        #expect(!hidden.contains("\"B\""))
        #expect(hidden.contains("<redacted, 1 bytes>"))
        let shown = try JSONReport(showSecrets: true).render(model)
        #expect(shown.contains("\"value\" : \"B\""))
        #expect(!TableReport(color: false, showSecrets: false).render(model).contains("ab_bucket=B"))
    }

    @Test("the table shows the matrix: one row per recording, a column per preset, findings per preset and code")
    func table() throws {
        let text = TableReport(color: false, showSecrets: false).render(try Self.model())
        let lines = text.split(separator: "\n").map(String.init)
        // The presets that do not fit the width continue in a second block of columns.
        let headers = lines.filter { $0.hasPrefix("recording") }
        #expect(headers.count == 2)
        for preset in Preset.builtIn { #expect(headers.contains { $0.split(separator: " ").contains(Substring(preset.name)) }, "\(preset.name)") }
        #expect(lines.allSatisfy { !$0.hasPrefix("xhr-json-post") || $0.count <= TableReport.defaultWidth })
        #expect(lines.filter { $0.hasPrefix("xhr-json-post") }.count == 2)
        let xhrRow = try #require(lines.first { $0.hasPrefix("xhr-json-post") })
        #expect(xhrRow.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first == "ok")  // plain
        #expect(xhrRow.contains("1E 0W 0I"))
        // Per preset a summary line first, then each code with its count.
        let summary = try #require(lines.first { $0.hasPrefix("urlprotocol-naive: ") })
        #expect(summary.contains("POST bod") && summary.contains("lost"))
        #expect(text.contains("  BODY_LOST ("))
        #expect(!text.contains("\u{1B}["))  // no colour when not asked
    }
}
