import Findings
import WebViewEmulation

/// The upgrade question: where a run replays one preset at two framework releases
/// (`capacitor-http@7.4.2`, `capacitor-http@8.4.2`), what the newer release fixes and what
/// it breaks, per recording. A finding is the same finding in both columns when it has the
/// same recording, exchange, code and subject, as `gate` compares runs.
public struct Upgrade: Sendable {
    /// The older column, then the newer, as the run names them.
    public var from: String
    public var to: String
    /// Per recording with a difference, in the run's order.
    public var recordings: [Change]

    public struct Change: Sendable {
        public var recording: String
        /// The older column's findings the newer does not have.
        public var fixed: [Finding]
        /// The newer column's findings the older does not have.
        public var broken: [Finding]
    }

    public var fixedCount: Int { recordings.reduce(0) { $0 + $1.fixed.count } }
    public var brokenCount: Int { recordings.reduce(0) { $0 + $1.broken.count } }

    /// Each pair of neighbouring releases of one preset among `presets`, oldest first. A
    /// preset named without a version is the newest release the model knows.
    public static func pairs(_ presets: [String]) -> [(from: String, to: String)] {
        var byBase: [String: [(name: String, version: SemanticVersion)]] = [:]
        var order: [String] = []
        for name in presets {
            guard let (base, version) = release(of: name) else { continue }
            if byBase[base] == nil { order.append(base) }
            byBase[base, default: []].append((name, version))
        }
        return order.flatMap { base -> [(from: String, to: String)] in
            let sorted = byBase[base]!.sorted { $0.version < $1.version }
            return zip(sorted, sorted.dropFirst()).map { ($0.name, $1.name) }
        }
    }

    /// `capacitor-http@7.4.2` -> (`capacitor-http`, 7.4.2); a framework preset's bare name,
    /// its newest release; nil for a preset of no framework.
    static func release(of name: String) -> (base: String, version: SemanticVersion)? {
        if let at = name.lastIndex(of: "@"), let version = SemanticVersion(String(name[name.index(after: at)...])) {
            return (String(name[..<at]), version)
        }
        return Preset.named(name)?.frameworkVersion.map { (name, $0.version) }
    }

    /// The comparison of two columns over the findings a report holds.
    public static func compare(from: String, to: String, in model: ReportModel) -> Upgrade {
        func key(_ f: Finding) -> String { [f.recording, String(f.sequence), f.method, f.url, f.code.rawValue, f.subject ?? ""].joined(separator: "\u{1F}") }
        let older = model.findings.filter { $0.preset == from }, newer = model.findings.filter { $0.preset == to }
        let olderKeys = Set(older.map(key)), newerKeys = Set(newer.map(key))
        let fixed = Dictionary(grouping: older.filter { !newerKeys.contains(key($0)) }, by: \.recording)
        let broken = Dictionary(grouping: newer.filter { !olderKeys.contains(key($0)) }, by: \.recording)
        let changes = model.recordings.compactMap { recording -> Change? in
            let f = fixed[recording] ?? [], b = broken[recording] ?? []
            return f.isEmpty && b.isEmpty ? nil : Change(recording: recording, fixed: f.sorted(by: Finding.moreImportant), broken: b.sorted(by: Finding.moreImportant))
        }
        return Upgrade(from: from, to: to, recordings: changes)
    }

    /// "BODY_LOST #3, COOKIE_MISSING #5 and #7": codes by count, each with its exchanges.
    public static func summary(_ findings: [Finding]) -> String {
        guard !findings.isEmpty else { return "nothing" }
        var order: [FindingCode] = []
        var byCode: [FindingCode: [Int]] = [:]
        for f in findings {
            if byCode[f.code] == nil { order.append(f.code) }
            byCode[f.code, default: []].append(f.sequence)
        }
        return order.map { code in
            let sequences = Array(Set(byCode[code]!)).sorted()
            let shown = sequences.prefix(5).map { "#\($0)" }.joined(separator: ", ")
            return "\(code.rawValue) \(shown)\(sequences.count > 5 ? " and \(sequences.count - 5) more" : "")"
        }.joined(separator: "; ")
    }
}

extension ReportModel {
    /// The upgrade comparisons this run allows: one per pair of neighbouring releases of a
    /// preset it replays at several.
    public var upgrades: [Upgrade] {
        Upgrade.pairs(presets).map { Upgrade.compare(from: $0.from, to: $0.to, in: self) }
    }
}
