import TrafficModel
import Findings

/// Markdown for a CI job summary: the matrix, the gate's verdict when there is one, and
/// the findings grouped by preset and code.
public struct MarkdownReport: Sendable {
    public var redactor: Redactor

    public init(showSecrets: Bool, secrets: SecretNames = .default) {
        self.redactor = Redactor(showSecrets: showSecrets, names: secrets)
    }

    public func render(_ model: ReportModel, gate: Gate.Result? = nil) -> String {
        let model = redactor.apply(model)
        let gate = gate.map { redactor.apply($0) }
        let run = model.run
        var out = "## h5replay: run \(run.id ?? 0)\(run.label.map { " (\(escape($0)))" } ?? "")\n\n"
        out += "\(run.profile), \(model.recordings.count) recording(s), \(run.exchangeCount) exchange(s). "
        out += "**\(model.count(.error)) error(s)**, \(model.count(.warning)) warning(s), \(model.count(.info)) info.\n\n"
        if let gate {
            out += gate.passed ? "**Gate passed**" : "**Gate failed: \(gate.failing.count) new finding(s)**"
            out += gate.baseline.map { " against run \($0.id ?? 0)\($0.label.map { " (\(escape($0)))" } ?? "")" } ?? " (no baseline)"
            out += ": \(gate.new.count) new, \(gate.fixed.count) fixed, \(gate.unchanged.count) unchanged.\n\n"
            if !gate.failing.isEmpty {
                out += "| new finding | preset | recording | exchange | rules |\n| --- | --- | --- | --- | --- |\n"
                for f in gate.failing {
                    out += "| \(f.code.rawValue) | \(f.preset) | \(escape(f.recording)) | #\(f.sequence) \(f.method) \(escape(f.url)) | \(f.rules.map(\.rawValue).joined(separator: ", ")) |\n"
                }
                out += "\n"
            }
        }
        out += "| recording | " + model.presets.joined(separator: " | ") + " |\n"
        out += "| --- |" + String(repeating: " --- |", count: model.presets.count) + "\n"
        for recording in model.recordings {
            out += "| \(escape(recording)) |"
            for preset in model.presets {
                let c = model.cell(recording: recording, preset: preset)
                out += c.isClean ? " ✅ ok |" : " \(c.errors > 0 ? "❌" : "⚠️") \(c.errors)E \(c.warnings)W \(c.infos)I |"
            }
            out += "\n"
        }
        if !model.coveragePairs.isEmpty {
            out += "\n### Offline package and prefetch coverage\n\n| recording | preset | offline hit | stale | miss | not interceptable | prefetch hit | mismatch | stale | unused |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
            for (recording, preset) in model.coveragePairs {
                guard let c = model.coverageCounts(recording: recording, preset: preset) else { continue }
                let o = ["hit", "stale", "miss", "not-interceptable"].map { String(c.offline[$0] ?? 0) }
                let p = ["hit", "mismatch", "stale", "unused"].map { String(c.prefetch[$0] ?? 0) }
                out += "| \(escape(recording)) | \(preset) | " + (o + p).joined(separator: " | ") + " |\n"
            }
        }
        for preset in model.presets {
            let findings = model.findings.filter { $0.preset == preset }
            guard !findings.isEmpty else { continue }
            out += "\n### \(preset)\n\n\(escape(model.summary(preset: preset)))\n"
            for code in FindingCode.allCases {
                let list = findings.filter { $0.code == code }.sorted(by: Finding.moreImportant)
                guard !list.isEmpty else { continue }
                out += "\n**\(code.rawValue)** (\(list.count))\n\n"
                for f in list.prefix(TableReport.shownPerCode) { out += line(f) }
                if list.count > TableReport.shownPerCode {
                    // The rest folded, as GitHub renders <details> in a job summary.
                    out += "\n<details><summary>\(list.count - TableReport.shownPerCode) more, less important</summary>\n\n"
                    for f in list.dropFirst(TableReport.shownPerCode) { out += line(f) }
                    out += "\n</details>\n"
                }
            }
        }
        return out
    }

    /// Keeps table cells and list items intact: escapes `|` and Markdown emphasis.
    func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "|", "*", "_", "`", "<", ">", "[", "]": out += "\\\(c)"
            case "\n": out += " "
            default: out.append(c)
            }
        }
        return out
    }

    private func line(_ f: Finding) -> String {
        "- `\(f.severity.rawValue)` \(escape(f.recording)) #\(f.sequence) (\(f.rank.rawValue)\(f.likelihood.map { ", likelihood \(TableReport.percent($0))" } ?? "")): \(escape(f.message))\n"
    }
}
