import TrafficModel
import Findings

/// The terminal report: the side-by-side matrix (recordings x presets, counts per
/// severity), then per preset the findings grouped by code with the sentence of each.
public struct TableReport: Sendable {
    public var color: Bool
    public var redactor: Redactor
    /// The widest line the matrix prints: more presets than fit go to another block of
    /// columns below, each with the recordings' names.
    public var width: Int

    public init(color: Bool, showSecrets: Bool, secrets: SecretNames = .default, width: Int = TableReport.defaultWidth) {
        self.color = color
        self.redactor = Redactor(showSecrets: showSecrets, names: secrets)
        self.width = width
    }

    /// Ten in-house presets on a wide terminal; the framework presets then make a second block.
    public static let defaultWidth = 230

    /// How many findings of a code the report shows before "and N more" unless verbose.
    public static let shownPerCode = 3

    /// The matrix, then per preset a summary line and, per code, its count and the most
    /// important findings first (`verbose`: all of them).
    public func render(_ model: ReportModel, details: Bool = true, verbose: Bool = false) -> String {
        // The matrix and the counts show no secret: only the findings printed are redacted,
        // each as it is printed (a large run prints a few of its findings).
        var out = ""
        let run = model.run
        out += "Run \(run.id ?? 0)\(run.label.map { " (\($0))" } ?? ""): \(run.profile), \(model.recordings.count) recording(s), \(run.exchangeCount) exchange(s), \(model.presets.count) preset(s)\n\n"
        out += matrix(model)
        out += "\n\(model.count(.error)) error(s), \(model.count(.warning)) warning(s), \(model.count(.info)) info\n"
        out += baselineNote(model)
        out += coverage(model)
        out += upgrades(model)
        guard details else { return out }
        for preset in model.presets {
            let tallies = model.tallies(preset: preset)
            guard !tallies.isEmpty else { continue }
            let role = preset == model.run.baselinePreset ? " (the baseline: the web view's own)" : ""
            out += "\n" + paint("\(preset)", bold: true) + role + ": " + model.summary(preset: preset) + "\n"
            var byCode: [FindingCode: [Finding]] = [:]
            for f in model.findings where f.preset == preset && !model.isShared(f) { byCode[f.code, default: []].append(f) }
            for code in ReportModel.ordered(tallies) {
                let tally = tallies[code]!
                // What the model holds of the code: every finding, or the most important.
                let list = (byCode[code] ?? []).sorted(by: Finding.moreImportant)
                out += "  \(paint(code.rawValue, severity: tally.mostImportant.severity)) (\(tally.count))\n"
                let shown = verbose ? list : Array(list.prefix(Self.shownPerCode))
                for f in shown.map(redactor.finding) {
                    out += "    [\(f.severity.rawValue)] \(f.recording) #\(f.sequence) (\(Self.qualifiers(f))): \(f.message)\n"
                }
                if shown.count < tally.count {
                    out += "    ... and \(tally.count - shown.count) more, less important (--verbose shows all)\n"
                }
            }
        }
        return out
    }

    /// What the baseline is and what it took out of the other presets' columns: "" when
    /// the run has no baseline preset.
    public func baselineNote(_ model: ReportModel) -> String {
        guard let baseline = model.run.baselinePreset else { return "" }
        let shared = model.presets.reduce(0) { $0 + model.sharedCount(preset: $1) }
        guard shared > 0 else { return "" }
        return "Baseline \(baseline): what it finds is the web view's own (ITP, the recording browser's differences from WKWebView); "
            + "\(shared) finding(s) of the other presets are the same and counted under \(baseline) alone (--baseline-preset none counts them everywhere).\n"
    }

    /// "api", "subresource, likelihood 3%".
    static func qualifiers(_ f: Finding) -> String {
        var parts = [f.rank.rawValue]
        if let likelihood = f.likelihood { parts.append("likelihood \(Self.percent(likelihood))") }
        return parts.joined(separator: ", ")
    }

    /// "3%", "0.4%", "<0.1%".
    public static func percent(_ p: Double) -> String {
        let value = p * 100
        if value >= 10 { return "\(Int(value.rounded()))%" }
        if value >= 0.1 { return "\((value * 10).rounded() / 10)%" }
        return "<0.1%"
    }

