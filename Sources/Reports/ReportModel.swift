import Findings
import ReportStore

/// What every report format renders: a run, its recordings and presets, its findings.
public struct ReportModel: Sendable {
    public var run: RunRow
    public var recordings: [String]
    public var presets: [String]
    public var findings: [Finding]

    public init(run: RunRow, recordings: [String], presets: [String], findings: [Finding]) {
        self.run = run
        self.recordings = recordings
        self.presets = presets
        self.findings = findings
    }

    /// Loads the run `id` (the latest when nil) from `store`.
    public static func load(from store: ReportStore, run id: Int64?) throws -> ReportModel? {
        guard let run = try store.run(id: id), let runID = run.id else { return nil }
        return ReportModel(run: run, recordings: try store.recordingNames(run: runID), presets: run.presetList, findings: try store.findings(run: runID))
    }

    /// Findings counted per severity for one cell of the matrix.
    public struct Cell: Sendable, Hashable {
        public var errors = 0
        public var warnings = 0
        public var infos = 0
        public var isClean: Bool { errors == 0 && warnings == 0 && infos == 0 }
    }

    public func cell(recording: String, preset: String) -> Cell {
        var cell = Cell()
        for f in findings where f.recording == recording && f.preset == preset {
            switch f.severity {
            case .error: cell.errors += 1
            case .warning: cell.warnings += 1
            case .info: cell.infos += 1
            }
        }
        return cell
    }

    public func count(_ severity: Severity) -> Int { findings.filter { $0.severity == severity }.count }
}

/// Hides cookie values and other secrets unless the user asks for them.
public struct Redactor: Sendable {
    public var showSecrets: Bool

    public init(showSecrets: Bool) {
        self.showSecrets = showSecrets
    }

    /// A finding's expected or actual fields, with secret fields replaced by their length.
    public func fields(_ fields: [String: String]) -> [String: String] {
        guard !showSecrets else { return fields }
        var out = fields
        for key in fields.keys where Finding.secretFields.contains(key) {
            out[key] = "<redacted, \(fields[key]!.utf8.count) bytes>"
        }
        return out
    }
}
