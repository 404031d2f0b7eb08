import TrafficModel
import Findings
import ReportStore

/// What every report format renders: a run, its recordings and presets, its findings.
public struct ReportModel: Sendable {
    public var run: RunRow
    public var recordings: [String]
    public var presets: [String]
    public var findings: [Finding] {
        didSet { cells = Self.count(findings) }
    }
    /// Counts per recording and preset, made in one pass: a matrix of a thousand recordings
    /// under ten presets asks ten thousand times.
    private var cells: [String: Cell]
    /// What an offline package and a prefetch config did, by recording and preset; empty
    /// when the run had neither.
    public var coverage: [String: [String: [CoverageItem]]] = [:]

    public init(run: RunRow, recordings: [String], presets: [String], findings: [Finding]) {
        self.run = run
        self.recordings = recordings
        self.presets = presets
        self.findings = findings
        cells = Self.count(findings)
    }

    private static func count(_ findings: [Finding]) -> [String: Cell] {
        var cells: [String: Cell] = [:]
        for f in findings {
            let key = f.recording + "\u{1F}" + f.preset
            switch f.severity {
            case .error: cells[key, default: Cell()].errors += 1
            case .warning: cells[key, default: Cell()].warnings += 1
            case .info: cells[key, default: Cell()].infos += 1
            }
        }
        return cells
    }

    /// Loads the run `id` (the latest when nil) from `store`.
    public static func load(from store: ReportStore, run id: Int64?) throws -> ReportModel? {
        guard let run = try store.run(id: id), let runID = run.id else { return nil }
        var model = ReportModel(run: run, recordings: try store.recordingNames(run: runID), presets: run.presetList, findings: try store.findings(run: runID))
        model.coverage = try store.coverage(run: runID)
        return model
    }

    /// The run just replayed, from its results in hand: nothing read back. The same order
    /// as `load` gives (recordings by name; findings by recording, preset, exchange, code).
    public init(run: RunRow, results: [ReportStore.RunResult]) {
        let names = Array(Set(results.filter(\.replayed).map(\.recording))).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        self.init(run: run, recordings: names, presets: run.presetList, findings: Self.reportOrder(results))
        for result in results where !result.coverage.isEmpty {
            coverage[result.recording, default: [:]][result.preset] = result.coverage
        }
    }

