import Findings
import Foundation
import ReportStore
import Testing
import WebViewEmulation
@testable import Reports

@Suite("Gate")
struct GateTests {
    static let run = RunRow(id: 2, startedAt: "t", finishedAt: "t", toolVersion: "t", profile: "p", ios: "18", simulator: false, presets: "a", label: nil, gitRevision: nil, recordingCount: 1, exchangeCount: 1)
    static let base = RunRow(id: 1, startedAt: "t", finishedAt: "t", toolVersion: "t", profile: "p", ios: "18", simulator: false, presets: "a", label: "main", gitRevision: nil, recordingCount: 1, exchangeCount: 1)

    static func finding(_ code: FindingCode, _ sequence: Int, severity: Severity = .error, rules: [RuleID] = ["P1"], message: String = "m") -> Finding {
        Finding(code: code, severity: severity, preset: "a", recording: "r", sequence: sequence, method: "POST", url: "https://a/\(sequence)", subject: nil, rules: rules, confidence: .source, expected: [:], actual: [:], detail: message)
    }

    @Test("new, fixed and unchanged against the baseline; only new findings at the bar fail")
    func compare() {
        let old = [Self.finding(.bodyLost, 1), Self.finding(.redirectHidden, 2, rules: ["P4"])]
        let now = [Self.finding(.bodyLost, 1, message: "reworded"), Self.finding(.cookieMissing, 3, rules: ["P3", "J3"]), Self.finding(.cookieExtra, 4, severity: .warning)]
        let result = Gate().evaluate(run: Self.run, findings: now, baseline: Self.base, baselineFindings: old)
        #expect(result.new.map(\.sequence) == [3, 4])
        #expect(result.fixed.map(\.sequence) == [2])
        #expect(result.unchanged.map(\.sequence) == [1])
        #expect(result.failing.map(\.sequence) == [3])
        #expect(!result.passed)
        #expect(Gate(failOn: .warning).evaluate(run: Self.run, findings: now, baseline: Self.base, baselineFindings: old).failing.map(\.sequence) == [3, 4])
    }

    @Test("--min-rank: a new error on an image does not fail a gate that asks for API calls and up; one on a document does")
    func minRank() {
        var image = Self.finding(.cookieMissing, 5)
        image.rank = .subresource
        var document = Self.finding(.bodyLost, 6)
        document.rank = .document
        var important = Self.finding(.cookieMissing, 7)
        important.rank = .important
        let gate = Gate(failOn: .error, minRank: .api)
        #expect(gate.evaluate(run: Self.run, findings: [image], baseline: nil, baselineFindings: []).passed)
        #expect(gate.evaluate(run: Self.run, findings: [image, document, important], baseline: nil, baselineFindings: []).failing.map(\.sequence) == [6, 7])
        #expect(!Gate(failOn: .error).evaluate(run: Self.run, findings: [image], baseline: nil, baselineFindings: []).passed)
    }

    @Test("an allowed code or rule never fails the gate")
    func allow() {
        let now = [Self.finding(.cookieMissing, 3, rules: ["P3", "J3"])]
        #expect(Gate(allow: ["COOKIE_MISSING"]).evaluate(run: Self.run, findings: now, baseline: nil, baselineFindings: []).passed)
        #expect(Gate(allow: ["J3"]).evaluate(run: Self.run, findings: now, baseline: nil, baselineFindings: []).passed)
        #expect(!Gate(allow: ["P1"]).evaluate(run: Self.run, findings: now, baseline: nil, baselineFindings: []).passed)
    }

    @Test("without a baseline every finding is new; the text names each and the verdict")
    func noBaseline() {
        let gate = Gate()
        let result = gate.evaluate(run: Self.run, findings: [Self.finding(.bodyLost, 1)], baseline: nil, baselineFindings: [])
        let text = gate.text(result)
        #expect(text.contains("no baseline"))
        #expect(text.contains("FAIL [error] BODY_LOST a r #1 POST https://a/1"))
        #expect(text.contains("FAILED: 1 new finding(s) at error or above."))
    }
}
