import CookieJar
import Dispatch
import Findings
import Foundation
import ReportStore
import TrafficModel
import WebViewEmulation

/// Replays recordings through presets side by side and stores the run.
///
/// The emulation is pure, so recordings x presets run in parallel; the run is written in
/// one transaction, a slice of recordings while the next is replayed.
public struct ReplayRunner: Sendable {
    public var presets: [Preset]
    public var profile: Profile
    /// The scenario for recordings without one of their own.
    public var scenario: Scenario
    /// Scenarios by recording name (sidecar files).
    public var scenarios: [String: Scenario] = [:]
    /// Cookie provenance already walked, by recording name (at import, or loaded from the
    /// store with the recording); walked otherwise.
    public var provenances: [String: CookieProvenance] = [:]
    public var detector: FindingDetector
    /// Exchanges replayed (under every preset), stored and let go at a time. Against
    /// sixty-four recordings of fifty exchanges, a thousand-recording corpus under the
    /// eighteen built-in presets peaks at 226 MB instead of 290 MB, in the same time.
    public var sliceExchanges = 800
    /// The preset whose findings are the web view's own (ITP, the recording browser's
    /// differences from WKWebView): `plain` unless `--baseline-preset` names another; nil
    /// (`none`) marks nothing. Only a preset of the run can be the baseline.
    public var baselinePreset: String? = "plain"

    public init(presets: [Preset], profile: Profile, scenario: Scenario = Scenario(), detector: FindingDetector = FindingDetector()) {
        self.presets = presets
        self.profile = profile
        self.scenario = scenario
        self.detector = detector
    }

    /// The scenario given for the whole run; without one, each recording's own beside its
    /// file (`NAME.scenario.json` and the other sidecars, `Sidecars.scenario(for:)`).
    public mutating func setScenarios(_ explicit: Scenario?, for recordings: [Recording]) throws {
        if let explicit {
            scenario = explicit
            return
        }
        for recording in recordings {
            if let sidecar = try Sidecars.scenario(for: recording.sourcePath) { scenarios[recording.name] = sidecar }
        }
    }

    /// Replays every recording under every preset; results in recording, then preset order.
    public func replay(_ recordings: [Recording]) -> [RunResult] {
        // Each recording is made ready once (scenario, provenance, per-exchange facts);
        // its presets then run on the same input.
        replay(inputs(recordings))
    }

    /// Each recording made ready to replay, side by side, with its provenance and scenario.
    public func inputs(_ recordings: [Recording]) -> [ReplayInput] {
        let inputs = UnsafeResultBuffer<ReplayInput>(count: recordings.count)
        DispatchQueue.concurrentPerform(iterations: recordings.count) { r in
            let name = recordings[r].name
            inputs.set(r, ReplayInput(recording: recordings[r], provenance: provenances[name], scenario: scenarios[name] ?? scenario))
        }
        return inputs.values
    }

    /// Replays inputs already made ready; results in input, then preset order. `known`:
    /// each input's labels and ranks when the caller has them (the adviser replays the same
    /// inputs once per change).
    public func replay(_ inputs: [ReplayInput], subjects known: [FindingDetector.Subjects]? = nil) -> [RunResult] {
        let jobs = inputs.indices.flatMap { r in presets.indices.map { (r, $0) } }
        // Labels and ranks of every exchange, once per recording for all its presets.
        let subjects = known ?? Self.subjects(inputs)
        let pages = inputs.map { $0.recording.exchanges.reduce(0) { $0 + ($1.initiator == .native ? 0 : 1) } }
        let results = UnsafeResultBuffer<RunResult>(count: jobs.count)
        DispatchQueue.concurrentPerform(iterations: jobs.count) { index in
            let (r, p) = jobs[index]
            let input = inputs[r]
            let result = input.replay(presets[p], profile: profile)
            let findings = self.findings(of: result, on: input, subjects: subjects[r])
            var runResult = RunResult(recording: input.recording.name, preset: presets[p].name, outcomes: result.outcomes, findings: findings, jarEvents: result.jarEvents)
            runResult.coverage = Self.coverage(of: result, in: input.recording)
            runResult.pageExchanges = pages[r]
            let preset = presets[p]
            runResult.idle = preset.name != baselinePreset && !Self.exercised(preset, in: result)
            results.set(index, runResult)
        }
        var out = results.values
        if let b = presets.firstIndex(where: { $0.name == baselinePreset }) {
            for r in inputs.indices { Self.markBaseline(&out[r * presets.count ..< (r + 1) * presets.count], baseline: b) }
        }
        return out
    }

