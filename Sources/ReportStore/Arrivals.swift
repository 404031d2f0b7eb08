import Foundation
import GRDB
import TrafficModel

extension ReportStore {
    /// One request as it reached `serve`.
    public struct ArrivalRecord: Sendable {
        public var time: Double
        public var method: String
        public var target: String
        public var headers: HeaderList
        public var body: Data
        public var recordingName: String?
        public var sequence: Int?
        public var status: Int

        public init(time: Double, method: String, target: String, headers: HeaderList, body: Data, recordingName: String?, sequence: Int?, status: Int) {
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

    // MARK: - A serve session, stored as it goes

    /// A `serve` session whose arrivals are stored as they come (`serve_session`).
    public struct ServeSession: Sendable {
        public var id: Int64
        public var startedAt: String
        public var label: String?
        public var recordings: [String]
    }

    /// Opens a session serving `recordings`; its arrivals follow with `appendArrival`.
    public func beginServeSession(recordings: [String], label: String?) throws -> ServeSession {
        let started = ReportStore.timestamp(Date())
        let names = String(decoding: try JSONSerialization.data(withJSONObject: recordings), as: UTF8.self)
        let id = try writer.write { db -> Int64 in
            try db.execute(sql: "INSERT INTO serve_session (started_at, label, recordings) VALUES (?, ?, ?)", arguments: [started, label, names])
            return db.lastInsertedRowID
        }
        return ServeSession(id: id, startedAt: started, label: label, recordings: recordings)
    }

    /// Stores arrivals of a session, numbered from `firstPosition`, in one transaction: once
    /// this returns, a kill of the process does not lose them. `storedBodies` holds the
    /// digests of bodies this session already stored, so a body that comes back (an empty
    /// GET's, above all) is hashed and written once.
    public func appendArrivals(_ arrivals: [ArrivalRecord], firstPosition: Int, session: Int64, storedBodies: inout Set<String>) throws {
        let empty = Data().sha256Hex
        try writer.write { db in
            let body = try RawInsert(db, sql: "INSERT OR IGNORE INTO body (sha256, length, content) VALUES (?, ?, ?)")
            let insert = try RawInsert(db, sql: """
                INSERT INTO pending_arrival (session_id, position, time, method, target, headers, body_sha256, body_length, recording_name, sequence, status)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for (offset, a) in arrivals.enumerated() {
                let digest = a.body.isEmpty ? empty : a.body.sha256Hex
                if storedBodies.insert(digest).inserted {
                    body.bind(1, digest)
                    body.bind(2, a.body.count)
                    body.bind(3, a.body)
                    try body.run()
                }
                insert.bind(1, session)
                insert.bind(2, firstPosition + offset)
                insert.bind(3, a.time)
                insert.bind(4, a.method)
                insert.bind(5, a.target)
                insert.bind(6) { Self.appendHeaderJSON(a.headers, to: $0) }
                insert.bind(7, digest)
                insert.bind(8, a.body.count)
                insert.bind(9, a.recordingName)
                insert.bind(10, a.sequence)
                insert.bind(11, a.status)
                try insert.run()
            }
        }
    }

    /// Sessions that never ended (the process was killed), oldest first.
    public func unfinishedServeSessions() throws -> [ServeSession] {
        try writer.read { db in
            try Row.fetchAll(db, sql: "SELECT id, started_at, label, recordings FROM serve_session ORDER BY id").map { row in
                let names = (try? JSONSerialization.jsonObject(with: Data((row["recordings"] as String).utf8))) as? [String] ?? []
                return ServeSession(id: row["id"], startedAt: row["started_at"], label: row["label"], recordings: names)
            }
        }
    }

    /// A session's arrivals in order, bodies included.
    public func pendingArrivals(session: Int64) throws -> [ArrivalRecord] {
        try writer.read { db in
            try Row.fetchAll(db, sql: """
                SELECT a.time, a.method, a.target, a.headers, b.content, a.recording_name, a.sequence, a.status, b.coding, b.length, b.sha256
                FROM pending_arrival a JOIN body b ON b.sha256 = a.body_sha256
                WHERE a.session_id = ? ORDER BY a.position
                """, arguments: [session]).map { row in
                // A request body equal to a response stored in its wire coding shares its row.
                ArrivalRecord(time: row[0], method: row[1], target: row[2], headers: try Self.decodeHeaders(row[3]), body: try Self.body(row[4] ?? Data(), coding: row[8], length: row[9], sha256: row[10]),
                              recordingName: row[5], sequence: row[6], status: row[7])
            }
        }
    }

    /// Ends a session: its observed run stored, its arrivals moved under that run, the
    /// session gone, all in one transaction. Without results, the arrivals are dropped with
    /// the session and nil is returned.
    public func finishServeSession<Result: StoredResult>(_ session: Int64, results: [Result], recordings: [Recording], label: String?, toolVersion: String) throws -> Int64? {
        guard !results.isEmpty else {
            try writer.write { db in try db.execute(sql: "DELETE FROM serve_session WHERE id = ?", arguments: [session]) }
            return nil
        }
        let now = ReportStore.timestamp(Date())
        let row = RunRow(
            id: nil, startedAt: now, finishedAt: now, toolVersion: toolVersion,
            profile: "observed", ios: "real client", simulator: false,
            presets: "observed", label: label, gitRevision: nil,
            recordingCount: recordings.count, exchangeCount: recordings.reduce(0) { $0 + $1.exchanges.count })
        return try saveRun(row, results: results) { db, runID in
            try db.execute(sql: """
                INSERT INTO arrival (run_id, position, time, method, target, headers, body_sha256, body_length, recording_name, sequence, status)
                SELECT ?, position, time, method, target, headers, body_sha256, body_length, recording_name, sequence, status
                FROM pending_arrival WHERE session_id = ? ORDER BY position
                """, arguments: [runID, session])
            // Foreign keys are not enforced here (`writeRun`): no cascade deletes the arrivals.
            try db.execute(sql: "DELETE FROM pending_arrival WHERE session_id = ?", arguments: [session])
            try db.execute(sql: "DELETE FROM serve_session WHERE id = ?", arguments: [session])
        }
    }
}

/// Stores `serve`'s arrivals on a thread of its own: whatever has come since the last write
/// goes in the next transaction, one arrival at a time when they come slowly, many when a
/// load test sends thousands a second.
public final class ArrivalWriter: @unchecked Sendable {
    let store: ReportStore
    let session: Int64
    let database: String
    let condition = NSCondition()
    var waiting: [ReportStore.ArrivalRecord] = []
    var asleep = false
    var stopping = false
    var storedBodies: Set<String> = []
    var done = false
    var position = 0
    var failed = false

    public init(store: ReportStore, session: Int64, database: String) {
        self.store = store
        self.session = session
        self.database = database
        Thread.detachNewThread { self.run() }
    }

    public func add(_ arrival: ReportStore.ArrivalRecord) {
        condition.lock()
        waiting.append(arrival)
        // Under load the writer is busy and takes what waits when it is done: no wake-up.
        if asleep { condition.signal() }
        condition.unlock()
    }

    func run() {
        while true {
            condition.lock()
            while waiting.isEmpty, !stopping {
                asleep = true
                condition.wait()
                asleep = false
            }
            let batch = waiting
            waiting.removeAll(keepingCapacity: true)
            let last = stopping && batch.isEmpty
            condition.unlock()
            if last { break }
            do {
                try store.appendArrivals(batch, firstPosition: position, session: session, storedBodies: &storedBodies)
                position += batch.count
                // More than one waited: arrivals come fast (a load test). Let the next batch
                // gather for a moment rather than commit a transaction per arrival.
                if batch.count > 1 { usleep(2_000) }
            } catch {
                if !failed { FileHandle.standardError.write(Data("serve: cannot store arrivals in \(database): \(error)\n".utf8)) }
                failed = true
            }
        }
        condition.lock()
        done = true
        condition.broadcast()
        condition.unlock()
    }

    /// Writes what is left and returns once it is stored.
    public func finish() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !done { condition.wait() }
        condition.unlock()
    }
}
