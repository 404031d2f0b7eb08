import Foundation
import GRDB
import TrafficModel

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
