import CookieJar
import Dispatch
import Findings
import Foundation
import GRDB
import TrafficModel
import WebViewEmulation

/// Replays recordings through presets side by side and stores the run.
///
/// The emulation is pure, so recordings x presets run in parallel; the run is written in
/// one transaction at the end.
public struct ReplayRunner: Sendable {
    public var presets: [Preset]
    public var profile: Profile
    /// The scenario for recordings without one of their own.
    public var scenario: Scenario
    /// Scenarios by recording name (sidecar files).
    public var scenarios: [String: Scenario] = [:]
    public var detector: FindingDetector

    public init(presets: [Preset], profile: Profile, scenario: Scenario = Scenario(), detector: FindingDetector = FindingDetector()) {
        self.presets = presets
        self.profile = profile
        self.scenario = scenario
        self.detector = detector
    }

    /// Replays every recording under every preset; results in recording, then preset order.
    public func replay(_ recordings: [Recording]) -> [ReportStore.RunResult] {
        // Each recording is made ready once (scenario, provenance, per-exchange facts);
        // its presets then run on the same input.
        let inputs = UnsafeResultBuffer<ReplayInput>(count: recordings.count)
        DispatchQueue.concurrentPerform(iterations: recordings.count) { r in
            inputs.set(r, ReplayInput(recording: recordings[r], scenario: scenarios[recordings[r].name] ?? scenario))
        }
        return replay(inputs.values)
    }

    /// Replays inputs already made ready; results in input, then preset order.
    public func replay(_ inputs: [ReplayInput]) -> [ReportStore.RunResult] {
        let jobs = inputs.indices.flatMap { r in presets.indices.map { (r, $0) } }
        let results = UnsafeResultBuffer<ReportStore.RunResult>(count: jobs.count)
        DispatchQueue.concurrentPerform(iterations: jobs.count) { index in
            let (r, p) = jobs[index]
            let input = inputs[r]
            let result = input.replay(presets[p], profile: profile)
            let findings = detector.findings(for: input.recording, result: result)
            results.set(index, ReportStore.RunResult(recording: input.recording.name, preset: presets[p].name, outcomes: result.outcomes, findings: findings, jarEvents: result.jarEvents))
        }
        return results.values
    }

    /// Replays and stores the run in `store`; returns the run's id.
    public func run(_ recordings: [Recording], in store: ReportStore, label: String?, toolVersion: String, gitRevision: String?) throws -> Int64 {
        let started = Date()
        let results = replay(recordings)
        let row = RunRow(
            id: nil, startedAt: ReportStore.timestamp(started), finishedAt: ReportStore.timestamp(Date()), toolVersion: toolVersion,
            profile: profile.name, ios: profile.ios.description, simulator: profile.simulator,
            presets: presets.map(\.name).joined(separator: ","), label: label, gitRevision: gitRevision,
            recordingCount: recordings.count, exchangeCount: recordings.reduce(0) { $0 + $1.exchanges.count })
        return try store.saveRun(row, results: results)
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

    var values: [T] { storage.map { $0! } }
}

extension ReportStore {
    /// One request as it reached `serve`.
    public struct ArrivalRecord: Sendable {
        public var time: Double
        public var method: String
        public var target: String
        public var headers: [HeaderField]
        public var body: Data
        public var recordingName: String?
        public var sequence: Int?
        public var status: Int

        public init(time: Double, method: String, target: String, headers: [HeaderField], body: Data, recordingName: String?, sequence: Int?, status: Int) {
            self.time = time
            self.method = method
            self.target = target
            self.headers = headers
            self.body = body
            self.recordingName = recordingName
            self.sequence = sequence
            self.status = status
        }
    }

    /// Stores what `serve` observed as a run whose only preset is `observed`, with every
    /// arrival (headers and body included), in one transaction.
    public func saveObservedRun(_ results: [RunResult], recordings: [Recording], arrivals: [ArrivalRecord], label: String?, toolVersion: String) throws -> Int64 {
        let now = ReportStore.timestamp(Date())
        let row = RunRow(
            id: nil, startedAt: now, finishedAt: now, toolVersion: toolVersion,
            profile: "observed", ios: "real client", simulator: false,
            presets: "observed", label: label, gitRevision: nil,
            recordingCount: recordings.count, exchangeCount: recordings.reduce(0) { $0 + $1.exchanges.count })
        return try saveRun(row, results: results) { db, runID in
            let body = try db.makeStatement(sql: "INSERT OR IGNORE INTO body (sha256, length, content) VALUES (?, ?, ?)")
            let insert = try db.makeStatement(sql: """
                INSERT INTO arrival (run_id, position, time, method, target, headers, body_sha256, body_length, recording_name, sequence, status)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for (position, a) in arrivals.enumerated() {
                let digest = a.body.sha256Hex
                try body.execute(arguments: [digest, a.body.count, a.body])
                try insert.execute(arguments: [runID, position, a.time, a.method, a.target, Self.encodeHeaders(a.headers), digest, a.body.count, a.recordingName, a.sequence, a.status])
            }
        }
    }
}
