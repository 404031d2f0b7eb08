import TrafficModel
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

/// Hides cookie values, secret query values and other secrets unless the user asks for
/// them (`--show-secrets`). Every renderer applies it to the whole model first.
public struct Redactor: Sendable {
    public var showSecrets: Bool
    public var names: SecretNames

    public init(showSecrets: Bool, names: SecretNames = .default) {
        self.showSecrets = showSecrets
        self.names = names
    }

    /// A finding's expected or actual fields: secret fields replaced by their length,
    /// URL fields with secret query values hidden. Applying it twice changes nothing.
    public func fields(_ fields: [String: String]) -> [String: String] {
        guard !showSecrets else { return fields }
        var out = fields
        for (key, value) in fields {
            if Finding.secretFields.contains(key), !value.hasPrefix("<redacted") {
                out[key] = "<redacted, \(value.utf8.count) bytes>"
            } else if key.lowercased().hasSuffix("url") {
                out[key] = names.redactURL(value)
            }
        }
        return out
    }

    public func url(_ url: String) -> String { showSecrets ? url : names.redactURL(url) }

    public func text(_ text: String) -> String { showSecrets ? text : names.redactText(text) }

    public func finding(_ f: Finding) -> Finding {
        guard !showSecrets else { return f }
        var out = f
        out.url = url(f.url)
        out.mapText(text)
        out.subject = f.subject.map(text)
        out.expected = fields(f.expected)
        out.actual = fields(f.actual)
        return out
    }

    public func apply(_ model: ReportModel) -> ReportModel {
        guard !showSecrets else { return model }
        var out = model
        out.findings = model.findings.map(finding)
        return out
    }

    public func apply(_ result: Gate.Result) -> Gate.Result {
        guard !showSecrets else { return result }
        var out = result
        out.new = result.new.map(finding)
        out.fixed = result.fixed.map(finding)
        out.unchanged = result.unchanged.map(finding)
        out.failing = result.failing.map(finding)
        return out
    }
}
