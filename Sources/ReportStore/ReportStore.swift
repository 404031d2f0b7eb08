// ReportStore: storage only. The SQLite database through GRDB: its schema, migrations (SQL
// alone) and views; recordings, runs, outcomes and findings written (whole, or row by row
// with `RecordingWriter`) and read back; shard databases merged. It reads no input file and
// replays nothing.

import CookieJar
import Findings
import Foundation
import GRDB
import HTTPWire
import TrafficModel
import WebViewEmulation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The h5replay database: recordings, content-addressed bodies, runs, outcomes, findings.
///
/// Every import and every run is one transaction: a failure leaves the database as it was.
public struct ReportStore: Sendable {
    public let writer: any DatabaseWriter

    public init(writer: any DatabaseWriter) throws {
        self.writer = writer
        // A newer h5replay may store what this one would misread (v15's encoded bodies
        // read as decoded ones): refuse its database rather than guess.
        if try writer.read({ try Schema.migrator.hasBeenSuperseded($0) }) { throw StoreError.newerDatabase }
        try Schema.migrator.migrate(writer)
    }

    /// How a database file that `open` creates is written while the creating process holds it.
    public enum NewFile: Sendable {
        /// WAL from the start: for a process that commits small transactions as it goes
        /// (`serve` and `record` store arrivals and exchanges in batches).
        case wal
        /// A rollback journal, for a process whose first transaction is large (an import, a
        /// run, a merge). In WAL mode every page of a transaction reaches the disk twice, to
        /// the WAL and then, at the checkpoint as the database closes, to the file: for a
        /// 160 MB capture's import or a 1,000-recording run, a fifth of the time. A journal
        /// holds only the pages that existed before the transaction, few in a new file, and
        /// a killed process still leaves the file as it was (the journal rolls it back at
        /// the next open). The next process to open the file turns it to WAL. Small
        /// transactions cost more this way (a journal made, synced and deleted for each):
        /// `serve` answered a fifth fewer requests a second.
        case rollbackJournal
    }

