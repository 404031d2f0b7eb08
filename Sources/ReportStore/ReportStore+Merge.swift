import CookieJar
import Foundation
import GRDB
import TrafficModel

extension ReportStore {
    /// A problem with the databases given to merge.
    public struct MergeError: Error, CustomStringConvertible, Sendable {
        public let file: String
        public let problem: String
        public var description: String { "\(file): \(problem)" }
    }

    public struct MergeSummary: Sendable {
        public var runID: Int64
        public var recordings: Int
        public var findings: Int
        /// Recording and preset pairs met in more than one shard; the first was kept.
        public var duplicates: [String]
    }

    /// Combines the latest run of each shard database into one run of this database, with
    /// the recordings it replayed, so that the report and the gate see one run. The shards
    /// must share profile and presets. One transaction: a failure leaves this database as
    /// it was.
    public func merge(shards paths: [String]) throws -> MergeSummary {
        struct Shard {
            var path: String
            var run: RunRow
            var recordings: [Recording]
            /// Each recording's stored cookie provenance rows, copied as they are, and the
            /// recordings whose provenance waits to be walked again.
            var cookieSent: [String: [Row]]
            var cookieInferred: [String: [Row]]
            var provenancePending: Set<String>
            var outcomes: [Row]
            var findings: [Row]
            var jarEvents: [Row]
            var coverage: [Row]
        }
        var shards: [Shard] = []
        for path in paths {
            guard FileManager.default.fileExists(atPath: path) else { throw MergeError(file: path, problem: "no such database") }
            let store: ReportStore
            do { store = try ReportStore.open(path: path) } catch { throw MergeError(file: path, problem: "not an h5replay database: \(error)") }
            guard let run = try store.run(id: nil), let runID = run.id else { throw MergeError(file: path, problem: "holds no run") }
            let shard = try store.writer.read { db -> Shard in
                let names = try String.fetchAll(db, sql: "SELECT DISTINCT recording_name FROM outcome WHERE run_id = ? ORDER BY recording_name", arguments: [runID])
                var recordings: [Recording] = []
                var sent: [String: [Row]] = [:], inferred: [String: [Row]] = [:], pending: Set<String> = []
                for name in names {
                    guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM recording WHERE name = ?", arguments: [name]), let r = try Self.loadRecording(db, id: id) else {
                        throw MergeError(file: path, problem: "run \(runID) replayed \(name), which is no longer in the database")
                    }
                    recordings.append(r)
                    sent[name] = try Row.fetchAll(db, sql: "SELECT * FROM cookie_sent WHERE recording_id = ?", arguments: [id])
                    inferred[name] = try Row.fetchAll(db, sql: "SELECT * FROM cookie_inference WHERE recording_id = ?", arguments: [id])
                    if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM provenance_pending WHERE recording_id = ?)", arguments: [id]) ?? false { pending.insert(name) }
                }
                return Shard(
                    path: path, run: run, recordings: recordings, cookieSent: sent, cookieInferred: inferred, provenancePending: pending,
                    outcomes: try Row.fetchAll(db, sql: "SELECT * FROM outcome WHERE run_id = ? ORDER BY id", arguments: [runID]),
                    findings: try Row.fetchAll(db, sql: "SELECT * FROM finding WHERE run_id = ? ORDER BY id", arguments: [runID]),
                    jarEvents: try Row.fetchAll(db, sql: "SELECT * FROM jar_event WHERE run_id = ? ORDER BY id", arguments: [runID]),
                    coverage: try Row.fetchAll(db, sql: "SELECT * FROM coverage_item WHERE run_id = ? ORDER BY id", arguments: [runID]))
            }
            if let first = shards.first {
                guard shard.run.profile == first.run.profile, shard.run.presets == first.run.presets else {
                    throw MergeError(file: path, problem: "its run (\(shard.run.profile); \(shard.run.presets)) differs from \(first.path)'s (\(first.run.profile); \(first.run.presets)); merge shards of one replay")
                }
            }
            shards.append(shard)
        }
        guard let first = shards.first else { throw MergeError(file: "(none)", problem: "no shard databases given") }

        return try writer.write { db in
            var recordingIDs: [String: Int64] = [:]
            var exchangeCount = 0
            for shard in shards {
                for r in shard.recordings where recordingIDs[r.name] == nil {
                    do {
                        let empty = CookieProvenance(sent: [], inferred: [])
                        switch try Self.insert(r, provenance: empty, replace: false, db) {
                        case .imported(let id, _):
                            recordingIDs[r.name] = id
                            try Self.copyRows(shard.cookieSent[r.name] ?? [], into: "cookie_sent", recordingID: id, db)
                            try Self.copyRows(shard.cookieInferred[r.name] ?? [], into: "cookie_inference", recordingID: id, db)
                            if shard.provenancePending.contains(r.name) {
                                try db.execute(sql: "INSERT INTO provenance_pending (recording_id) VALUES (?)", arguments: [id])
                            }
                        case .unchanged(let id):
                            recordingIDs[r.name] = id
                        }
                    } catch is NameTaken {
                        throw MergeError(file: shard.path, problem: "its recording \(r.name) differs from the one of that name already merged")
                    }
                    exchangeCount += r.exchanges.count
                }
            }
            var run = RunRow(
                id: nil, startedAt: shards.map(\.run.startedAt).min()!, finishedAt: shards.map(\.run.finishedAt).max()!,
                toolVersion: first.run.toolVersion, profile: first.run.profile, ios: first.run.ios, simulator: first.run.simulator,
                presets: first.run.presets, label: shards.compactMap(\.run.label).first, gitRevision: shards.compactMap(\.run.gitRevision).first,
                recordingCount: recordingIDs.count, exchangeCount: exchangeCount, baselinePreset: first.run.baselinePreset)
            try run.insert(db)
            let runID = run.id!
            var seen = Set<String>()
            var duplicates: [String] = []
            var findingCount = 0
            for shard in shards {
                // Recording and preset pairs this shard contributes (not met in an earlier shard).
                var mine = Set<String>()
                for o in shard.outcomes {
                    let key = "\(o["recording_name"] as String)|\(o["preset"] as String)"
                    if !seen.contains(key) { mine.insert(key) }
                }
                for key in Set(shard.outcomes.map { "\($0["recording_name"] as String)|\($0["preset"] as String)" }) where !mine.contains(key) {
                    duplicates.append(key.replacingOccurrences(of: "|", with: " / "))
                }
                seen.formUnion(mine)
                func keep(_ row: Row) -> Bool { mine.contains("\(row["recording_name"] as String)|\(row["preset"] as String)") }
                for o in shard.outcomes where keep(o) {
                    try db.execute(sql: """
                        INSERT INTO outcome (run_id, recording_name, preset, sequence, delivered_method, delivered_url,
                          delivered_body_length, delivered_body_sha256, sent_cookie_names, page_url, changes)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """, arguments: [runID, o["recording_name"], o["preset"], o["sequence"], o["delivered_method"], o["delivered_url"],
                            o["delivered_body_length"], o["delivered_body_sha256"], o["sent_cookie_names"], o["page_url"], o["changes"]])
                }
                for f in shard.findings where keep(f) {
                    findingCount += 1
                    try db.execute(sql: """
                        INSERT INTO finding (run_id, preset, code, severity, recording_name, sequence, method, url, subject,
                          rules, confidence, message, expected, actual, detail, alternative, subjects, likelihood, rank, detail_form, detail_values, baseline, inferences)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """, arguments: [runID, f["preset"], f["code"], f["severity"], f["recording_name"], f["sequence"], f["method"], f["url"], f["subject"],
                            f["rules"], f["confidence"], f["message"], f["expected"], f["actual"], f["detail"], f["alternative"], f["subjects"], f["likelihood"], f["rank"],
                            f["detail_form"], f["detail_values"], f["baseline"], f["inferences"]])
                }
                for e in shard.jarEvents where keep(e) {
                    try db.execute(sql: """
                        INSERT INTO jar_event (run_id, recording_name, preset, time, jar, name, domain, path, change, rule, what)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """, arguments: [runID, e["recording_name"], e["preset"], e["time"], e["jar"], e["name"], e["domain"], e["path"], e["change"], e["rule"], e["what"]])
                }
                for c in shard.coverage where keep(c) {
                    try db.execute(sql: "INSERT INTO coverage_item (run_id, recording_name, preset, kind, sequence, verdict, method, url, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        arguments: [runID, c["recording_name"], c["preset"], c["kind"], c["sequence"], c["verdict"], c["method"], c["url"], c["detail"]])
                }
            }
            return MergeSummary(runID: runID, recordings: recordingIDs.count, findings: findingCount, duplicates: duplicates.sorted())
        }
    }

    /// Inserts rows read from another database of this schema into `table`, every column
    /// as it was but the recording's id, `recordingID` here.
    static func copyRows(_ rows: [Row], into table: String, recordingID: Int64, _ db: Database) throws {
        guard let columns = rows.first?.columnNames.filter({ $0 != "recording_id" }) else { return }
        let names = (["recording_id"] + columns).map(\.quotedDatabaseIdentifier).joined(separator: ", ")
        let statement = try db.makeStatement(sql: "INSERT INTO \(table.quotedDatabaseIdentifier) (\(names)) VALUES (?\(String(repeating: ", ?", count: columns.count)))")
        for row in rows {
            try statement.execute(arguments: StatementArguments([recordingID.databaseValue] + columns.map { row[$0] as DatabaseValue }))
        }
    }
}
