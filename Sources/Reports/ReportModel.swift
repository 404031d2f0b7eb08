import TrafficModel
import Findings
import ReportStore

/// What every report format renders: a run, its recordings and presets, its findings.
///
/// A model loaded from the store holds every finding. The model of a run just replayed
/// (`Builder`) may hold only the findings the terminal report shows: the matrix, the
/// counts and the one-line summaries come from tallies made as the results went by, so a
/// corpus of a thousand recordings does not keep its hundreds of thousands of findings
/// to print three per code.
public struct ReportModel: Sendable {
    public var run: RunRow
    public var recordings: [String]
    public var presets: [String]
    /// Every finding, in report order; or, when `holdsEveryFinding` is false, the most
    /// important `Builder.shownPerCode` of each preset and code. Rewriting them (as the
    /// redactor does) leaves the counts as they were.
    public var findings: [Finding]
    /// False for a model that kept only the findings a report shows.
    public private(set) var holdsEveryFinding = true
    /// Counts per recording and preset, made in one pass: a matrix of a thousand recordings
    /// under ten presets asks ten thousand times.
    private var cells: [String: Cell]
    /// Per preset and code, what the counts and summaries say of all its findings.
    private var tallies: [String: [FindingCode: Tally]]
    /// Per preset, the findings it shares with the baseline preset.
    private var shared: [String: Int]
    /// What an offline package and a prefetch config did, by recording and preset; empty
    /// when the run had neither.
    public var coverage: [String: [String: [CoverageItem]]] = [:]
    /// Recordings of the run with no exchange to replay: they stay in every format, marked
    /// `empty`, rather than drop out of the run.
    public var emptyRecordings: Set<String> = []
    /// Recordings whose every exchange the app's native code sent (NC1): no preset's
    /// treatment of the web view's traffic was compared, so their cells read `n/a`.
    public var nativeOnlyRecordings: Set<String> = []
    /// Cells ("recording\u{1F}preset") whose preset nothing of the recording exercised (no
    /// exchange through its interceptor or app shell, no mitigation): clean, they read `n/a`.
    public var idleCells: Set<String> = []
    /// The changes advised per preset, each proven by replay, best first; empty unless the
    /// report was asked for them (`report --advise`).
    public var advice: [AdviceLine] = []

    /// What a cell says instead of its counts, when it has nothing to count: `empty` for a
    /// recording with no exchange, `n/a` for one the web view sent nothing of.
    public func notCompared(recording: String) -> String? {
        emptyRecordings.contains(recording) ? "empty" : nativeOnlyRecordings.contains(recording) ? "n/a" : nil
    }

    /// What one cell says instead of its counts: the recording's word, or `n/a` for a clean
    /// cell whose preset the recording never exercised.
    public func notCompared(recording: String, preset: String) -> String? {
        if let whole = notCompared(recording: recording) { return whole }
        return idleCells.contains(Self.cellKey(recording: recording, preset: preset)) && cell(recording: recording, preset: preset).isClean ? "n/a" : nil
    }

    /// The same run with only the recordings named: their matrix rows, findings and
    /// counts (a model that holds every finding).
    public func only(recordings names: Set<String>) -> ReportModel {
        var model = ReportModel(run: run, recordings: recordings.filter(names.contains), presets: presets, findings: findings.filter { names.contains($0.recording) })
        model.coverage = coverage.filter { names.contains($0.key) }
        model.emptyRecordings = emptyRecordings.intersection(names)
        model.nativeOnlyRecordings = nativeOnlyRecordings.intersection(names)
        model.idleCells = idleCells.filter { key in names.contains(String(key.prefix { $0 != "\u{1F}" })) }
        return model
    }

    /// Whether `recording` had nothing to replay.
    public func isEmpty(recording: String) -> Bool { emptyRecordings.contains(recording) }

    public init(run: RunRow, recordings: [String], presets: [String], findings: [Finding]) {
        self.run = run
        self.recordings = recordings
        self.presets = presets
        self.findings = findings
        var tally = Tallies(baselinePreset: run.baselinePreset)
        for f in findings { tally.add(f) }
        cells = tally.cells
        tallies = tally.byPreset
        shared = tally.shared
    }

    /// What the counts of a run's findings are made of, a finding at a time.
    struct Tallies {
        /// The run's baseline preset: its findings are counted as its own, another
        /// preset's findings that it shares only as `shared`.
        var baselinePreset: String?
        var cells: [String: Cell] = [:]
        var byPreset: [String: [FindingCode: Tally]] = [:]
        /// Per preset, the findings it shares with the baseline preset.
        var shared: [String: Int] = [:]

        mutating func add(_ f: Finding) {
            let key = ReportModel.cellKey(recording: f.recording, preset: f.preset)
            if ReportModel.isShared(f, baseline: baselinePreset) {
                cells[key, default: Cell()].shared += 1
                shared[f.preset, default: 0] += 1
                return
            }
            switch f.severity {
            case .error: cells[key, default: Cell()].errors += 1
            case .warning: cells[key, default: Cell()].warnings += 1
            case .info: cells[key, default: Cell()].infos += 1
            }
            if byPreset[f.preset]?[f.code] == nil {
                byPreset[f.preset, default: [:]][f.code] = Tally(f)
            } else {
                byPreset[f.preset]![f.code]!.add(f)
            }
        }
    }

