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
        // Every finding kept, as `replay --verbose` keeps them.
        var builder = ReportModel.Builder(shownPerCode: nil)
        let row = try ReplayRunner(presets: presets, profile: Profile()).run(recordings, in: store, label: nil, toolVersion: "t", gitRevision: nil) { builder.add($0) }
        let inHand = builder.model(run: row)
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
        // The counts leave out the findings other presets share with plain (the baseline).
        let shared = stored.presets.reduce(0) { $0 + stored.sharedCount(preset: $1) }
        #expect(shared > 0 && kept.findingCount == stored.findingCount && stored.findingCount + shared == stored.findings.count)
        let table = TableReport(color: false, showSecrets: false)
        let text = table.render(kept)
        #expect(text == table.render(stored))
        #expect(text.contains("more, less important (--verbose shows all)"))
        for preset in stored.presets { #expect(kept.summary(preset: preset) == stored.summary(preset: preset)) }
        for severity in Findings.Severity.allCases { #expect(kept.count(severity) == stored.count(severity)) }
    }

    @Test("the JSON report written a part at a time is the report rendered whole, redacted alike, and a sink's failure stops it")
    func jsonStreamed() throws {
        let model = try Self.model()
        for showSecrets in [false, true] {
            let report = JSONReport(showSecrets: showSecrets)
            let whole = try report.render(model)
            var parts: [ArraySlice<UInt8>] = []
            try report.write(model, flushingEvery: 97) { parts.append($0) }
            #expect(parts.count > 10)
            #expect(String(decoding: parts.flatMap { $0 }, as: UTF8.self) == whole)
        }
        struct Full: Error {}
        var calls = 0
        #expect(throws: Full.self) {
            try JSONReport(showSecrets: false).write(model, flushingEvery: 97) { _ in
                calls += 1
                throw Full()
            }
        }
        #expect(calls == 1)
    }

    @Test("the JSON report carries the contract's fields")
    func jsonContract() throws {
        let text = try JSONReport(showSecrets: false).render(try Self.model())
        let object = try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let run = try #require(object["run"] as? [String: Any])
        #expect(run["label"] as? String == "ci")
        #expect(run["profile"] as? String == "iOS \(IOSVersion.newest) device")
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
        #expect((object["advice"] as? [Any])?.isEmpty == true, "advice is there, empty, unless asked for")
    }

    static let advised = AdviceLine(preset: "urlprotocol-naive", kind: "add-mitigation", change: "add a body-bridge mitigation", snippet: #"{"kind": "body-bridge"}"#,
        removes: 2, adds: 1, codes: ["BODY_LOST": 2], added: ["URL_MUTATED": 1])

    @Test("the JSON report's advice array carries preset, kind, change, snippet, removes, adds and codes of each change")
    func jsonAdvice() throws {
        var model = try Self.model()
        model.advice = [Self.advised]
        let object = try #require(JSONSerialization.jsonObject(with: Data(JSONReport(showSecrets: false).render(model).utf8)) as? [String: Any])
        let advice = try #require(object["advice"] as? [[String: Any]])
        #expect(advice.count == 1)
        let a = try #require(advice.first)
        #expect(a["preset"] as? String == "urlprotocol-naive" && a["kind"] as? String == "add-mitigation" && a["change"] as? String == "add a body-bridge mitigation")
        #expect(a["snippet"] as? String == #"{"kind": "body-bridge"}"# && a["removes"] as? Int == 2 && a["adds"] as? Int == 1)
        #expect(a["codes"] as? [String: Int] == ["BODY_LOST": 2] && a["added"] as? [String: Int] == ["URL_MUTATED": 1])
    }

    @Test("Markdown shows a preset's advice under its heading; HTML in a section of its own, per preset")
    func advicePerPreset() throws {
        var model = try Self.model()
        model.advice = [Self.advised]
        let markdown = MarkdownReport(showSecrets: false).render(model)
        let section = try #require(markdown.components(separatedBy: "\n### urlprotocol-naive\n").dropFirst().first?.components(separatedBy: "\n### ").first)
        #expect(section.contains(#"- add-mitigation `{"kind": "body-bridge"}`: removes 2 (BODY_LOST 2), adds 1 (URL_MUTATED 1)"#), "\(section)")
        #expect(markdown.components(separatedBy: "**Advice**").count == 2, "under that preset alone")
        let html = HTMLReport(showSecrets: false).render(model, context: HTMLReport.Context(recordings: [:], pageURLs: [:], jarEvents: [:]))
        #expect(html.contains("<h3>urlprotocol-naive</h3>") && html.contains("<code>{&quot;kind&quot;: &quot;body-bridge&quot;}</code>"))
        model.advice = []
        #expect(!MarkdownReport(showSecrets: false).render(model).contains("**Advice**"))
    }

    @Test("the JSON report is byte for byte what JSONSerialization writes of the contract's objects, for any text a finding can hold")
    func jsonAsFoundationWritesIt() throws {
        var model = try Self.model()
        var controls = ""
        for c in 0..<0x20 { controls.unicodeScalars.append(Unicode.Scalar(UInt8(c))) }
        let odd = controls + "\u{7F} \"quoted\" \\ /path é 中文 🍪 \u{2028}"
        // Field names whose order is Foundation's own (not byte order), values of every kind,
        // empty lists and a likelihood that is a whole number.
        var finding = Finding(code: .headerLost, severity: .warning, preset: model.presets[0], recording: odd, sequence: 7, method: "POST", url: "https://a.example/" + odd,
            subject: odd, rules: ["P1", "C2"], confidence: .reported,
            expected: ["aB": odd, "ab": "1", "a_b": "2", "Z": "3", "é": "4", "a10": "5", "a9": "6"], actual: [:], detail: odd)
        finding.subjects = []
        finding.likelihood = 1
        model.findings.append(finding)
        finding.subjects = [odd, "second"]
        finding.likelihood = 0.019999980926513672
        finding.subject = nil
        finding.inferences = [FindingInference(kind: .cookieSource, subject: odd, inferred: "written by the page's script", contradictedBy: "#3's response set that value")]
        model.findings.append(finding)
        model.advice = [AdviceLine(preset: model.presets[1], kind: "set-option", change: "set body-bridge's covers to " + odd, snippet: #"{"kind": "body-bridge", "covers": ["xhr"]}"#,
            removes: 3, adds: 0, codes: ["BODY_LOST": 2, "aB": 1, "ab": 0], added: [:])]
        for showSecrets in [true, false] {
            let report = JSONReport(showSecrets: showSecrets)
            let text = try report.render(model)
            let redacted = report.redactor.apply(model)
            var matrix: [[String: Any]] = []
            for recording in redacted.recordings {
                for preset in redacted.presets {
                    let cell = redacted.cell(recording: recording, preset: preset)
                    matrix.append(["recording": recording, "preset": preset, "errors": cell.errors, "warnings": cell.warnings, "infos": cell.infos, "baselineShared": cell.shared, "empty": model.isEmpty(recording: recording), "compared": model.notCompared(recording: recording) == nil])
                }
            }
            let findings: [[String: Any]] = redacted.findings.map { f in
                [
                    "preset": f.preset, "code": f.code.rawValue, "severity": f.severity.rawValue, "recording": f.recording, "sequence": f.sequence,
                    "method": f.method, "url": f.url, "subject": f.subject ?? NSNull(), "subjects": f.subjects.map(report.redactor.text),
                    "likelihood": f.likelihood ?? NSNull(), "rank": f.rank.rawValue, "rules": f.rules.map(\.rawValue), "confidence": f.confidence.rawValue,
                    "message": f.message, "baseline": f.baseline,
                    "inferences": f.inferences.map { ["kind": $0.kind.rawValue, "subject": report.redactor.text($0.subject), "inferred": $0.inferred, "contradictedBy": $0.contradictedBy ?? NSNull()] as [String: Any] },
                    "expected": report.redactor.fields(f.expected).dictionary, "actual": report.redactor.fields(f.actual).dictionary,
                ]
            }
            let run = redacted.run
            let object: [String: Any] = [
                "coverage": [[String: Any]](),
                "run": ["id": run.id ?? 0, "profile": run.profile, "ios": run.ios, "simulator": run.simulator, "presets": redacted.presets,
                        "startedAt": run.startedAt, "toolVersion": run.toolVersion, "label": run.label ?? NSNull(), "baselinePreset": run.baselinePreset ?? NSNull()] as [String: Any],
                "summary": ["errors": redacted.count(.error), "warnings": redacted.count(.warning), "infos": redacted.count(.info), "findings": redacted.findings.count,
                            "baselineShared": redacted.presets.reduce(0) { $0 + redacted.sharedCount(preset: $1) }],
                "matrix": matrix,
                "findings": findings,
                "upgrades": [[String: Any]](),
                "advice": redacted.advice.map { a in
                    ["preset": a.preset, "kind": a.kind, "change": a.change, "snippet": a.snippet, "removes": a.removes, "adds": a.adds, "codes": a.codes, "added": a.added] as [String: Any]
                },
            ]
            let expected = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            #expect(text == String(decoding: expected, as: UTF8.self))
            #expect(text.contains(#""likelihood" : 1,"#) && text.contains(#""subjects" : [\#n\#n      ],"#))
        }
    }

    @Test("the findings of each cell, grouped once for a whole report, are those a filter of the run gives, with the same counts and summary line")
    func cellsIndexedOnce() throws {
        let model = try Self.model()
        let byCell = model.findingsByCell()
        #expect(byCell.values.reduce(0) { $0 + $1.count } == model.findings.count)
        for recording in model.recordings {
            for preset in model.presets {
                let list = byCell[ReportModel.cellKey(recording: recording, preset: preset)] ?? []
                #expect(list == model.findings.filter { $0.recording == recording && $0.preset == preset })
                let cell = model.cell(recording: recording, preset: preset)
                #expect(list.count == cell.errors + cell.warnings + cell.infos)
                #expect(ReportModel.summary(of: list) == model.summary(preset: preset, recording: recording))
            }
        }
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
