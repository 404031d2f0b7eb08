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
        var shards: [MergeShard] = []
        for path in paths {
            let shard = try MergeShard.read(path)
            if let first = shards.first {
                guard shard.run.profile == first.run.profile, shard.run.presets == first.run.presets else {
                    throw MergeError(file: path, problem: "its run (\(shard.run.profile); \(shard.run.presets)) differs from \(first.path)'s (\(first.run.profile); \(first.run.presets)); merge shards of one replay")
                }
            }
            shards.append(shard)
        }
        guard let first = shards.first else { throw MergeError(file: "(none)", problem: "no shard databases given") }

        return try writer.write { db in
            let (recordingIDs, exchangeCount) = try Self.mergeRecordings(shards, db)
            var run = RunRow(
                id: nil, startedAt: shards.map(\.run.startedAt).min()!, finishedAt: shards.map(\.run.finishedAt).max()!,
                toolVersion: first.run.toolVersion, profile: first.run.profile, ios: first.run.ios, simulator: first.run.simulator,
                presets: first.run.presets, label: shards.compactMap(\.run.label).first, gitRevision: shards.compactMap(\.run.gitRevision).first,
                recordingCount: recordingIDs.count, exchangeCount: exchangeCount, baselinePreset: first.run.baselinePreset)
            try run.insert(db)
            let runID = run.id!
            var seen = Set<String>(), duplicates: [String] = [], findingCount = 0
            for shard in shards {
                // Recording and preset pairs this shard contributes (not met in an earlier shard).
                let mine = shard.pairs.subtracting(seen)
                duplicates += shard.pairs.intersection(seen).map { $0.replacingOccurrences(of: "|", with: " / ") }
                seen.formUnion(mine)
                func keep(_ row: Row) -> Bool { mine.contains(MergeShard.pair(row)) }
                try Self.copyRows(shard.outcomes.filter(keep), into: "outcome", setting: "run_id", to: runID, db)
                let findings = shard.findings.filter(keep)
                try Self.copyRows(findings, into: "finding", setting: "run_id", to: runID, db)
                try Self.copyRows(shard.jarEvents.filter(keep), into: "jar_event", setting: "run_id", to: runID, db)
                try Self.copyRows(shard.coverage.filter(keep), into: "coverage_item", setting: "run_id", to: runID, db)
                findingCount += findings.count
            }
            return MergeSummary(runID: runID, recordings: recordingIDs.count, findings: findingCount, duplicates: duplicates.sorted())
        }
    }

    /// The shards' recordings stored here, each once, with their cookie provenance rows as
    /// they were; their ids by name, and how many exchanges they hold.
    static func mergeRecordings(_ shards: [MergeShard], _ db: Database) throws -> (ids: [String: Int64], exchanges: Int) {
        var recordingIDs: [String: Int64] = [:]
        var exchangeCount = 0
        for shard in shards {
            for r in shard.recordings where recordingIDs[r.name] == nil {
                do {
                    switch try Self.insert(r, provenance: CookieProvenance(sent: [], inferred: []), replace: false, db) {
                    case .imported(let id, _):
                        recordingIDs[r.name] = id
                        try Self.copyRows(shard.cookieSent[r.name] ?? [], into: "cookie_sent", setting: "recording_id", to: id, db)
                        try Self.copyRows(shard.cookieInferred[r.name] ?? [], into: "cookie_inference", setting: "recording_id", to: id, db)
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
        return (recordingIDs, exchangeCount)
    }

    /// Inserts rows read from another database of this schema into `table`, every column
    /// as it was but its own `id` (the row gets a new one here) and `key`, set to `value`:
    /// the recording's or the run's id in this database.
    static func copyRows(_ rows: [Row], into table: String, setting key: String, to value: Int64, _ db: Database) throws {
        guard let columns = rows.first?.columnNames.filter({ $0 != key && $0 != "id" }) else { return }
        let names = ([key] + columns).map(\.quotedDatabaseIdentifier).joined(separator: ", ")
        let statement = try db.makeStatement(sql: "INSERT INTO \(table.quotedDatabaseIdentifier) (\(names)) VALUES (?\(String(repeating: ", ?", count: columns.count)))")
        for row in rows {
            try statement.execute(arguments: StatementArguments([value.databaseValue] + columns.map { row[$0] as DatabaseValue }))
        }
    }
}

/// One shard database's latest run, as merge copies it: its recordings, their stored
/// cookie provenance rows, and the run's rows.
struct MergeShard {
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

    /// The recording and preset pairs its run replayed, as `pair` writes them.
    var pairs: Set<String> { Set(outcomes.map(Self.pair)) }

    static func pair(_ row: Row) -> String { "\(row["recording_name"] as String)|\(row["preset"] as String)" }

    /// Reads the shard at `path`; an error names it and says what is wrong with it.
    static func read(_ path: String) throws -> MergeShard {
        typealias MergeError = ReportStore.MergeError
        guard FileManager.default.fileExists(atPath: path) else { throw MergeError(file: path, problem: "no such database") }
        let store: ReportStore
        do { store = try ReportStore.open(path: path) } catch { throw MergeError(file: path, problem: "not an h5replay database: \(error)") }
        guard let run = try store.run(id: nil), let runID = run.id else { throw MergeError(file: path, problem: "holds no run") }
        return try store.writer.read { db -> MergeShard in
            let names = try String.fetchAll(db, sql: "SELECT DISTINCT recording_name FROM outcome WHERE run_id = ? ORDER BY recording_name", arguments: [runID])
            var shard = MergeShard(
                path: path, run: run, recordings: [], cookieSent: [:], cookieInferred: [:], provenancePending: [],
                outcomes: try Row.fetchAll(db, sql: "SELECT * FROM outcome WHERE run_id = ? ORDER BY id", arguments: [runID]),
                findings: try Row.fetchAll(db, sql: "SELECT * FROM finding WHERE run_id = ? ORDER BY id", arguments: [runID]),
                jarEvents: try Row.fetchAll(db, sql: "SELECT * FROM jar_event WHERE run_id = ? ORDER BY id", arguments: [runID]),
                coverage: try Row.fetchAll(db, sql: "SELECT * FROM coverage_item WHERE run_id = ? ORDER BY id", arguments: [runID]))
            for name in names {
                guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM recording WHERE name = ?", arguments: [name]), let r = try ReportStore.loadRecording(db, id: id) else {
                    throw MergeError(file: path, problem: "run \(runID) replayed \(name), which is no longer in the database")
                }
                shard.recordings.append(r)
                shard.cookieSent[name] = try Row.fetchAll(db, sql: "SELECT * FROM cookie_sent WHERE recording_id = ?", arguments: [id])
                shard.cookieInferred[name] = try Row.fetchAll(db, sql: "SELECT * FROM cookie_inference WHERE recording_id = ?", arguments: [id])
                if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM provenance_pending WHERE recording_id = ?)", arguments: [id]) ?? false { shard.provenancePending.insert(name) }
            }
            return shard
        }
    }
}