    /// The findings of one replay of `input`, by the run's detector and the scenario's
    /// important cookies.
    public func findings(of result: EmulationResult, on input: ReplayInput, subjects: FindingDetector.Subjects) -> [Finding] {
        var detector = self.detector
        detector.importantCookies += input.scenario.importantCookies
        return detector.findings(for: input.recording, result: result, subjects: subjects)
    }

    /// Each input's labels and ranks of every exchange.
    public static func subjects(_ inputs: [ReplayInput]) -> [FindingDetector.Subjects] {
        let made = UnsafeResultBuffer<FindingDetector.Subjects>(count: inputs.count)
        DispatchQueue.concurrentPerform(iterations: inputs.count) { r in made.set(r, FindingDetector.Subjects(inputs[r].recording)) }
        return made.values
    }

    /// Whether the recording exercised anything of the preset: an exchange through its
    /// interceptor, a page on its app shell, or a change, difference or jar event citing a
    /// rule of its mitigations. A clean cell of a preset it did not reads `n/a`.
    static func exercised(_ preset: Preset, in result: EmulationResult) -> Bool {
        if result.interceptedExchanges > 0 || preset.app != nil { return true }
        let cited = Set(preset.mitigations.flatMap(\.citedRules))
        guard !cited.isEmpty else { return false }
        if result.jarEvents.contains(where: { $0.rule.map(cited.contains) ?? false }) { return true }
        return result.outcomes.contains { outcome in
            outcome.changes.contains { cited.contains($0.rule) } || outcome.cookieDifferences.contains { $0.rules.contains(where: cited.contains) }
        }
    }

    /// Marks the findings of one recording's results (one per preset, in preset order)
    /// that the baseline preset's result also has: the same code on the same exchange, no
    /// more certain, about the same cookies or fewer. The baseline's own are all marked.
    static func markBaseline(_ results: inout ArraySlice<RunResult>, baseline b: Int) {
        let b = results.startIndex + b
        let baseline = BaselineFindings(results[b].findings)
        for k in results[b].findings.indices { results[b].findings[k].baseline = true }
        guard !baseline.isEmpty else { return }
        for r in results.indices where r != b {
            for k in results[r].findings.indices where baseline.has(results[r].findings[k]) { results[r].findings[k].baseline = true }
        }
    }

    /// The baseline preset's findings on one recording, looked up by exchange.
    struct BaselineFindings {
        private var byExchange: [Int: [(code: FindingCode, severity: Severity, subjects: Set<String>)]] = [:]

        init(_ findings: [Finding]) {
            for f in findings { byExchange[f.sequence, default: []].append((f.code, f.severity, Set(f.subjects))) }
        }

        var isEmpty: Bool { byExchange.isEmpty }

        /// Whether the baseline has `f`: the same code on the same exchange, no more
        /// certain, about the same cookies or fewer.
        func has(_ f: Finding) -> Bool {
            byExchange[f.sequence]?.contains { $0.code == f.code && f.severity <= $0.severity && $0.subjects.isSuperset(of: f.subjects) } ?? false
        }
    }