    /// All the findings of one preset and code, in the few figures the reports give:
    /// how many, of which methods, how many unlikely, how many cookies, and the most
    /// important (which orders the codes).
    public struct Tally: Sendable {
        public private(set) var count = 0
        public private(set) var errors = 0
        /// Findings less likely than `FindingDetector.warningLikelihood`.
        public private(set) var unlikely = 0
        /// Cookies concerned: each finding's subjects, or one.
        public private(set) var cookies = 0
        /// The method when every finding has the same one.
        public private(set) var method: String?
        public private(set) var mostImportant: Finding

        init(_ f: Finding) {
            mostImportant = f
            method = f.method
            add(f, first: true)
        }

        mutating func add(_ f: Finding, first: Bool = false) {
            count += 1
            if f.severity == .error { errors += 1 }
            if (f.likelihood ?? 1) < FindingDetector.warningLikelihood { unlikely += 1 }
            cookies += max(f.subjects.count, 1)
            if method != f.method { method = nil }
            // The first of equals stays, as the first of a list in report order would.
            if !first, Finding.moreImportant(f, mostImportant) { mostImportant = f }
        }
    }

    /// Per code, the tallies of one preset's findings (those it shares with the baseline
    /// preset apart).
    public func tallies(preset: String) -> [FindingCode: Tally] { tallies[preset] ?? [:] }

    /// How many of a preset's findings the baseline preset has too.
    public func sharedCount(preset: String) -> Int { shared[preset] ?? 0 }

    /// A finding another preset shares with the baseline preset: the web view's own,
    /// reported once under the baseline and not counted against this preset.
    public static func isShared(_ f: Finding, baseline: String?) -> Bool {
        f.baseline && baseline != nil && f.preset != baseline
    }

    /// The same, for this run's baseline.
    public func isShared(_ f: Finding) -> Bool { Self.isShared(f, baseline: run.baselinePreset) }

    /// Codes in order of their most important finding, then by name.
    public static func ordered(_ tallies: [FindingCode: Tally]) -> [FindingCode] {
        tallies.keys.sorted { a, b in
            let (x, y) = (tallies[a]!.mostImportant, tallies[b]!.mostImportant)
            return Finding.moreImportant(x, y) || (!Finding.moreImportant(y, x) && a.rawValue < b.rawValue)
        }
    }

    /// How many findings the run had, held or not.
    public var findingCount: Int { cells.values.reduce(0) { $0 + $1.errors + $1.warnings + $1.infos } }

    /// The model of a run just replayed, made from its results as they come (each slice is
    /// let go once added): the counts of every finding, and the findings themselves, all of
    /// them or the most important few of each preset and code.
    public struct Builder {
        /// Findings kept per preset and code; nil keeps every finding.
        public let shownPerCode: Int?
        var tally: Tallies
        var replayed: Set<String> = []
        /// Recordings whose results had nothing to replay.
        var empty: Set<String> = []
        /// Recordings whose exchanges were all the app's native code's.
        var nativeOnly: Set<String> = []
        var idle: Set<String> = []
        var coverage: [String: [String: [CoverageItem]]] = [:]
        /// Every result's findings, when all are kept.
        var results: [KeptFindings] = []
        /// Per preset and code, the most important findings, each with the order it came in
        /// (ties of importance are shown in the order the report lists them).
        var shown: [String: [FindingCode: [(finding: Finding, arrival: Int)]]] = [:]
        var arrivals = 0

        public init(shownPerCode: Int?, baselinePreset: String? = "plain") {
            self.shownPerCode = shownPerCode
            tally = Tallies(baselinePreset: baselinePreset)
        }

        public mutating func add(_ result: some ReportStore.StoredResult) {
            if result.replayed { replayed.insert(result.recording) } else { empty.insert(result.recording) }
            if result.replayed, result.pageExchanges == 0 { nativeOnly.insert(result.recording) }
            if result.idle { idle.insert(ReportModel.cellKey(recording: result.recording, preset: result.preset)) }
            if !result.coverage.isEmpty { coverage[result.recording, default: [:]][result.preset] = result.coverage }
            for f in result.findings { tally.add(f) }
            guard let limit = shownPerCode else {
                results.append(KeptFindings(recording: result.recording, preset: result.preset, findings: result.findings))
                return
            }
            guard limit > 0 else { return }
            for f in result.findings where !ReportModel.isShared(f, baseline: tally.baselinePreset) {
                arrivals += 1
                var list = shown[f.preset]?[f.code] ?? []
                // Results come in recording order, a recording's findings in exchange order:
                // a later finding goes after every one at least as important.
                var at = list.count
                while at > 0, Finding.moreImportant(f, list[at - 1].finding) { at -= 1 }
                guard at < limit else { continue }
                list.insert((f, arrivals), at: at)
                if list.count > limit { list.removeLast() }
                shown[f.preset, default: [:]][f.code] = list
            }
        }