    /// The results' findings by recording, preset, exchange and code, then as they came:
    /// the order `load` reads. A large run holds hundreds of thousands of findings, so what
    /// is sorted is a small key per finding, never the findings themselves.
    static func reportOrder(_ results: [ReportStore.RunResult]) -> [Finding] {
        // Each distinct recording and preset, ranked by name.
        var groups: [String: [String: Int]] = [:]
        for result in results {
            for f in result.findings { groups[f.recording, default: [:]][f.preset] = 0 }
        }
        var rank = 0
        for recording in groups.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            for preset in groups[recording]!.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                groups[recording]![preset] = rank
                rank += 1
            }
        }
        let codeRank = Dictionary(uniqueKeysWithValues: FindingCode.allCases
            .sorted { $0.rawValue.utf8.lexicographicallyPrecedes($1.rawValue.utf8) }.enumerated().map { ($1, $0) })
        // The findings' place in `results`, in the order they came.
        var keys: [(group: Int, sequence: Int, code: Int, result: Int, index: Int)] = []
        for (r, result) in results.enumerated() {
            // A result's findings share its recording and preset: looked up once.
            let own = groups[result.recording]?[result.preset]
            for (i, f) in result.findings.enumerated() {
                let group = f.recording == result.recording && f.preset == result.preset ? own! : groups[f.recording]![f.preset]!
                keys.append((group, f.sequence, codeRank[f.code]!, r, i))
            }
        }
        keys.sort { a, b in (a.group, a.sequence, a.code, a.result, a.index) < (b.group, b.sequence, b.code, b.result, b.index) }
        return keys.map { results[$0.result].findings[$0.index] }
    }

    /// Counts of one recording and preset's coverage: per verdict, for the offline package
    /// and for the prefetch.
    public struct CoverageCounts: Sendable, Hashable {
        public var offline: [String: Int] = [:]
        public var prefetch: [String: Int] = [:]
    }

    public func coverageCounts(recording: String, preset: String) -> CoverageCounts? {
        guard let items = coverage[recording]?[preset], !items.isEmpty else { return nil }
        var counts = CoverageCounts()
        for item in items {
            switch item.kind {
            case .offline: counts.offline[item.verdict, default: 0] += 1
            case .prefetch: counts.prefetch[item.verdict, default: 0] += 1
            }
        }
        return counts
    }

    /// The recording and preset pairs with coverage, in matrix order.
    public var coveragePairs: [(recording: String, preset: String)] {
        recordings.flatMap { r in presets.compactMap { p in coverage[r]?[p].map { _ in (r, p) } } }
    }

    /// Findings counted per severity for one cell of the matrix.
    public struct Cell: Sendable, Hashable {
        public var errors = 0
        public var warnings = 0
        public var infos = 0
        public var isClean: Bool { errors == 0 && warnings == 0 && infos == 0 }
    }

    public func cell(recording: String, preset: String) -> Cell {
        cells[recording + "\u{1F}" + preset] ?? Cell()
    }

    public func count(_ severity: Severity) -> Int {
        cells.values.reduce(0) { total, cell in
            switch severity {
            case .error: total + cell.errors
            case .warning: total + cell.warnings
            case .info: total + cell.infos
            }
        }
    }

    /// What matters most under a preset, in one line a person reads first:
    /// "2 POST bodies lost, 1 redirect hidden from a document, 87 requests missing cookies
    /// (80 unlikely)". Codes in order of their most important finding.
    public func summary(preset: String, recording: String? = nil) -> String {
        let list = findings.filter { $0.preset == preset && (recording == nil || $0.recording == recording) }
        guard !list.isEmpty else { return "nothing found" }
        var byCode: [FindingCode: [Finding]] = [:]
        for f in list { byCode[f.code, default: []].append(f) }
        let codes = byCode.keys.sorted { a, b in
            let (x, y) = (byCode[a]!.min(by: Finding.moreImportant)!, byCode[b]!.min(by: Finding.moreImportant)!)
            return Finding.moreImportant(x, y) || (!Finding.moreImportant(y, x) && a.rawValue < b.rawValue)
        }
        return codes.map { Self.phrase($0, byCode[$0]!) }.joined(separator: ", ")
    }

    /// "2 POST bodies lost", "87 requests missing cookies (80 unlikely)".
    static func phrase(_ code: FindingCode, _ list: [Finding]) -> String {
        let n = list.count
        let methods = Set(list.map(\.method))
        let method = methods.count == 1 ? methods.first! + " " : ""
        let unlikely = list.filter { ($0.likelihood ?? 1) < FindingDetector.warningLikelihood }.count
        let cookies = list.reduce(0) { $0 + max($1.subjects.count, 1) }
        let qualifier = unlikely > 0 ? " (\(unlikely) unlikely)" : ""
        let s = n == 1 ? "" : "s"
        switch code {
        case .bodyLost: return "\(n) \(method)bod\(n == 1 ? "y" : "ies") lost"
        case .bodyMutated: return "\(n) \(method)bod\(n == 1 ? "y" : "ies") changed"
        case .bodyStreamOnly: return "\(n) bod\(n == 1 ? "y" : "ies") only as a stream"
        case .bodyTooLargeForHeader: return "\(n) bod\(n == 1 ? "y" : "ies") too large for a header"
        case .urlMutated: return "\(n) URL\(s) changed"
        case .headerAdded: return "\(n) header\(s) added"
        case .preflightAdded: return "\(n) preflight\(s) added"
        case .redirectHidden:
            let documents = list.filter { $0.severity == .error }.count
            return documents > 0 ? "\(n) redirect\(s) hidden (\(documents) from a document)" : "\(n) redirect\(s) hidden from scripts"
        case .redirectMethodChanged: return "\(n) redirect\(s) re-issued with another method or no body"
        case .redirectCookieLost: return "\(n) request\(s) missing a redirect's cookies"
        case .cookieMissing: return "\(n) request\(s) missing \(cookies) cookie\(cookies == 1 ? "" : "s")\(qualifier)"
        case .cookieExtra: return "\(n) request\(s) with \(cookies) extra cookie\(cookies == 1 ? "" : "s")\(qualifier)"
        case .cookieStale: return "\(n) request\(s) with \(cookies) stale cookie\(cookies == 1 ? "" : "s")\(qualifier)"
        case .jarDiverged: return "\(cookies) cookie\(cookies == 1 ? "" : "s") left different in the two jars"
        case .cookieCrossSiteAccepted: return "\(n) cookie\(s) accepted for another site"
        case .thirdPartyIntercepted: return "\(n) third-party request\(s) intercepted"
        case .requestStalled: return "\(n) request\(s) never sent"
        case .responseMutated: return "\(n) response\(s) mangled"
        case .corsBlocked: return "\(n) response\(s) the page may not read (CORS)"
        case .bodyReencoded: return "\(n) \(method)bod\(n == 1 ? "y" : "ies") rebuilt in other bytes"
        case .headerLost: return "\(n) request header\(s) lost"
        case .requestFailed: return "\(n) request\(s) failed before any server answered"
        }
    }
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
    public func fields(_ fields: FindingFields) -> FindingFields {
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
        out.coverage = model.coverage.mapValues { byPreset in
            byPreset.mapValues { items in
                items.map { item in
                    var item = item
                    item.url = url(item.url)
                    item.detail = text(item.detail)
                    return item
                }
            }
        }
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