    /// Opens (creating with mode 0600) the database at `path`, in WAL mode with a busy
    /// timeout so that several processes can write one file; a file this call creates is
    /// written as `newFile` says while this process holds it.
    public static func open(path: String, newFile: NewFile = .wal) throws -> ReportStore {
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        configuration.foreignKeysEnabled = true
        if !FileManager.default.fileExists(atPath: path) {
            // Create the file owner-only before SQLite opens it; its journal, -wal and -shm
            // files take the same mode.
            #if canImport(Glibc)
                let fd = Glibc.open(path, O_CREAT | O_EXCL | O_WRONLY, 0o600)
            #else
                let fd = Darwin.open(path, O_CREAT | O_EXCL | O_WRONLY, 0o600)
            #endif
            if fd >= 0 {
                close(fd)
                let queue = try DatabaseQueue(path: path, configuration: configuration)
                try newSchema().backup(to: queue)
                switch newFile {
                case .rollbackJournal:
                    return try ReportStore(writer: queue)
                case .wal:
                    try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
                }
            }
        }
        // Two processes opening a file still in rollback-journal mode at once (the first
        // opens after the `import` that created it) both turn it to WAL, which takes the
        // file's exclusive lock, or migrate it: SQLite answers one of them SQLITE_BUSY at
        // once, without its busy timeout, as it does any reader whose wait for a writer
        // could deadlock. Two `replay`s started together failed so 5 times in 12. The open
        // is tried again until the busy timeout would have passed.
        let deadline = Date().addingTimeInterval(busyTimeout)
        while true {
            do {
                return try ReportStore(writer: try DatabasePool(path: path, configuration: configuration))
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && Date() < deadline {
                Thread.sleep(forTimeInterval: Double.random(in: 0.005...0.025))
            }
        }
    }

    /// How long a writer waits for another process's transaction, in seconds.
    static let busyTimeout: TimeInterval = 30

    /// The page size of a database h5replay creates.
    static let pageSize = 16384

    /// The schema of a new database, made in memory for `open` to copy into a new file in
    /// one transaction (SQLite's backup). Made in the file itself, each of the migrations
    /// was a transaction of its own, a journal made, synced and deleted, four syncs each:
    /// 50 ms before a fresh database's first import could start. The copy's journal still
    /// leaves the file empty or whole, never half made.
    ///
    /// 16 KiB pages, which the copy gives the file: a run of a large corpus appends hundreds
    /// of thousands of rows of half a kilobyte, and bodies are stored whole; larger pages
    /// split a quarter as often.
    static func newSchema() throws -> DatabaseQueue {
        let schema = try DatabaseQueue()
        try schema.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA page_size = \(pageSize)") }
        try Schema.migrator.migrate(schema)
        return schema
    }

    /// An in-memory database, for tests.
    public static func inMemory() throws -> ReportStore {
        try ReportStore(writer: DatabaseQueue())
    }

    // MARK: - Recordings

    public enum ImportResult: Sendable, Equatable {
        case imported(id: Int64, replaced: Bool)
        /// A recording of that name holds the same source already.
        case unchanged(id: Int64)
    }

    public struct NameTaken: Error, CustomStringConvertible, Sendable {
        public let name: String
        public var description: String {
            "a different recording named \(name) is already in the database; import with --name to keep both, or --replace to replace it"
        }
    }

    /// Stores a recording with its cookie provenance in one transaction. A recording of the
    /// same name and source is left as it is; one with another source is replaced when
    /// `replace` is set.
    @discardableResult
    public func save(_ recording: Recording, provenance: CookieProvenance, replace: Bool = false) throws -> ImportResult {
        try withoutForeignKeys { db in try Self.insert(recording, provenance: provenance, replace: replace, db) }
    }

    /// Stores several recordings (a capture split by client) with their provenance in one
    /// transaction: all of them or none.
    public func save(_ recordings: [(Recording, CookieProvenance)], replace: Bool = false) throws -> [ImportResult] {
        try withoutForeignKeys { db in try recordings.map { try Self.insert($0.0, provenance: $0.1, replace: replace, db) } }
    }

    /// Stores the recordings of several files in one transaction, each file in a savepoint
    /// of its own: a file that fails leaves nothing of itself and the others stand. One
    /// commit for many small files, not one each (a commit waits for the disk twice, in a
    /// rollback journal: 4,000 syncs for a corpus of 1,000 HAR files). A result per file,
    /// in order; with `continuing` false, the results stop at the first file that failed,
    /// and the files after it are not stored.
    public func save(files: [[(Recording, CookieProvenance)]], replace: Bool = false, continuing: Bool) throws -> [Result<[ImportResult], Error>] {
        try withoutForeignKeys { db in
            var results: [Result<[ImportResult], Error>] = []
            for recordings in files {
                var stored: [ImportResult] = []
                do {
                    try db.inSavepoint {
                        stored = try recordings.map { try Self.insert($0.0, provenance: $0.1, replace: replace, db) }
                        return .commit
                    }
                    results.append(.success(stored))
                } catch let error as NameTaken {
                    results.append(.failure(error))
                    if !continuing { break }
                }
            }
            return results
        }
    }

    /// Where a streaming import puts bodies as they come, inside the import's transaction.
    public final class BodySink {
        let rows: ExchangeRows
        var stored: Set<String> = []

        init(_ db: Database) throws {
            // Many bodies to a statement: the import's transaction has foreign keys off.
            rows = try ExchangeRows(db, rowsPerStatement: RunWriter.rowsPerStatement)
        }

        public func store(_ body: StoredBody) throws {
            guard stored.insert(body.fingerprint.sha256).inserted else { return }
            try rows.insertBody(body)
        }

        /// Writes the bodies still pending, before the import's transaction ends.
        func flush() throws { try rows.flush() }
    }

    /// Stores a recording inside the caller's transaction, its bodies, exchanges and
    /// provenance many rows to a statement: in a transaction without foreign keys
    /// (`withoutForeignKeys`, every save) that needs no statement journal; `merge`, which
    /// keeps foreign keys on, pays for one.
    static func insert(_ recording: Recording, provenance: CookieProvenance, replace: Bool, _ db: Database) throws -> ImportResult {
        var replaced = false
        if let existing = try RecordingRow.filter(RecordingRow.Columns.name == recording.name).fetchOne(db) {
            if existing.sourceSHA256 != nil, existing.sourceSHA256 == recording.sourceSHA256 { return .unchanged(id: existing.id!) }
            guard replace else { throw NameTaken(name: recording.name) }
            try deleteRecording(existing.id!, db)
            replaced = true
        }
        var row = RecordingRow(id: nil, name: recording.name, sourceFormat: recording.sourceFormat, sourcePath: recording.sourcePath, sourceSHA256: recording.sourceSHA256, importedAt: Self.timestamp(Date()), exchangeCount: recording.exchanges.count)
        try row.insert(db)
        let recordingID = row.id!
        for d in recording.diagnostics {
            var diagnostic = DiagnosticRow(id: nil, recordingId: recordingID, sequence: d.sequence, severity: d.severity.rawValue, code: d.code, message: d.message)
            try diagnostic.insert(db)
        }
        var rows = try ExchangeRows(db, rowsPerStatement: RunWriter.rowsPerStatement)
        for e in recording.exchanges { try rows.insert(e, recordingID: recordingID) }
        try Self.storeProvenance(provenance, recordingID: recordingID, into: rows)
        try rows.flush()
        try db.execute(sql: "DELETE FROM provenance_pending WHERE recording_id = ?", arguments: [recordingID])
        return .imported(id: recordingID, replaced: replaced)
    }

    /// Recordings stored before cookie provenance was, which still need theirs: the pipeline
    /// computes it when it opens the store (`storeProvenance(_:of:)`).
    public func recordingsAwaitingProvenance() throws -> [String] {
        try writer.read { db in
            try String.fetchAll(db, sql: "SELECT r.name FROM provenance_pending p JOIN recording r ON r.id = p.recording_id ORDER BY r.name")
        }
    }

    /// Stores the cookie provenance of a recording stored without it.
    public func storeProvenance(_ provenance: CookieProvenance, of name: String) throws {
        try writer.write { db in
            guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM recording WHERE name = ?", arguments: [name]) else { return }
            try db.execute(sql: "DELETE FROM cookie_sent WHERE recording_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM cookie_inference WHERE recording_id = ?", arguments: [id])
            try Self.storeProvenance(provenance, recordingID: id, into: ExchangeRows(db))
            try db.execute(sql: "DELETE FROM provenance_pending WHERE recording_id = ?", arguments: [id])
        }
    }

    /// The names of every stored recording, sorted.
    public func recordingNames() throws -> [String] {
        try writer.read { db in try String.fetchAll(db, sql: "SELECT name FROM recording ORDER BY name") }
    }

    /// Loads a recording with its exchanges, bodies and diagnostics; nil when unknown.
    public func recording(named name: String) throws -> Recording? {
        try writer.read { db in
            guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM recording WHERE name = ?", arguments: [name]) else { return nil }
            return try Self.loadRecording(db, id: id)
        }
    }

    /// A body row's content as the body: decoded when it was kept in its wire coding (v15),
    /// where the decoding must give back the stored length exactly.
    static func body(_ content: Data, coding: String?, length: Int, sha256: String) throws -> Data {
        guard let coding else { return content }
        // The import kept these bytes only when they decoded cleanly, so strict decoding
        // reads them; the limit is the length recorded, plus one to see a longer result.
        let decoder = ContentDecoder(maxDecodedBytes: length + 1, maxRatio: Int.max, tolerant: false)
        let decoded: ContentDecoder.Decoded
        do {
            decoded = try decoder.decode([UInt8](content), contentEncoding: coding)
        } catch {
            throw StoreError.undecodableBody(sha256: sha256, reason: "its \(coding) content does not decode (\(error.description))")
        }
        guard decoded.bytes.count == length else {
            throw StoreError.undecodableBody(sha256: sha256, reason: "its \(coding) content decodes to \(decoded.bytes.count) bytes, not the \(length) recorded")
        }
        return Data(decoded.bytes)
    }

    static func loadRecording(_ db: Database, id: Int64) throws -> Recording? {
        guard let row = try RecordingRow.fetchOne(db, key: id) else { return nil }
        let rows = try ExchangeRow.fetchAll(db, recordingID: id)
        let bodyStatement = try db.cachedStatement(sql: "SELECT content, coding FROM body WHERE sha256 = ?")
        // An empty body (most requests') needs no lookup.
        func body(_ hash: String, length: Int) throws -> Data {
            guard length > 0, let row = try Row.fetchOne(bodyStatement, arguments: [hash]) else { return Data() }
            return try Self.body(row[0] ?? Data(), coding: row[1], length: length, sha256: hash)
        }
        var exchanges: [Exchange] = []
        exchanges.reserveCapacity(rows.count)
        for r in rows {
            /// A value this version does not know is an error naming the row, never a guess.
            func known<T>(_ value: T?, _ column: String, _ raw: String) throws -> T {
                guard let value else { throw StoreError.unknownValue(table: "exchange", row: r.id ?? 0, column: column, value: raw) }
                return value
            }
            let redirect = r.redirectChainStart.map { RedirectLink(chainStart: $0, hop: r.redirectHop ?? 0, next: r.redirectNext) }
            exchanges.append(Exchange(
                sequence: r.sequence, startedAt: r.startedAt, duration: r.duration, connectionID: r.connectionId, serverAddress: r.serverAddress,
                request: RecordedRequest(method: r.method, url: r.url, httpVersion: r.httpVersion, headers: try decodeHeaders(r.requestHeaders), body: try body(r.requestBodySha256, length: r.requestBodyLength)),
                response: RecordedResponse(status: r.status, statusText: r.statusText, httpVersion: r.responseHttpVersion, headers: try decodeHeaders(r.responseHeaders), body: try body(r.responseBodySha256, length: r.responseBodyLength), encodedLength: r.responseEncodedLength, bodyMissing: r.responseBodyMissing, redirectURL: r.redirectUrl),
                initiator: try known(Initiator(rawValue: r.initiator), "initiator", r.initiator),
                frame: try known(Frame(label: r.frame), "frame", r.frame),
                bodyKind: try known(BodyKind(rawValue: r.bodyKind), "body_kind", r.bodyKind),
                redirect: redirect, resourceType: r.resourceType,
                evidenceGap: try r.evidenceGap.map { raw in
                    guard let gap = EvidenceGap(rawValue: raw) else { throw StoreError.unknownValue(table: "exchange", row: r.id ?? 0, column: "evidence_gap", value: raw) }
                    return gap
                }, responseStart: r.responseStart))
        }
        try loadMessages(db, recordingID: id, into: &exchanges, body: body)
        let diagnostics = try DiagnosticRow.fetchAll(db, sql: "SELECT * FROM diagnostic WHERE recording_id = ? ORDER BY id", arguments: [id]).map { d in
            guard let severity = Diagnostic.Severity(rawValue: d.severity) else {
                throw StoreError.unknownValue(table: "diagnostic", row: d.id ?? 0, column: "severity", value: d.severity)
            }
            return Diagnostic(severity, code: d.code, sequence: d.sequence, message: d.message)
        }
        return Recording(name: row.name, sourceFormat: row.sourceFormat, sourcePath: row.sourcePath, sourceSHA256: row.sourceSHA256, exchanges: exchanges, diagnostics: diagnostics)
    }

    /// Each WebSocket handshake's messages (v21), in the order they crossed.
    static func loadMessages(_ db: Database, recordingID: Int64, into exchanges: inout [Exchange], body: (String, Int) throws -> Data) throws {
        let rows = try Row.fetchCursor(db, sql: "SELECT sequence, direction, time, opcode, data_sha256, length FROM websocket_message WHERE recording_id = ? ORDER BY sequence, position", arguments: [recordingID])
        var bySequence: [Int: [WebSocketMessage]] = [:]
        while let r = try rows.next() {
            let sequence: Int = r[0], raw: String = r[1]
            guard let direction = WebSocketMessage.Direction(rawValue: raw) else {
                throw StoreError.unknownValue(table: "websocket_message", row: Int64(sequence), column: "direction", value: raw)
            }
            bySequence[sequence, default: []].append(WebSocketMessage(direction: direction, time: r[2], opcode: r[3], data: try body(r[4], r[5])))
        }
        for (sequence, messages) in bySequence {
            // Sequences are the exchanges' positions (RecordingWriter.add).
            guard let i = exchanges.firstIndex(where: { $0.sequence == sequence }) else { continue }
            exchanges[i].webSocketMessages = messages
        }
    }

    // MARK: - Cookie provenance

    static func storeProvenance(_ provenance: CookieProvenance, recordingID: Int64, into rows: ExchangeRows) throws {
        for sequence in provenance.sent.indices {
            try rows.insertProvenance(sequence: sequence, sent: provenance.sent[sequence], inferred: provenance.inferred[sequence], recordingID: recordingID)
        }
    }

    /// A cookie a recorded request carries, as stored at import.
    public struct StoredSentCookie: Sendable, Hashable {
        public var name: String
        public var provenance: String
        public var setBy: Int?
        public var setByHop: Int?
    }

    /// A cookie event inferred at an exchange, as stored at import.
    public struct StoredInference: Sendable, Hashable {
        public var name: String
        public var kind: String
        public var domain: String
        public var path: String
        public var windowStart: Double?
    }

    /// A recording with its stored cookie provenance, per exchange, and its import time.
    public struct RecordingDetail: Sendable {
        public var recording: Recording
        public var importedAt: String
        public var cookies: [[StoredSentCookie]]
        public var inferred: [[StoredInference]]
    }

    public func detail(named name: String) throws -> RecordingDetail? {
        try writer.read { db in
            guard let row = try RecordingRow.filter(RecordingRow.Columns.name == name).fetchOne(db), let id = row.id,
                let recording = try Self.loadRecording(db, id: id)
            else { return nil }
            var cookies = Array(repeating: [StoredSentCookie](), count: recording.exchanges.count)
            for r in try Row.fetchAll(db, sql: "SELECT * FROM cookie_sent WHERE recording_id = ? ORDER BY sequence, position", arguments: [id]) {
                let sequence: Int = r["sequence"]
                guard cookies.indices.contains(sequence) else { continue }
                cookies[sequence].append(StoredSentCookie(name: r["name"], provenance: r["provenance"], setBy: r["set_by"], setByHop: r["set_by_hop"]))
            }
            var inferred = Array(repeating: [StoredInference](), count: recording.exchanges.count)
            for r in try Row.fetchAll(db, sql: "SELECT * FROM cookie_inference WHERE recording_id = ? ORDER BY sequence, position", arguments: [id]) {
                let sequence: Int = r["sequence"]
                guard inferred.indices.contains(sequence) else { continue }
                inferred[sequence].append(StoredInference(name: r["name"], kind: r["kind"], domain: r["domain"], path: r["path"], windowStart: r["window_start"]))
            }
            return RecordingDetail(recording: recording, importedAt: row.importedAt, cookies: cookies, inferred: inferred)
        }
    }

    // MARK: - Runs

    /// What a run stores of one recording under one preset: its outcomes, findings, jar
    /// events and coverage, and the facts of its row in `run_recording` and `idle_cell`.
    /// Pipeline's `RunResult` is one; the store writes what these say and makes none.
    public protocol StoredResult {
        var recording: String { get }
        var preset: String { get }
        var outcomes: [Outcome] { get }
        var findings: [Finding] { get }
        var jarEvents: [JarEvent] { get }
        var coverage: [CoverageItem] { get }
        /// The recording had exchanges to replay (its outcomes may have been stored and let go).
        var replayed: Bool { get }
        /// How many of its exchanges a page sent; nil: not counted.
        var pageExchanges: Int? { get }
        /// Nothing of the preset was exercised (its clean cell reads `n/a`).
        var idle: Bool { get }
    }

    /// Stores a run with all its outcomes and findings in one transaction; returns its id.
    /// `more` runs last in the same transaction, where foreign keys are not enforced
    /// (`writeRun`): it deletes what depends on a row it deletes itself.
    public func saveRun<Result: StoredResult>(_ run: RunRow, results: [Result], inTransaction more: ((Database, Int64) throws -> Void)? = nil) throws -> Int64 {
        try writeRun(run) { writer in
            try writer.add(results)
            try writer.flush()
            try more?(writer.db, writer.runID)
        }
    }

    /// Stores a run in one transaction, its results added as they come (`RunWriter.add`),
    /// so a large corpus never holds every outcome at once; returns the run's id.
    ///
    /// Foreign keys are not enforced while the run is written, and its inserts are `OR
    /// FAIL`. A statement of many rows that checks a foreign key or a NOT NULL column the
    /// default way (ABORT) must be able to undo its own earlier rows, so SQLite gave each
    /// a statement journal: a copy of every page it touched, spilled to a temporary file
    /// past 64 KiB. For 200,000 findings that was 156,000 writes and 1.3 GB to a file
    /// nobody reads. The run's rows need neither: each names the run inserted first in
    /// this transaction and a recording id read in it, and the transaction is the unit
    /// that is undone, whole, on any error.
    public func writeRun(_ run: RunRow, _ produce: (RunWriter) throws -> Void) throws -> Int64 {
        try withoutForeignKeys { db in
            // A run of a large corpus writes hundreds of thousands of rows: a page cache
            // that holds the run's index pages writes each to the WAL once, not per spill.
            try db.execute(sql: "PRAGMA cache_size = -65536")
            defer { try? db.execute(sql: "PRAGMA cache_size = -2000") }
            var run = run
            try run.insert(db)
            let writer = try RunWriter(db, runID: run.id!)
            try produce(writer)
            try writer.flush()
            return writer.runID
        }
    }

    /// Runs `body` in one immediate transaction with foreign keys not enforced, committed
    /// when it returns and rolled back, whole, when it throws. For writers whose rows
    /// name only what they stored first in the same transaction (`writeRun`,
    /// `importStreaming`), so that a statement of many rows needs no statement journal.
    func withoutForeignKeys<T>(_ body: (Database) throws -> T) throws -> T {
        try writer.writeWithoutTransaction { db in
            // Set outside the transaction: inside one, SQLite ignores the pragma.
            let enforced = try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") ?? false
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            defer { if enforced { try? db.execute(sql: "PRAGMA foreign_keys = ON") } }
            var result: T?
            // Such a transaction may write hundreds of megabytes: written back as they come,
            // not all at the commit (`Writeback`).
            let writeback = Writeback.of(writer.path)
            defer { writeback?.stop() }
            try db.inTransaction(.immediate) {
                result = try body(db)
                return .commit
            }
            return result!
        }
    }

    /// Deletes a recording and the rows of every table whose foreign key to it cascades,
    /// as `ON DELETE CASCADE` would: also where foreign keys are off (`withoutForeignKeys`).
    /// The tables are read from the schema, so a table added later is not left behind.
    static func deleteRecording(_ id: Int64, _ db: Database) throws {
        for table in try recordingTables(db) {
            try db.execute(sql: "DELETE FROM \(table.quotedDatabaseIdentifier) WHERE recording_id = ?", arguments: [id])
        }
        try db.execute(sql: "DELETE FROM recording WHERE id = ?", arguments: [id])
    }

    /// Writes a run's results inside its transaction (`writeRun`).
    public final class RunWriter {
        let db: Database
        let runID: Int64
        let outcomeInsert: RawInsert
        let findingInsert: RawInsert
        let eventInsert: RawInsert
        let coverageInsert: RawInsert
        /// The recordings listed in `run_recording` so far.
        var listed: Set<String> = []

        init(_ db: Database, runID: Int64) throws {
            self.db = db
            self.runID = runID
            // Bound through SQLite's C interface, with JSON written by hand: a run of a
            // large corpus stores hundreds of thousands of rows, and GRDB's boxed arguments
            // and Foundation's JSONEncoder cost more than SQLite's own work.
            // Many rows per statement: a run's rows are only read after the run is written.
            outcomeInsert = try RawInsert(db, head: """
                INSERT OR FAIL INTO outcome (run_id, recording_name, preset, sequence, delivered_method, delivered_url,
                  delivered_body_length, delivered_body_sha256, sent_cookie_names, page_url, changes) VALUES
                """, tuple: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rowsPerStatement: Self.rowsPerStatement)
            findingInsert = try RawInsert(db, head: """
                INSERT OR FAIL INTO finding (run_id, preset, code, severity, recording_name, sequence, method, url, subject,
                  rules, confidence, message, expected, actual, detail_form, detail_values, alternative, subjects, likelihood, rank, baseline, inferences) VALUES
                """, tuple: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rowsPerStatement: Self.rowsPerStatement)
            eventInsert = try RawInsert(db, head: """
                INSERT OR FAIL INTO jar_event (run_id, recording_name, preset, time, jar, name, domain, path, change, rule, what) VALUES
                """, tuple: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rowsPerStatement: Self.rowsPerStatement)
            coverageInsert = try RawInsert(db, head: """
                INSERT OR FAIL INTO coverage_item (run_id, recording_name, preset, kind, sequence, verdict, method, url, detail) VALUES
                """, tuple: "(?, ?, ?, ?, ?, ?, ?, ?, ?)", rowsPerStatement: Self.rowsPerStatement)
        }

        /// Rows per insert statement: past 16, what a statement costs once is lost in its
        /// rows' own work.
        static let rowsPerStatement = 16

        /// Writes the rows still pending; `writeRun` calls it before the transaction ends.
        func flush() throws {
            for insert in [eventInsert, outcomeInsert, coverageInsert, findingInsert] { try insert.flush() }
        }

        /// Records when the run finished.
        public func finish(at timestamp: String) throws {
            try db.execute(sql: "UPDATE run SET finished_at = ? WHERE id = ?", arguments: [timestamp, runID])
        }

        /// Stores results (outcomes, findings, jar events) of the run, in the order of the
        /// run's indexes: by recording and preset, a recording's findings by sequence and code.
        public func add<Result: StoredResult>(_ results: [Result]) throws {
            for r in ReportStore.keyOrder(of: results) {
                let result = results[r]
                // Cached: compiling the statement again for each recording was a tenth of
                // storing a run of many small recordings.
                if listed.insert(result.recording).inserted {
                    try db.cachedStatement(sql: "INSERT OR IGNORE INTO run_recording (run_id, recording_name, empty, page_exchanges) VALUES (?, ?, ?, ?)")
                        .execute(arguments: [runID, result.recording, !result.replayed, result.pageExchanges])
                }
                if result.idle {
                    try db.cachedStatement(sql: "INSERT OR IGNORE INTO idle_cell (run_id, recording_name, preset) VALUES (?, ?, ?)").execute(arguments: [runID, result.recording, result.preset])
                }
                for e in result.jarEvents {
                    let i = eventInsert
                    i.bind(1, runID); i.bind(2, result.recording); i.bind(3, result.preset); i.bind(4, e.time)
                    i.bind(5, e.jar.rawValue); i.bind(6, e.name); i.bind(7, e.domain); i.bind(8, e.path)
                    i.bind(9, e.change.rawValue); i.bind(10, e.rule?.rawValue); i.bind(11, e.what)
                    try i.run()
                }
                for o in result.outcomes {
                    let i = outcomeInsert
                    i.bind(1, runID); i.bind(2, result.recording); i.bind(3, result.preset)
                    i.bind(4, o.sequence); i.bind(5, o.deliveredMethod); i.bind(6, o.deliveredURL)
                    i.bind(7, o.deliveredBody.length); i.bind(8, o.deliveredBody.sha256)
                    i.bind(9) { out in ReportStore.appendJoined(o.sentCookies, to: out) { out.append($0.name) } }
                    i.bind(10, o.pageURL)
                    i.bind(11) { ReportStore.appendChangesJSON(o.changes, to: $0) }
                    try i.run()
                }
                for c in result.coverage {
                    let i = coverageInsert
                    i.bind(1, runID); i.bind(2, result.recording); i.bind(3, result.preset); i.bind(4, c.kind.rawValue)
                    i.bind(5, c.sequence); i.bind(6, c.verdict); i.bind(7, c.method); i.bind(8, c.url); i.bind(9, c.detail)
                    try i.run()
                }
                for k in ReportStore.keyOrder(of: result.findings) {
                    let f = result.findings[k]
                    let i = findingInsert
                    i.bind(1, runID); i.bind(2, f.preset); i.bind(3, f.code.rawValue); i.bind(4, f.severity.rawValue)
                    i.bind(5, f.recording); i.bind(6, f.sequence); i.bind(7, f.method)
                    i.bind(8, f.url); i.bind(9, f.subject)
                    // A rule's bytes as the id holds them, without a `String` each.
                    i.bind(10) { out in ReportStore.appendJoined(f.rules, to: out) { rule in rule.withUTF8 { out.append($0) } } }
                    i.bind(11, f.confidence.rawValue)
                    i.bind(12) { ReportStore.appendObjectJSON(f.expected, to: $0) }
                    i.bind(13) { ReportStore.appendObjectJSON(f.actual, to: $0) }
                    let detail = f.detailParts
                    i.bind(14, detail.form.rawValue)
                    i.bind(15) { ReportStore.appendStringArrayJSON(detail.values, to: $0) }
                    i.bind(16, f.alternative)
                    i.bind(17) { ReportStore.appendStringArrayJSON(f.subjects, to: $0) }
                    i.bind(18, f.likelihood); i.bind(19, f.rank.rawValue); i.bind(20, f.baseline ? 1 : 0)
                    let inferences = f.inferences
                    if inferences.isEmpty { i.bind(21, nil as String?) } else { i.bind(21) { ReportStore.appendStringArrayJSON(inferences.map(\.stored), to: $0) } }
                    try i.run()
                }
            }
        }
    }

    /// Rows are written in the order of the run's indexes (`finding_by_run`, `outcome_by_run`
    /// and the others lead with the run, recording and preset, in bytes as SQLite compares
    /// text): each index entry is then appended to the index's last page. Written as a
    /// replay makes them, presets in their configured order, each entry landed amid the
    /// index, a descent from the root and, when full, a page split in the middle: a tenth
    /// of the instructions a run of 200,000 findings took to store.
    ///
    /// Returns positions in `results`: a corpus hands over a result per recording and
    /// preset, and moving the results themselves retained and released every field of each.
    static func keyOrder<Result: StoredResult>(of results: [Result]) -> [Int] {
        let recordings = results.map(\.recording), presets = results.map(\.preset)
        if (1..<max(results.count, 1)).allSatisfy({ k in
            let c = compareBytes(recordings[k - 1], recordings[k])
            return c < 0 || (c == 0 && compareBytes(presets[k - 1], presets[k]) <= 0)
        }) { return Array(results.indices) }
        // A replay hands a recording's results together: order those runs by recording,
        // then the few presets of each recording. Sorting every result by both keys
        // compared whole recording names again and again (2 % more of saveRun).
        var runs: [Range<Int>] = []
        for k in results.indices {
            if let last = runs.last, last.upperBound == k, recordings[last.lowerBound] == recordings[k] {
                runs[runs.count - 1] = last.lowerBound..<k + 1
            } else {
                runs.append(k..<k + 1)
            }
        }
        runs = byteOrder(runs.map { recordings[$0.lowerBound] }).map { runs[$0] }
        var ordered: [Int] = []
        ordered.reserveCapacity(results.count)
        // Every recording mostly comes with the same presets in the same order: their
        // order is worked out once and reused while the names stay the same.
        var lastNames: [String] = [], lastOrder: [Int] = []
        var k = 0
        while k < runs.count {
            // Runs of one recording, now side by side, ordered as one.
            var same = k + 1
            while same < runs.count && recordings[runs[same].lowerBound] == recordings[runs[k].lowerBound] { same += 1 }
            let members = Array(runs[k..<same].joined())
            let names = members.map { presets[$0] }
            if names != lastNames {
                lastOrder = stableOrder(names.count) { compareBytes(names[$0], names[$1]) }
                lastNames = names
            }
            for i in lastOrder { ordered.append(members[i]) }
            k = same
        }
        return ordered
    }

    /// The positions of one result's findings in key order, by sequence and code, stable;
    /// the detector makes them by sequence already, an exchange's codes as it meets them.
    static func keyOrder(of findings: [Finding]) -> [Int] {
        stableOrder(findings.count) { a, b in
            let (x, y) = (findings[a].sequence, findings[b].sequence)
            return x != y ? (x < y ? -1 : 1) : compareBytes(findings[a].code.rawValue, findings[b].code.rawValue)
        }
    }

    /// The positions of `keys` in SQLite's BINARY order (`compareBytes`), stable: how a
    /// replay orders its recordings so that the run's rows come in its indexes' order.
    public static func byteOrder(_ keys: [String]) -> [Int] {
        stableOrder(keys.count) { compareBytes(keys[$0], keys[$1]) }
    }

    /// Positions `0..<count` sorted by `order` (negative, zero, positive), stable; handed
    /// back as they are when already in order, as they mostly come.
    static func stableOrder(_ count: Int, _ order: (Int, Int) -> Int32) -> [Int] {
        if (1..<max(count, 1)).allSatisfy({ order($0 - 1, $0) <= 0 }) { return Array(0..<count) }
        return (0..<count).sorted { a, b in
            let c = order(a, b)
            return c != 0 ? c < 0 : a < b
        }
    }

    /// Negative, zero or positive as `a` sorts before, with or after `b` in SQLite's BINARY
    /// collation: by UTF-8 bytes.
    public static func compareBytes(_ a: String, _ b: String) -> Int32 {
        let order = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y -> Int32 in
                let common = min(x.count, y.count)
                let c = common == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, common)
                return c != 0 ? c : x.count < y.count ? -1 : x.count > y.count ? 1 : 0
            }
        }
        if let order = order ?? nil { return order }
        // Bridged text without contiguous UTF-8.
        return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : b.utf8.lexicographicallyPrecedes(a.utf8) ? 1 : 0
    }

    /// What the offline package and the prefetch config did in a run, by recording and preset.
    public func coverage(run: Int64) throws -> [String: [String: [CoverageItem]]] {
        let rows = try writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM coverage_item WHERE run_id = ? ORDER BY recording_name, preset, kind, sequence, id", arguments: [run])
        }
        var out: [String: [String: [CoverageItem]]] = [:]
        for row in rows {
            let raw: String = row["kind"]
            guard let kind = CoverageItem.Kind(rawValue: raw) else {
                throw StoreError.unknownValue(table: "coverage_item", row: row["id"], column: "kind", value: raw)
            }
            let item = CoverageItem(kind: kind, sequence: row["sequence"], verdict: row["verdict"], method: row["method"], url: row["url"], detail: row["detail"])
            out[row["recording_name"], default: [:]][row["preset"], default: []].append(item)
        }
        return out
    }

    /// The run with `id`, or the latest run when `id` is nil.
    /// The latest `limit` runs, newest first, and how many there are in all.
    public func latestRuns(limit: Int) throws -> (runs: [RunRow], total: Int) {
        try writer.read { db in
            (try RunRow.order(RunRow.Columns.id.desc).limit(limit).fetchAll(db), try RunRow.fetchCount(db))
        }
    }

    public func run(id: Int64?) throws -> RunRow? {
        try writer.read { db in
            if let id { return try RunRow.fetchOne(db, key: id) }
            return try RunRow.order(RunRow.Columns.id.desc).fetchOne(db)
        }
    }

    /// The latest run carrying `label`, before run `before` when given.
    public func run(label: String, before: Int64? = nil) throws -> RunRow? {
        try writer.read { db in
            try RunRow.fetchOne(db, sql: "SELECT * FROM run WHERE label = ? AND id < ? ORDER BY id DESC LIMIT 1", arguments: [label, before ?? Int64.max])
        }
    }

    /// The findings of a run, in recording, preset, sequence and code order.
    public func findings(run: Int64) throws -> [Finding] {
        let rows: [FindingRow] = try writer.read { db in
            try FindingRow.fetchAll(db, run: run)
        }
        return try rows.map(Self.finding)
    }

    static func finding(_ row: FindingRow) throws -> Finding {
        let rules: [RuleID] = row.rules.split(separator: ",").map { RuleID(String($0)) }
        func value<T: RawRepresentable<String>>(_ type: T.Type, _ raw: String, column: String) throws -> T {
            guard let value = T(rawValue: raw) else { throw StoreError.unknownValue(table: "finding", row: row.id ?? 0, column: column, value: raw) }
            return value
        }
        let code = try value(FindingCode.self, row.code, column: "code")
        let severity = try value(Severity.self, row.severity, column: "severity")
        let confidence = try value(Confidence.self, row.confidence, column: "confidence")
        let expected = try decodeObject(row.expected), actual = try decodeObject(row.actual)
        var finding: Finding
        if let form = row.detailForm {
            guard let form = FindingDetail.Form(rawValue: form) else { throw StoreError.unknownValue(table: "finding", row: row.id ?? 0, column: "detail_form", value: form) }
            let raw = row.detailValues ?? "[]"
            guard let values = decodeStrings(raw) else {
                throw StoreError.unknownValue(table: "finding", row: row.id ?? 0, column: "detail_values", value: raw)
            }
            finding = Finding(code: code, severity: severity, preset: row.preset, recording: row.recordingName, sequence: row.sequence, method: row.method, url: row.url,
                subject: row.subject, rules: rules, confidence: confidence, expected: expected, actual: actual, detail: FindingDetail(form, values), alternative: row.alternative)
        } else if let detail = row.detail {
            finding = Finding(code: code, severity: severity, preset: row.preset, recording: row.recordingName, sequence: row.sequence, method: row.method, url: row.url,
                subject: row.subject, rules: rules, confidence: confidence, expected: expected, actual: actual, detail: detail, alternative: row.alternative)
        } else {
            finding = Finding(code: code, severity: severity, preset: row.preset, recording: row.recordingName, sequence: row.sequence, method: row.method, url: row.url,
                subject: row.subject, rules: rules, confidence: confidence, expected: expected, actual: actual, storedMessage: row.message)
        }
        if let subjects = row.subjects {
            guard let list = decodeStrings(subjects) else {
                throw StoreError.unknownValue(table: "finding", row: row.id ?? 0, column: "subjects", value: subjects)
            }
            finding.subjects = list
        } else {
            finding.subjects = row.subject.map { [$0] } ?? []
        }
        finding.likelihood = row.likelihood
        // Rows written before ranks were kept read as subresources.
        finding.rank = try row.rank.map { try value(Rank.self, $0, column: "rank") } ?? .subresource
        finding.baseline = row.baseline
        if let inferences = row.inferences {
            guard let lines = decodeStrings(inferences) else {
                throw StoreError.unknownValue(table: "finding", row: row.id ?? 0, column: "inferences", value: inferences)
            }
            finding.inferences = lines.compactMap(FindingInference.init(stored:))
        }
        return finding
    }

    /// A replay's jar timeline: both jars' changes in time order.
    public func jarEvents(run: Int64, recording: String, preset: String) throws -> [JarEvent] {
        try writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM jar_event WHERE run_id = ? AND recording_name = ? AND preset = ? ORDER BY id", arguments: [run, recording, preset]).map { r in
                let (jarText, changeText): (String, String) = (r["jar"], r["change"])
                guard let jar = JarSide(rawValue: jarText) else { throw StoreError.unknownValue(table: "jar_event", row: r["id"], column: "jar", value: jarText) }
                guard let change = JarEvent.Change(rawValue: changeText) else { throw StoreError.unknownValue(table: "jar_event", row: r["id"], column: "change", value: changeText) }
                return JarEvent(time: r["time"], jar: jar, name: r["name"], domain: r["domain"], path: r["path"],
                    change: change, rule: (r["rule"] as String?).map { RuleID($0) }, what: r["what"])
            }
        }
    }

    /// The page URL each redirecting load ended at in a run, by recording, preset and sequence.
    public func pageURLs(run: Int64) throws -> [String: String] {
        try writer.read { db in
            var out: [String: String] = [:]
            for r in try Row.fetchAll(db, sql: "SELECT recording_name, preset, sequence, page_url FROM outcome WHERE run_id = ? AND page_url IS NOT NULL", arguments: [run]) {
                out["\(r["recording_name"] as String)|\(r["preset"] as String)|\(r["sequence"] as Int)"] = r["page_url"]
            }
            return out
        }
    }

    /// The recordings a run replayed, by name, in order.
    public func recordingNames(run: Int64) throws -> [String] {
        try writer.read { db in
            // Runs stored before v20 list their recordings only through their outcomes.
            try String.fetchAll(db, sql: """
                SELECT recording_name FROM run_recording WHERE run_id = ?
                UNION SELECT DISTINCT recording_name FROM outcome WHERE run_id = ? ORDER BY recording_name
                """, arguments: [run, run])
        }
    }

    /// The run's recordings with exchanges, none of them a page's (NC1 alone).
    public func nativeOnlyRecordings(run: Int64) throws -> Set<String> {
        try writer.read { db in
            Set(try String.fetchAll(db, sql: "SELECT recording_name FROM run_recording WHERE run_id = ? AND empty = 0 AND page_exchanges = 0", arguments: [run]))
        }
    }

    /// The run's cells (recording and preset) whose preset nothing of the recording exercised.
    public func idleCells(run: Int64) throws -> [(recording: String, preset: String)] {
        try writer.read { db in
            try Row.fetchAll(db, sql: "SELECT recording_name, preset FROM idle_cell WHERE run_id = ?", arguments: [run]).map { ($0[0], $0[1]) }
        }
    }

    /// The run's recordings that had no exchange to replay.
    public func emptyRecordings(run: Int64) throws -> Set<String> {
        try writer.read { db in
            Set(try String.fetchAll(db, sql: "SELECT recording_name FROM run_recording WHERE run_id = ? AND empty = 1", arguments: [run]))
        }
    }

    // MARK: - Encoding helpers

    /// `[["name","value"],...]`, written by hand: JSONEncoder is the slowest part of storing
    /// a large capture. `decodeHeaders` reads it back by hand too (`StoredJSONReader`).
    static func encodeHeaders(_ headers: HeaderList) -> String {
        let out = RowText()
        appendHeaderJSON(headers, to: out)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    /// The same JSON appended to `out`: a row's text is written in place.
    static func appendHeaderJSON(_ headers: HeaderList, to out: RowText) {
        out.append(0x5B)
        var first = true
        // The list's bytes written out as they are held.
        headers.forEach { name, value in
            if !first { out.append(0x2C) }
            first = false
            out.append(0x5B)
            appendJSONString(name, to: out)
            out.append(0x2C)
            appendJSONString(value, to: out)
            out.append(0x5D)
        }
        out.append(0x5D)
    }

    static func appendJSONString(_ s: String, to out: RowText) {
        // A native string's bytes are read in place; others are made contiguous first.
        var s = s
        s.withUTF8 { appendJSONString($0, to: out) }
    }

    /// A JSON string of these UTF-8 bytes.
    static func appendJSONString(_ bytes: UnsafeBufferPointer<UInt8>, to out: RowText) {
        out.append(0x22)
        // Most names and values need no escape: copied whole.
        guard bytes.needsJSONEscape else {
            out.append(bytes)
            out.append(0x22)
            return
        }
        for c in bytes {
            switch c {
            case 0x22, 0x5C:
                out.append(0x5C)
                out.append(c)
            case 0x0A:
                out.append(0x5C)
                out.append(0x6E)
            case 0x0D:
                out.append(0x5C)
                out.append(0x72)
            case 0x09:
                out.append(0x5C)
                out.append(0x74)
            case 0..<0x20:
                // \u00XX
                out.append(0x5C)
                out.append(0x75)
                out.append(0x30)
                out.append(0x30)
                out.append(c >> 4 < 10 ? 0x30 + (c >> 4) : 0x57 + (c >> 4))
                out.append(c & 0xF < 10 ? 0x30 + (c & 0xF) : 0x57 + (c & 0xF))
            default: out.append(c)
            }
        }
        out.append(0x22)
    }

    static func decodeHeaders(_ text: String) throws -> HeaderList {
        if let headers = StoredJSONReader.read(text, { $0.headerList() }) { return headers }
        // Any other shape a JSON reader accepts (whitespace, numbers in a pair): read as before.
        return HeaderList(try JSONDecoder().decode([[String]].self, from: Data(text.utf8)).lazy.map { HeaderField($0.first ?? "", $0.count > 1 ? $0[1] : "") })
    }

    /// `{"a":"1","b":"2"}`, keys in byte order (the fields' own order): a finding's
    /// expected and actual.
    static func appendObjectJSON(_ object: FindingFields, to out: RowText) {
        out.append(0x7B)
        var first = true
        object.forEachField { key, value in
            if !first { out.append(0x2C) }
            first = false
            appendJSONString(key, to: out)
            out.append(0x3A)
            appendJSONString(value, to: out)
        }
        out.append(0x7D)
    }

    /// `a,b,c`: the elements comma-separated, each written by `write`, as rule ids and
    /// cookie names are stored.
    static func appendJoined<T>(_ items: [T], to out: RowText, _ write: (T) -> Void) {
        for (k, item) in items.enumerated() {
            if k > 0 { out.append(0x2C) }
            write(item)
        }
    }

    /// `["a","b"]`: a finding's subjects.
    static func appendStringArrayJSON(_ items: [String], to out: RowText) {
        out.append(0x5B)
        for (k, item) in items.enumerated() {
            if k > 0 { out.append(0x2C) }
            appendJSONString(item, to: out)
        }
        out.append(0x5D)
    }

    /// `[{"rule":"P1","what":"..."}]`: an outcome's changes.
    static func appendChangesJSON(_ changes: ChangeList, to out: RowText) {
        out.append(0x5B)
        for (k, change) in changes.enumerated() {
            if k > 0 { out.append(0x2C) }
            out.append(#"{"rule":"# as StaticString)
            appendJSONString(change.rule.rawValue, to: out)
            out.append(#","what":"# as StaticString)
            appendJSONString(change.what, to: out)
            out.append(0x7D)
        }
        out.append(0x5D)
    }

    static func decodeObject(_ text: String) throws -> FindingFields {
        if let pairs = StoredJSONReader.read(text, { $0.stringObject() }) {
            var fields = FindingFields()
            for (key, value) in pairs { fields[key] = value }
            return fields
        }
        return try JSONDecoder().decode(FindingFields.self, from: Data(text.utf8))
    }

    /// `["a","b"]`: a finding's subjects or its sentence's values; nil when not a list of strings.
    static func decodeStrings(_ text: String) -> [String]? {
        StoredJSONReader.read(text, { $0.stringList() }) ?? (try? JSONDecoder().decode([String].self, from: Data(text.utf8)))
    }

    /// `2026-11-24T13:07:00.123Z`: ISO 8601 in UTC, to the millisecond. Written by hand: a
    /// Foundation formatter made per call cost more than storing a small recording.
    public static func timestamp(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var seconds = time_t(milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000)
        let millisecond = Int(milliseconds - Int64(seconds) * 1000)
        var t = tm()
        gmtime_r(&seconds, &t)
        func digits(_ value: Int, _ count: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, count - text.count)) + text
        }
        return digits(Int(t.tm_year) + 1900, 4) + "-" + digits(Int(t.tm_mon) + 1, 2) + "-" + digits(Int(t.tm_mday), 2)
            + "T" + digits(Int(t.tm_hour), 2) + ":" + digits(Int(t.tm_min), 2) + ":" + digits(Int(t.tm_sec), 2)
            + "." + digits(millisecond, 3) + "Z"
    }
}