    /// What the offline package and the prefetch config did under one preset: one item per
    /// request the package was asked about, one per prefetched call.
    static func coverage(of result: EmulationResult, in recording: Recording) -> [CoverageItem] {
        var items: [CoverageItem] = []
        for o in result.outcomes {
            guard let verdict = o.offline else { continue }
            let e = recording.exchanges[o.sequence]
            let detail: String
            switch verdict {
            case .hit: detail = "served from the package, the server's bytes"
            case .stale: detail = "served from the package, whose file is not what the server sent (O2)"
            case .miss: detail = "not in the package"
            case .notInterceptable: detail = "in the package, but nothing intercepts it under this preset"
            }
            items.append(CoverageItem(kind: .offline, sequence: o.sequence, verdict: verdict.rawValue, method: e.request.method, url: e.request.url, detail: detail))
        }
        for p in result.prefetch {
            items.append(CoverageItem(kind: .prefetch, sequence: p.page, verdict: p.verdict.rawValue, method: p.method, url: p.url, detail: p.detail))
        }
        return items
    }

    /// Replays and stores the run in `store`; returns the run's id.
    public func run(_ recordings: [Recording], in store: ReportStore, label: String?, toolVersion: String, gitRevision: String?) throws -> Int64 {
        try run(recordings, in: store, label: label, toolVersion: toolVersion, gitRevision: gitRevision) { _ in }.id!
    }

    /// Replays and stores the run in one transaction, a slice of recordings at a time: each
    /// slice's results are stored, handed to `each` and let go while the next is replayed,
    /// so memory holds two slices, never every outcome or finding of a large corpus (what
    /// `each` keeps is its own). Returns the stored run.
    public func run(_ recordings: [Recording], in store: ReportStore, label: String?, toolVersion: String, gitRevision: String?, each: (RunResult) throws -> Void) throws -> RunRow {
        let started = Date()
        var row = RunRow(
            id: nil, startedAt: ReportStore.timestamp(started), finishedAt: ReportStore.timestamp(started), toolVersion: toolVersion,
            profile: profile.name, ios: profile.ios.description, simulator: profile.simulator,
            presets: presets.map(\.name).joined(separator: ","), label: label, gitRevision: gitRevision,
            recordingCount: recordings.count, exchangeCount: recordings.reduce(0) { $0 + $1.exchanges.count },
            baselinePreset: presets.contains { $0.name == baselinePreset } ? baselinePreset : nil)
        // Slices in recording order, as the run's indexes hold them, so that each slice's
        // rows are appended to the indexes (`RunWriter.add` orders within a slice).
        let recordings = ReportStore.byteOrder(recordings.map(\.name)).map { recordings[$0] }
        let slices = slices(recordings)
        row.id = try store.writeRun(row) { writer in
            // The next slice is replayed while this one is written: writing is one
            // thread's work, and the replay's cores would otherwise wait for it.
            try overlapping(slices, prepare: { replay($0) }) { _, results in
                try writer.add(results)
                for result in results { try each(result) }
            }
            row.finishedAt = ReportStore.timestamp(Date())
            try writer.finish(at: row.finishedAt)
        }
        return row
    }

    /// Recordings in order, cut into slices of about `sliceExchanges` exchanges (a recording
    /// larger than that is a slice of its own): what a slice holds at once is then bounded
    /// by exchanges, not by how many recordings happen to be large.
    func slices(_ recordings: [Recording]) -> [[Recording]] {
        var slices: [[Recording]] = []
        var current: [Recording] = []
        var exchanges = 0
        for recording in recordings {
            if !current.isEmpty, exchanges + recording.exchanges.count > sliceExchanges {
                slices.append(current)
                current = []
                exchanges = 0
            }
            current.append(recording)
            exchanges += recording.exchanges.count
        }
        if !current.isEmpty { slices.append(current) }
        return slices
    }
}

/// A fixed-size buffer that parallel workers fill, each at its own index.
final class UnsafeResultBuffer<T>: @unchecked Sendable {
    private var storage: [T?]
    private let lock = NSLock()

    init(count: Int) { storage = Array(repeating: nil, count: count) }

    func set(_ index: Int, _ value: T) {
        lock.lock()
        storage[index] = value
        lock.unlock()
    }

    /// Every slot filled.
    var values: [T] { storage.map { $0! } }

    /// The slots, nil where no worker set one.
    var slots: [T?] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}

