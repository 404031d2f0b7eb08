import Findings
import ReportStore
import WebViewEmulation

/// The CI gate: a run's findings against a baseline run's.
///
/// A finding is the same finding across runs when it has the same recording, exchange
/// (order, method and URL), preset, code and subject (`Finding.identity`). The gate fails
/// when a finding that the baseline does not have reaches the bar and is not allowed.
public struct Gate: Sendable {
    public var failOn: Severity
    /// Finding codes or rule ids that never fail the gate.
    public var allow: Set<String>
    /// The least important rank a new finding needs to fail the gate (`--min-rank api`:
    /// documents and first-party API calls, and important cookies).
    public var minRank: Rank

    public init(failOn: Severity = .error, allow: Set<String> = [], minRank: Rank = .thirdParty) {
        self.failOn = failOn
        self.allow = allow
        self.minRank = minRank
    }

    public struct Result: Sendable {
        public var run: RunRow
        public var baseline: RunRow?
        public var new: [Finding]
        public var fixed: [Finding]
        public var unchanged: [Finding]
        /// The new findings at or above the bar that are not allowed.
        public var failing: [Finding]
        public var passed: Bool { failing.isEmpty }
    }

    public func isAllowed(_ f: Finding) -> Bool {
        allow.contains(f.code.rawValue) || f.rules.contains { allow.contains($0.rawValue) }
    }

    /// Compares `findings` with `baselineFindings`; with no baseline every finding is new.
    /// A preset's finding that the run's baseline preset shares is judged once, under the
    /// baseline preset.
    public func evaluate(run: RunRow, findings: [Finding], baseline: RunRow?, baselineFindings: [Finding]) -> Result {
        let findings = findings.filter { !ReportModel.isShared($0, baseline: run.baselinePreset) }
        let baselineFindings = baselineFindings.filter { !ReportModel.isShared($0, baseline: baseline?.baselinePreset) }
        let before = Set(baselineFindings.map(\.identity))
        let now = Set(findings.map(\.identity))
        let new = findings.filter { !before.contains($0.identity) }
        let unchanged = findings.filter { before.contains($0.identity) }
        let fixed = baselineFindings.filter { !now.contains($0.identity) }
        let failing = new.filter { $0.severity >= failOn && $0.rank.reaches(minRank) && !isAllowed($0) }
        return Result(run: run, baseline: baseline, new: new, fixed: fixed, unchanged: unchanged, failing: failing)
    }

    /// What the gate prints: the comparison, then new, fixed and unchanged findings.
    public func text(_ result: Result, redactor: Redactor = Redactor(showSecrets: false)) -> String {
        let r = redactor.apply(result)
        var out = "Gate: run \(r.run.id ?? 0)\(r.run.label.map { " (\($0))" } ?? "")"
        if let b = r.baseline {
            out += " against baseline run \(b.id ?? 0)\(b.label.map { " (\($0))" } ?? "")"
        } else {
            out += ", no baseline: every finding counts as new"
        }
        out += "; fails on \(failOn.rawValue)\(failOn == .error ? "" : " and above")"
        out += allow.isEmpty ? "\n" : "; allowed: \(allow.sorted().joined(separator: ", "))\n"
        // Looked up per listed finding: a scan of the failing list each time was
        // quadratic in a large run's findings.
        let failing = Set(r.failing.map(\.identity))
        func list(_ title: String, _ findings: [Finding], marking: Bool) -> String {
            var s = "\n\(title) (\(findings.count))\n"
            for f in findings {
                let mark = marking ? (failing.contains(f.identity) ? "FAIL " : isAllowed(f) ? "allowed " : "") : ""
                s += "  \(mark)[\(f.severity.rawValue)] \(f.code.rawValue) \(f.preset) \(f.recording) #\(f.sequence) \(f.method) \(f.url)\(f.subject.map { " (\($0))" } ?? "")\n    \(f.message)\n"
            }
            return s
        }
        out += list("New", r.new, marking: true)
        if r.baseline != nil {
            out += list("Fixed", r.fixed, marking: false)
            out += "\nUnchanged (\(r.unchanged.count))\n"
        }
        out += r.passed
            ? "\nPASSED: no new finding at \(failOn.rawValue) or above.\n"
            : "\nFAILED: \(r.failing.count) new finding(s) at \(failOn.rawValue) or above.\n"
        return out
    }
}
