import Findings
import Foundation
import Pipeline
import HARFormat
import ReportStore
import Testing
import TrafficModel
import WebViewEmulation
@testable import Reports

@Suite("Markdown, JUnit and HTML reports")
struct ReportFormatTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func replayed(simulator: Bool = false) throws -> (ReportStore, ReportModel) {
        let store = try ReportStore.inMemory()
        var recordings: [Recording] = []
        for name in ["login-redirect", "script-cookie-api", "xhr-json-post"] {
            let data = try Data(contentsOf: root.appendingPathComponent("Recordings/\(name).har"))
            let r = try HARImporter().recording(from: data, file: name, name: name)
            try store.save(r)
            recordings.append(r)
        }
        let base = Preset.builtIn.filter { ["plain", "urlprotocol-naive", "urlprotocol-forwarded", "schemehandler-naive"].contains($0.name) }
        let id = try ReplayRunner(presets: base, profile: Profile(simulator: simulator)).run(recordings, in: store, label: "ci", toolVersion: "t", gitRevision: nil)
        return (store, try #require(try ReportModel.load(from: store, run: id)))
    }

    @Test("JUnit: one test case per recording and preset, a failure per error finding, valid against the Jenkins schema")
    func junit() throws {
        let (_, model) = try Self.replayed()
        let xml = JUnitReport(showSecrets: false).render(model)
        #expect(xml.components(separatedBy: "<testcase ").count - 1 == 3 * model.presets.count)
        #expect(xml.components(separatedBy: "<failure ").count - 1 == model.findings.filter { $0.severity == .error }.count)
        #expect(xml.contains(#"<testcase name="xhr-json-post" classname="h5replay.urlprotocol-naive" time="0">"#))
        #expect(xml.contains(#"<failure type="BODY_LOST" message="BODY_LOST #2 POST https://m.example.com/api/order [P1]">"#))
        #expect(!xml.contains(">B<") && !xml.contains("value=B"))
        // Validate with xmllint against the schema Jenkins reads, when xmllint is installed.
        let xmllint = ["/usr/bin/xmllint", "/usr/local/bin/xmllint"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let xmllint else {
            print("skipping schema validation: xmllint is not installed (apt-get install libxml2-utils)")
            return
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-junit-\(UUID().uuidString).xml")
        try Data(xml.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: xmllint)
        process.arguments = ["--noout", "--schema", Self.root.appendingPathComponent("Tests/ReportsTests/Fixtures/junit-jenkins.xsd").path, file.path]
        let err = Pipe()
        process.standardError = err
        try process.run()
        process.waitUntilExit()
        let output = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(output)")
    }

    @Test("JUnit escapes what XML cannot hold")
    func junitEscaping() {
        let report = JUnitReport(showSecrets: false)
        #expect(report.attr("a<b & \"c\"\n\u{1}") == "a&lt;b &amp; &quot;c&quot;&#10;")
    }

    @Test("Markdown: the matrix as a table, the gate's verdict, findings per preset")
    func markdown() throws {
        let (store, model) = try Self.replayed()
        let gate = Gate().evaluate(run: model.run, findings: model.findings, baseline: nil, baselineFindings: [])
        let md = MarkdownReport(showSecrets: false).render(model, gate: gate)
        #expect(md.contains("| recording | plain | urlprotocol-naive | urlprotocol-forwarded | schemehandler-naive |"))
        #expect(md.contains("| xhr-json-post | ✅ ok | ❌ 1E 0W 0I | ❌ 1E 0W 0I | ✅ ok |"))
        #expect(md.contains("**Gate failed: \(gate.failing.count) new finding(s)** (no baseline)"))
        #expect(md.contains("### urlprotocol-naive"))
        _ = store
    }

    @Test("Markdown stays within a job summary's limit: every code's most important findings, the rest as far as it allows, and a count of what is left out")
    func markdownWithinLimit() throws {
        let (_, replayed) = try Self.replayed()
        // The run's findings as if from 200 recordings.
        var findings: [Finding] = []
        for copy in 0..<200 {
            for var f in replayed.findings {
                f.recording += "-\(copy)"
                findings.append(f)
            }
        }
        let recordings = replayed.recordings.flatMap { name in (0..<200).map { "\(name)-\($0)" } }
        let model = ReportModel(run: replayed.run, recordings: recordings, presets: replayed.presets, findings: findings)
        let whole = MarkdownReport(showSecrets: false, limit: .max).render(model)
        #expect(!whole.contains("left out"))
        let limit = 60_000
        #expect(whole.utf8.count > 2 * limit, "the run is large enough to be cut")
        let cut = MarkdownReport(showSecrets: false, limit: limit).render(model)
        #expect(cut.utf8.count <= limit)
        // The matrix and each code's three most important findings are all there.
        #expect(cut.contains("| login-redirect-199 |"))
        // Those are the lines right under each `**CODE** (n)`.
        var top: [Substring] = []
        var underCode = false
        for line in whole.split(separator: "\n") {
            if line.hasPrefix("**") { underCode = true } else if line.hasPrefix("- `") { if underCode { top.append(line) } } else { underCode = false }
        }
        #expect(top.count >= 3 && top.allSatisfy { cut.contains($0) })
        // What is left out is counted, and the counts add up.
        let listed = cut.split(separator: "\n").filter { $0.hasPrefix("- `") }.count
        let leftOut = cut.split(separator: "\n").compactMap { line -> Int? in
            line.hasSuffix("more, less important, left out of this summary.") ? Int(line.prefix { $0 != " " }) : nil
        }.reduce(0, +)
        #expect(leftOut > 0 && listed + leftOut == findings.count)
        #expect(cut.contains("\(leftOut) finding(s) left out to keep this summary under 60000 bytes: `h5replay report --run \(model.run.id ?? 0) --format html -o report.html` has them all."))
    }

    @Test("HTML: self-contained, with the matrix, expected vs actual, the redirect chain and both jars' timelines")
    func html() throws {
        let (store, model) = try Self.replayed(simulator: true)
        let html = HTMLReport(showSecrets: false).render(model, context: try .load(from: store, model: model))
        #expect(!html.contains("src=\"http") && !html.contains("href=\"http") && !html.contains("<link ") && !html.contains("<script"))
        #expect(html.contains("<table class=\"matrix\" id=\"matrix\">"))
        #expect(html.contains("expected (recording)") && html.contains("actual (replay)"))
        // The login chain: POST /login -> 302 -> GET /home, and where each preset left the page.
        #expect(html.contains("Redirect chain from #1"))
        #expect(html.contains("<tr class=\"error\"><td>urlprotocol-naive</td><td>shop.example.com/login &#10007; (the redirect is hidden)</td></tr>"))
        #expect(html.contains("<tr class=\"ok\"><td>plain</td><td>shop.example.com/home &#10003;</td></tr>"))
        // Jar timelines: the session cookie enters NativeJar by P3, then WebJar by J1.
        #expect(html.contains("<svg class=\"timeline\""))
        #expect(html.contains("+session P3") && html.contains("+session J1"))
        #expect(!html.contains(">B<"))
    }
}