        public func model(run: RunRow) -> ReportModel {
            let names = replayed.union(empty).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            var model: ReportModel
            if shownPerCode == nil {
                model = ReportModel(run: run, recordings: names, presets: run.presetList, findings: ReportModel.reportOrder(results))
            } else {
                let kept = shown.values.flatMap { $0.values.flatMap { $0 } }.sorted { $0.arrival < $1.arrival }.map(\.finding)
                model = ReportModel(run: run, recordings: names, presets: run.presetList, findings: [])
                model.findings = ReportModel.reportOrder([KeptFindings(recording: "", preset: "", findings: kept)])
                model.cells = tally.cells
                model.tallies = tally.byPreset
                model.shared = tally.shared
                model.holdsEveryFinding = false
            }
            model.coverage = coverage
            model.emptyRecordings = empty.subtracting(replayed)
            model.nativeOnlyRecordings = nativeOnly
            model.idleCells = idle
            return model
        }
    }

    /// One result's findings, kept for the report after its outcomes are let go.
    struct KeptFindings {
        var recording: String
        var preset: String
        var findings: [Finding]
    }

    /// Loads the run `id` (the latest when nil) from `store`.
    public static func load(from store: ReportStore, run id: Int64?) throws -> ReportModel? {
        guard let run = try store.run(id: id), let runID = run.id else { return nil }
        var model = ReportModel(run: run, recordings: try store.recordingNames(run: runID), presets: run.presetList, findings: try store.findings(run: runID))
        model.coverage = try store.coverage(run: runID)
        model.emptyRecordings = try store.emptyRecordings(run: runID)
        model.nativeOnlyRecordings = try store.nativeOnlyRecordings(run: runID)
        model.idleCells = Set(try store.idleCells(run: runID).map { cellKey(recording: $0.recording, preset: $0.preset) })
        return model
    }

    /// The results' findings by recording, preset, exchange and code, then as they came:
    /// the order `load` reads. A large run holds hundreds of thousands of findings, so what
    /// is sorted is a small key per finding, never the findings themselves.
    static func reportOrder(_ results: [KeptFindings]) -> [Finding] {
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
        /// Findings the baseline preset has too, counted apart.
        public var shared = 0
        public var isClean: Bool { errors == 0 && warnings == 0 && infos == 0 }
    }

    /// The findings held, by recording and preset (keyed as `cellKey` makes), each list in
    /// report order: made once by a renderer that walks the matrix, where filtering every
    /// cell's findings out of the whole list cost recordings x presets x findings.
    /// A finding a preset shares with the baseline preset is left out: the baseline's cell
    /// holds it.
    public func findingsByCell() -> [String: [Finding]] {
        var out: [String: [Finding]] = [:]
        for f in findings where !isShared(f) { out[Self.cellKey(recording: f.recording, preset: f.preset), default: []].append(f) }
        return out
    }

    public static func cellKey(recording: String, preset: String) -> String { recording + "\u{1F}" + preset }

    public func cell(recording: String, preset: String) -> Cell {
        cells[Self.cellKey(recording: recording, preset: preset)] ?? Cell()
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
        guard let recording else { return Self.summary(tallies(preset: preset)) }
        return Self.summary(of: findings.filter { $0.preset == preset && $0.recording == recording && !isShared($0) })
    }

    /// The same line for a list of one preset's findings (a cell of the matrix).
    public static func summary(of findings: [Finding]) -> String {
        var one = Tallies(baselinePreset: nil)
        for f in findings { one.add(f) }
        return summary(one.byPreset.values.first ?? [:])
    }

    static func summary(_ tallies: [FindingCode: Tally]) -> String {
        guard !tallies.isEmpty else { return "nothing found" }
        return ordered(tallies).map { phrase($0, tallies[$0]!) }.joined(separator: ", ")
    }

    /// "2 POST bodies lost", "87 requests missing cookies (80 unlikely)".
    static func phrase(_ code: FindingCode, _ tally: Tally) -> String {
        let n = tally.count
        let method = tally.method.map { $0 + " " } ?? ""
        let (unlikely, cookies) = (tally.unlikely, tally.cookies)
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
            let documents = tally.errors
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
        out.coverage = coverage(model.coverage)
        return out
    }

    /// What the offline package and prefetch config did, with secret query values and
    /// texts hidden.
    public func coverage(_ coverage: [String: [String: [CoverageItem]]]) -> [String: [String: [CoverageItem]]] {
        guard !showSecrets else { return coverage }
        return coverage.mapValues { byPreset in
            byPreset.mapValues { items in
                items.map { item in
                    var item = item
                    item.url = url(item.url)
                    item.detail = text(item.detail)
                    return item
                }
            }
        }
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
