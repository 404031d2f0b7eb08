import TrafficModel
import Findings

/// Markdown for a CI job summary: the matrix, the gate's verdict when there is one, and
/// the findings grouped by preset and code.
///
/// A job summary has a size limit (GitHub Actions refuses a step summary over 1 MiB and
/// shows none), so the report stays within `limit` bytes: the verdict, the matrix and each
/// code's most important findings always; the other findings, folded, as far as the limit
/// allows, with a count of those left out and the command that lists them all.
public struct MarkdownReport: Sendable {
    public var redactor: Redactor
    /// The most bytes the report takes (`jobSummaryLimit` unless told).
    public var limit: Int
    /// Under GitHub Actions' 1 MiB limit for a step summary.
    public static let jobSummaryLimit = 1_000_000
    /// New findings listed in the gate's table; the rest are counted.
    public static let gateRowsShown = 100

    public init(showSecrets: Bool, secrets: SecretNames = .default, limit: Int = Self.jobSummaryLimit) {
        self.redactor = Redactor(showSecrets: showSecrets, names: secrets)
        self.limit = limit
    }

    public func render(_ model: ReportModel, gate: Gate.Result? = nil) -> String {
        let model = redactor.apply(model)
        let gate = gate.map { redactor.apply($0) }
        let run = model.run
        var out = "## h5replay: run \(run.id ?? 0)\(run.label.map { " (\(escape($0)))" } ?? "")\n\n"
        out += "\(run.profile), \(model.recordings.count) recording(s), \(run.exchangeCount) exchange(s). "
        out += "**\(model.count(.error)) error(s)**, \(model.count(.warning)) warning(s), \(model.count(.info)) info.\n\n"
        if let gate { out += gateSection(gate, model) }
        out += matrix(model) + coverage(model) + upgrades(model)
        // Each code's most important findings are written whatever the limit; what they
        // leave of it goes to the rest, folded, in the order they come.
        struct Group {
            var heading: String
            var rest: ArraySlice<Finding>
        }
        var groups: [Group] = []
        var shownBytes = 0
        var byPreset: [String: [Finding]] = [:]
        for f in model.findings where !model.isShared(f) { byPreset[f.preset, default: []].append(f) }
        let note = TableReport(color: false, showSecrets: false).baselineNote(model)
        if !note.isEmpty { out += "\n" + escape(note) }
        for preset in model.presets {
            guard let findings = byPreset[preset] else { continue }
            let role = preset == model.run.baselinePreset ? " (baseline)" : ""
            var heading = "\n### \(preset)\(role)\n\n\(escape(model.summary(preset: preset)))\n" + advice(model.advice.filter { $0.preset == preset })
            var byCode: [FindingCode: [Finding]] = [:]
            for f in findings { byCode[f.code, default: []].append(f) }
            for code in FindingCode.allCases {
                guard let list = byCode[code]?.sorted(by: Finding.moreImportant) else { continue }
                heading += "\n**\(code.rawValue)** (\(list.count))\n\n"
                for f in list.prefix(TableReport.shownPerCode) { heading += line(f) }
                groups.append(Group(heading: heading, rest: list.dropFirst(TableReport.shownPerCode)))
                shownBytes += heading.utf8.count
                heading = ""
            }
        }
        // Room is kept for a note under each group that may lose findings, and for the last
        // line, until a group is written whole.
        let noteRoom = 80, lastLineRoom = 240
        var left = limit - out.utf8.count - shownBytes - lastLineRoom - noteRoom * groups.lazy.filter { !$0.rest.isEmpty }.count
        var omitted = 0
        for group in groups {
            out += group.heading
            guard !group.rest.isEmpty else { continue }
            // The rest folded, as GitHub renders <details> in a job summary.
            let open = "\n<details><summary>\(group.rest.count) more, less important</summary>\n\n"
            let close = "\n</details>\n"
            var room = left - open.utf8.count - close.utf8.count
            var lines = ""
            var written = 0
            for f in group.rest {
                let text = line(f)
                guard text.utf8.count <= room else { break }
                room -= text.utf8.count
                lines += text
                written += 1
            }
            if written == group.rest.count {
                out += open + lines + close
                left += noteRoom - open.utf8.count - lines.utf8.count - close.utf8.count
            } else {
                omitted += group.rest.count - written
                let folded = written > 0 ? open + lines + close : ""
                out += folded + "\n\(group.rest.count - written) more, less important, left out of this summary.\n"
                left -= folded.utf8.count
            }
        }
        if omitted > 0 {
            out += "\n\(omitted) finding(s) left out to keep this summary under \(limit) bytes: `h5replay report --run \(run.id ?? 0) --format html -o report.html` has them all.\n"
        }
        return out
    }