    /// What each newer release of a preset the run replays at several fixes and breaks.
    public func upgrades(_ model: ReportModel) -> String {
        var out = ""
        for upgrade in model.upgrades {
            out += "\nUpgrade \(upgrade.from) -> \(upgrade.to): fixes \(upgrade.fixedCount), breaks \(upgrade.brokenCount)\n"
            for change in upgrade.recordings {
                out += "  \(change.recording): fixes \(Upgrade.summary(change.fixed)); breaks \(Upgrade.summary(change.broken))\n"
            }
        }
        return out
    }

    /// The offline package's and the prefetch's coverage, per recording and preset, when the
    /// run had either: one line each.
    public func coverage(_ model: ReportModel) -> String {
        let pairs = model.coveragePairs
        guard !pairs.isEmpty else { return "" }
        var out = "\nOffline package and prefetch coverage (per recording and preset):\n"
        let width = pairs.map { $0.recording.count + $0.preset.count + 3 }.max() ?? 0
        for (recording, preset) in pairs {
            guard let c = model.coverageCounts(recording: recording, preset: preset) else { continue }
            var parts: [String] = []
            if !c.offline.isEmpty {
                parts.append("offline \(c.offline["hit"] ?? 0) hit, \(c.offline["stale"] ?? 0) stale, \(c.offline["miss"] ?? 0) miss, \(c.offline["not-interceptable"] ?? 0) not interceptable")
            }
            if !c.prefetch.isEmpty {
                parts.append("prefetch \(c.prefetch["hit"] ?? 0) hit, \(c.prefetch["mismatch"] ?? 0) mismatch, \(c.prefetch["stale"] ?? 0) stale, \(c.prefetch["unused"] ?? 0) unused")
            }
            out += "  " + "\(recording) / \(preset)".padding(toLength: width, withPad: " ", startingAt: 0) + "  " + parts.joined(separator: "; ") + "\n"
        }
        return out
    }

    /// The matrix: one row per recording, one column per preset; each cell `E/W/I` or `ok`.
    /// Presets that do not fit `width` continue in another block below.
    public func matrix(_ model: ReportModel) -> String {
        let nameWidth = max(9, model.recordings.map(\.count).max() ?? 0)
        var blocks: [[String]] = [[]]
        var used = nameWidth
        for preset in model.presets {
            let column = 2 + max(preset.count, 9)
            if !blocks[blocks.count - 1].isEmpty && used + column > width {
                blocks.append([])
                used = nameWidth
            }
            blocks[blocks.count - 1].append(preset)
            used += column
        }
        var out = ""
        for (i, presets) in blocks.enumerated() {
            if i > 0 { out += "\n" }
            let widths = presets.map { max($0.count, 9) }
            out += "recording".padding(toLength: nameWidth, withPad: " ", startingAt: 0)
            for (preset, width) in zip(presets, widths) { out += "  " + preset.padding(toLength: width, withPad: " ", startingAt: 0) }
            out += "\n" + String(repeating: "-", count: nameWidth)
            for width in widths { out += "  " + String(repeating: "-", count: width) }
            out += "\n"
            for recording in model.recordings {
                out += recording.padding(toLength: nameWidth, withPad: " ", startingAt: 0)
                for (preset, width) in zip(presets, widths) {
                    let cell = model.cell(recording: recording, preset: preset)
                    let text = model.notCompared(recording: recording, preset: preset) ?? (cell.isClean ? "ok" : "\(cell.errors)E \(cell.warnings)W \(cell.infos)I")
                    let padded = text.padding(toLength: width, withPad: " ", startingAt: 0)
                    out += "  " + (cell.errors > 0 ? paint(padded, severity: .error) : cell.warnings > 0 ? paint(padded, severity: .warning) : padded)
                }
                out += "\n"
            }
        }
        out += "(E errors, W warnings, I info per recording and preset)\n"
        return out
    }

    private func paint(_ text: String, severity: Severity) -> String {
        guard color else { return text }
        switch severity {
        case .error: return "\u{1B}[31m\(text)\u{1B}[0m"
        case .warning: return "\u{1B}[33m\(text)\u{1B}[0m"
        case .info: return "\u{1B}[36m\(text)\u{1B}[0m"
        }
    }

    private func paint(_ text: String, bold: Bool) -> String {
        color && bold ? "\u{1B}[1m\(text)\u{1B}[0m" : text
    }
}
