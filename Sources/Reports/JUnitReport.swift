import TrafficModel
import Findings

/// JUnit XML as Jenkins and GitLab read it: one test suite per preset, one test case per
/// recording and preset, and one `<failure>` per error finding (for `gate --junit`, per
/// finding the gate failed on) carrying its message and rules. The rest go to the test
/// case's system-out.
public struct JUnitReport: Sendable {
    public var redactor: Redactor

    public init(showSecrets: Bool, secrets: SecretNames = .default) {
        self.redactor = Redactor(showSecrets: showSecrets, names: secrets)
    }

    /// The run's errors as failures; with `gate`, what the gate judged instead: the new
    /// findings at or above its bar are the failures, so the file fails exactly when the
    /// gate does, and the other findings (new below the bar, unchanged) go to system-out.
    public func render(_ model: ReportModel, gate: Gate.Result? = nil) -> String {
        let model = redactor.apply(model)
        let failing = gate.map { Set($0.failing.map(\.identity)) }
        let isFailure: (Finding) -> Bool = { f in failing.map { $0.contains(f.identity) } ?? (f.severity == .error) }
        let errors = model.findings.filter { isFailure($0) && !model.isShared($0) }
        let failingCases = Set(errors.map { "\($0.preset)|\($0.recording)" }).count
        let total = model.recordings.count * model.presets.count
        let byCell = model.findingsByCell()
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<testsuites name=\"h5replay\" tests=\"\(total)\" failures=\"\(failingCases)\" errors=\"0\" time=\"0\">\n"
        for preset in model.presets {
            let presetFailures = Set(errors.filter { $0.preset == preset }.map(\.recording)).count
            out += "  <testsuite name=\"\(attr(preset))\" tests=\"\(model.recordings.count)\" failures=\"\(presetFailures)\" errors=\"0\" skipped=\"\(model.emptyRecordings.count)\" time=\"0\" timestamp=\"\(attr(model.run.startedAt))\" package=\"h5replay\">\n"
            out += "    <properties>\n"
            out += "      <property name=\"profile\" value=\"\(attr(model.run.profile))\"/>\n"
            out += "      <property name=\"run\" value=\"\(model.run.id ?? 0)\"/>\n"
            if let label = model.run.label { out += "      <property name=\"label\" value=\"\(attr(label))\"/>\n" }
            out += "    </properties>\n"
            for recording in model.recordings {
                let findings = byCell[ReportModel.cellKey(recording: recording, preset: preset)] ?? []
                out += "    <testcase name=\"\(attr(recording))\" classname=\"h5replay.\(attr(preset))\" time=\"0\""
                if model.isEmpty(recording: recording) {
                    out += ">\n      <skipped message=\"empty recording: no exchange to replay\"/>\n    </testcase>\n"
                    continue
                }
                guard !findings.isEmpty else {
                    out += "/>\n"
                    continue
                }
                out += ">\n"
                for f in findings where isFailure(f) {
                    let message = "\(f.code.rawValue) #\(f.sequence) \(f.method) \(f.url) [\(f.rules.map(\.rawValue).joined(separator: ", "))]"
                    out += "      <failure type=\"\(f.code.rawValue)\" message=\"\(attr(message))\">\(text(details(f)))</failure>\n"
                }
                let others = findings.filter { !isFailure($0) }
                if !others.isEmpty {
                    out += "      <system-out>\(text(others.map { "[\($0.severity.rawValue)] \($0.code.rawValue) #\($0.sequence): \($0.message)" }.joined(separator: "\n")))</system-out>\n"
                }
                out += "    </testcase>\n"
            }
            out += "  </testsuite>\n"
        }
        out += "</testsuites>\n"
        return out
    }

    private func details(_ f: Finding) -> String {
        var lines = [f.message, "rules: \(f.rules.map(\.rawValue).joined(separator: ", ")) (confidence \(f.confidence.rawValue)); rank \(f.rank.rawValue)" + (f.likelihood.map { "; likelihood \(TableReport.percent($0))" } ?? "")]
        let expected = redactor.fields(f.expected), actual = redactor.fields(f.actual)
        lines.append("expected: " + expected.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", "))
        lines.append("actual: " + actual.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", "))
        return lines.joined(separator: "\n")
    }

    /// XML-escapes attribute text, dropping characters XML 1.0 cannot hold.
    func attr(_ s: String) -> String { escape(s, quotes: true) }
    func text(_ s: String) -> String { escape(s, quotes: false) }

    private func escape(_ s: String, quotes: Bool) -> String {
        var out = ""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"" where quotes: out += "&quot;"
            case "\n" where quotes: out += "&#10;"
            case "\u{9}", "\u{A}", "\u{D}": out.unicodeScalars.append(scalar)
            default:
                let v = scalar.value
                if v >= 0x20 && v != 0xFFFE && v != 0xFFFF { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }
}