    /// The gate's verdict against its baseline, and the new findings that failed it.
    func gateSection(_ gate: Gate.Result, _ model: ReportModel) -> String {
        let run = model.run
        var out = ""
        out += gate.passed ? "**Gate passed**" : "**Gate failed: \(gate.failing.count) new finding(s)**"
        out += gate.baseline.map { " against run \($0.id ?? 0)\($0.label.map { " (\(escape($0)))" } ?? "")" } ?? " (no baseline)"
        out += ": \(gate.new.count) new, \(gate.fixed.count) fixed, \(gate.unchanged.count) unchanged.\n\n"
        if !gate.failing.isEmpty {
            out += "| new finding | preset | recording | exchange | rules |\n| --- | --- | --- | --- | --- |\n"
            for f in gate.failing.prefix(Self.gateRowsShown) {
                out += "| \(f.code.rawValue) | \(f.preset) | \(escape(f.recording)) | #\(f.sequence) \(f.method) \(escape(f.url)) | \(f.rules.map(\.rawValue).joined(separator: ", ")) |\n"
            }
            if gate.failing.count > Self.gateRowsShown {
                out += "\n\(gate.failing.count - Self.gateRowsShown) more new finding(s): `h5replay report --run \(run.id ?? 0)` lists them by preset.\n"
            }
            out += "\n"
        }
        return out
    }

    /// Each recording's cell under each preset.
    func matrix(_ model: ReportModel) -> String {
        var out = ""
        out += "| recording | " + model.presets.joined(separator: " | ") + " |\n"
        out += "| --- |" + String(repeating: " --- |", count: model.presets.count) + "\n"
        for recording in model.recordings {
            out += "| \(escape(recording)) |"
            for preset in model.presets {
                let c = model.cell(recording: recording, preset: preset)
                out += model.notCompared(recording: recording, preset: preset).map { " ➖ \($0) |" } ?? (c.isClean ? " ✅ ok |" : " \(c.errors > 0 ? "❌" : "⚠️") \(c.errors)E \(c.warnings)W \(c.infos)I |")
            }
            out += "\n"
        }
        return out
    }

    /// The offline package's and the prefetch config's verdicts, where the run has them.
    func coverage(_ model: ReportModel) -> String {
        var out = ""
        if !model.coveragePairs.isEmpty {
            out += "\n### Offline package and prefetch coverage\n\n| recording | preset | offline hit | stale | miss | not interceptable | prefetch hit | mismatch | stale | unused |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
            for (recording, preset) in model.coveragePairs {
                guard let c = model.coverageCounts(recording: recording, preset: preset) else { continue }
                let o = ["hit", "stale", "miss", "not-interceptable"].map { String(c.offline[$0] ?? 0) }
                let p = ["hit", "mismatch", "stale", "unused"].map { String(c.prefetch[$0] ?? 0) }
                out += "| \(escape(recording)) | \(preset) | " + (o + p).joined(separator: " | ") + " |\n"
            }
        }
        return out
    }

    /// What moving each framework preset to another release fixes and breaks.
    func upgrades(_ model: ReportModel) -> String {
        var out = ""
        for upgrade in model.upgrades {
            out += "\n### Upgrade \(upgrade.from) to \(upgrade.to): fixes \(upgrade.fixedCount), breaks \(upgrade.brokenCount)\n\n"
            if upgrade.recordings.isEmpty { out += "The same findings under both.\n" } else { out += "| recording | fixes | breaks |\n| --- | --- | --- |\n" }
            for change in upgrade.recordings {
                out += "| \(escape(change.recording)) | \(escape(Upgrade.summary(change.fixed))) | \(escape(Upgrade.summary(change.broken))) |\n"
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

    /// A preset's advice, one item per change: its kind, snippet, counts and words.
    func advice(_ lines: [AdviceLine]) -> String {
        guard !lines.isEmpty else { return "" }
        return "\n**Advice**, each change replayed on the run's recordings:\n\n"
            + lines.map { "- \($0.kind) `\(String($0.snippet.map { $0 == "`" ? "'" : $0 }))`: \($0.counted); \(escape($0.change))\n" }.joined()
    }

    private func line(_ f: Finding) -> String {
        "- `\(f.severity.rawValue)` \(escape(f.recording)) #\(f.sequence) (\(f.rank.rawValue)\(f.likelihood.map { ", likelihood \(TableReport.percent($0))" } ?? "")): \(escape(f.message))\n"
    }
}