/// A database that does not hold what this version of h5replay wrote or can read.
public enum StoreError: Error, CustomStringConvertible, Equatable {
    /// A value of a known set (a finding code, a severity...) that this version does not
    /// know: a newer h5replay wrote it, or the row was edited by hand.
    case unknownValue(table: String, row: Int64, column: String, value: String)
    /// A stored body that does not decode to what was stored (the file was changed or damaged).
    case undecodableBody(sha256: String, reason: String)
    /// The database holds changes of a later h5replay than this one.
    case newerDatabase

    public var description: String {
        switch self {
        case let .unknownValue(table, row, column, value):
            return "table \(table), row \(row): \(column) '\(value)' is not one this version of h5replay knows; use the version that wrote the database, or delete the run"
        case let .undecodableBody(sha256, reason):
            return "table body, sha256 \(sha256): \(reason); the database was changed or damaged since the import: import the recording again"
        case .newerDatabase:
            return "the database was written by a newer h5replay, whose changes this version would misread; use that version or a newer one"
        }
    }
}

/// One request's offline-package verdict, or one prefetched call's, under one preset.
public struct CoverageItem: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable { case offline, prefetch }
    public var kind: Kind
    /// The recorded exchange (offline), or the page load (prefetch).
    public var sequence: Int
    /// An `OfflineVerdict` or a `PrefetchVerdict` raw value.
    public var verdict: String
    public var method: String
    public var url: String
    public var detail: String

    public init(kind: Kind, sequence: Int, verdict: String, method: String, url: String, detail: String) {
        self.kind = kind
        self.sequence = sequence
        self.verdict = verdict
        self.method = method
        self.url = url
        self.detail = detail
    }
}
