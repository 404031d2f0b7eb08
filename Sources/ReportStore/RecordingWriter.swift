import CookieJar
import Foundation
import GRDB
import GRDBSQLite
import TrafficModel

/// A prepared insert bound and stepped through SQLite's C interface: a large import writes
/// half a million rows, and building GRDB's `StatementArguments` for each (a boxed value
/// per column) cost more than SQLite's own work.
struct RawInsert {
    let statement: Statement
    let db: Database
    var handle: SQLiteStatement { statement.sqliteStatement }
    /// SQLite copies the bytes before the call returns.
    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(_ db: Database, sql: String) throws {
        self.db = db
        statement = try db.makeStatement(sql: sql)
    }

    func bind(_ i: Int32, _ value: Int) { sqlite3_bind_int64(handle, i, Int64(value)) }
    func bind(_ i: Int32, _ value: Int64) { sqlite3_bind_int64(handle, i, value) }
    func bind(_ i: Int32, _ value: Double) { sqlite3_bind_double(handle, i, value) }
    func bind(_ i: Int32, _ value: Bool) { sqlite3_bind_int64(handle, i, value ? 1 : 0) }
    func bind(_ i: Int32, _ value: Int?) {
        if let value { bind(i, value) } else { sqlite3_bind_null(handle, i) }
    }
    func bind(_ i: Int32, _ value: Int64?) {
        if let value { bind(i, value) } else { sqlite3_bind_null(handle, i) }
    }
    func bind(_ i: Int32, _ value: Double?) {
        if let value { bind(i, value) } else { sqlite3_bind_null(handle, i) }
    }
    func bind(_ i: Int32, _ value: String) {
        var value = value
        value.withUTF8 { bytes in bindText(i, UnsafeRawBufferPointer(bytes)) }
    }
    func bind(_ i: Int32, _ value: String?) {
        if let value { bind(i, value) } else { sqlite3_bind_null(handle, i) }
    }
    /// UTF-8 text already encoded (header JSON).
    func bind(_ i: Int32, text bytes: [UInt8]) {
        bytes.withUnsafeBytes { bindText(i, $0) }
    }
    func bindText(_ i: Int32, _ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            sqlite3_bind_text(handle, i, "", 0, Self.transient)
            return
        }
        sqlite3_bind_text(handle, i, base.assumingMemoryBound(to: CChar.self), Int32(bytes.count), Self.transient)
    }
    func bind(_ i: Int32, _ value: Data) {
        if value.isEmpty {
            sqlite3_bind_zeroblob(handle, i, 0)
            return
        }
        value.withUnsafeBytes { sqlite3_bind_blob(handle, i, $0.baseAddress, Int32($0.count), Self.transient) }
    }

    /// Runs the bound insert and clears it for the next row.
    func run() throws {
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        guard code == SQLITE_DONE else {
            let message = db.sqliteConnection.map { String(cString: sqlite3_errmsg($0)) } ?? "SQLite error \(code)"
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
        }
    }
}

/// The prepared statements that store exchanges and their cookie provenance, shared by a
/// whole-recording insert and a streaming one.
struct ExchangeRows {
    let exchange: RawInsert
    let body: RawInsert
    let sent: RawInsert
    let inferred: RawInsert

    init(_ db: Database) throws {
        // One prepared statement for every row: a capture can hold a hundred thousand.
        exchange = try RawInsert(db, sql: """
            INSERT INTO exchange (recording_id, sequence, started_at, duration, connection_id, server_address,
                method, url, http_version, request_headers, request_body_sha256, request_body_length,
                status, status_text, response_http_version, response_headers, response_body_sha256, response_body_length,
                response_encoded_length, response_body_missing, redirect_url, initiator, frame, body_kind,
                redirect_chain_start, redirect_hop, redirect_next, resource_type)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        body = try RawInsert(db, sql: "INSERT OR IGNORE INTO body (sha256, length, content) VALUES (?, ?, ?)")
        sent = try RawInsert(db, sql: "INSERT INTO cookie_sent (recording_id, sequence, position, name, provenance, set_by, set_by_hop) VALUES (?, ?, ?, ?, ?, ?, ?)")
        inferred = try RawInsert(db, sql: "INSERT INTO cookie_inference (recording_id, sequence, name, kind, domain, path, window_start) VALUES (?, ?, ?, ?, ?, ?, ?)")
    }

    func insertBody(_ data: Data, sha256: String) throws {
        body.bind(1, sha256)
        body.bind(2, data.count)
        body.bind(3, data)
        try body.run()
    }

    /// Stores the exchange's row, and its bodies unless they were stored when detached.
    func insert(_ e: Exchange, recordingID: Int64) throws {
        let requestHash = e.request.bodyFingerprint.sha256
        if !e.request.bodyDetached { try insertBody(e.request.body, sha256: requestHash) }
        let responseHash: String
        if let detached = e.response.detachedBody {
            responseHash = detached.sha256
        } else {
            responseHash = e.response.body.sha256Hex
            try insertBody(e.response.body, sha256: responseHash)
        }
        let x = exchange
        x.bind(1, recordingID)
        x.bind(2, e.sequence)
        x.bind(3, e.startedAt)
        x.bind(4, e.duration)
        x.bind(5, e.connectionID)
        x.bind(6, e.serverAddress)
        x.bind(7, e.request.method)
        x.bind(8, e.request.url)
        x.bind(9, e.request.httpVersion)
        x.bind(10, text: ReportStore.encodeHeaderBytes(e.request.headers))
        x.bind(11, requestHash)
        x.bind(12, e.request.bodyFingerprint.length)
        x.bind(13, e.response.status)
        x.bind(14, e.response.statusText)
        x.bind(15, e.response.httpVersion)
        x.bind(16, text: ReportStore.encodeHeaderBytes(e.response.headers))
        x.bind(17, responseHash)
        x.bind(18, e.response.detachedBody?.length ?? e.response.body.count)
        x.bind(19, e.response.encodedLength)
        x.bind(20, e.response.bodyMissing)
        x.bind(21, e.response.redirectURL)
        x.bind(22, e.initiator.rawValue)
        x.bind(23, e.frame.label)
        x.bind(24, e.bodyKind.rawValue)
        x.bind(25, e.redirect?.chainStart)
        x.bind(26, e.redirect?.hop)
        x.bind(27, e.redirect?.next)
        x.bind(28, e.resourceType)
        try x.run()
    }

    func insertProvenance(sequence: Int, sent cookies: [CookieProvenance.SentCookie], inferred events: [CookieProvenance.Inference], recordingID: Int64) throws {
        for (position, c) in cookies.enumerated() {
            sent.bind(1, recordingID)
            sent.bind(2, sequence)
            sent.bind(3, position)
            sent.bind(4, c.name)
            sent.bind(5, c.kind.rawValue)
            sent.bind(6, c.setBy)
            sent.bind(7, c.hop)
            try sent.run()
        }
        for e in events {
            inferred.bind(1, recordingID)
            inferred.bind(2, sequence)
            inferred.bind(3, e.cookie.name)
            inferred.bind(4, e.kind.rawValue)
            inferred.bind(5, e.cookie.domain)
            inferred.bind(6, e.cookie.path)
            inferred.bind(7, e.windowStart)
            try inferred.run()
        }
    }
}

extension ReportStore {
    /// Stores one recording as its exchanges arrive in time order, inside the caller's
    /// transaction (`importStreaming`): each exchange is classified, its cookie provenance
    /// walked, and its row written at once, so memory never holds the recording.
    ///
    /// The recording's row exists from the start under a placeholder name; `finish` gives
    /// it its name, and applies the same rules as a whole-recording save: the same source
    /// already stored under the name leaves it unchanged, another source needs `replace`.
    public final class RecordingWriter {
        let db: Database
        let rows: ExchangeRows
        let recordingID: Int64
        let redact: SecretNames?
        var classifier = ExchangeClassifier.Stream()
        var walker: CookieProvenance.Walker
        let setNext: Statement
        let setFrames: Statement
        let diagnosticInsert: Statement
        /// Exchanges stored so far.
        public private(set) var exchangeCount = 0
        /// Per-exchange diagnostics stored so far (the recording-level ones go before them).
        public private(set) var diagnosticCount = 0
        /// The first diagnostics, kept for the caller to print.
        public private(set) var firstDiagnostics: [Diagnostic] = []
        static let keptDiagnostics = 200

        /// `redact` replaces secrets at rest (`SecretNames.redactAtRest`) in every exchange
        /// after it is classified, as a whole-recording import does.
        init(_ db: Database, sourceFormat: String, sourcePath: String?, redact: SecretNames?) throws {
            self.db = db
            self.redact = redact
            rows = try ExchangeRows(db)
            var row = RecordingRow(id: nil, name: "(importing \(UUID().uuidString))", sourceFormat: sourceFormat, sourcePath: sourcePath, sourceSHA256: nil, importedAt: ReportStore.timestamp(Date()), exchangeCount: 0)
            try row.insert(db)
            let recordingID = row.id!
            self.recordingID = recordingID
            setNext = try db.makeStatement(sql: "UPDATE exchange SET redirect_next = ? WHERE recording_id = ? AND sequence = ?")
            // The top-level site settled after some exchanges were stored: their third-party
            // mark is recomputed from their URL's site.
            db.add(function: ReportStore.siteFunction)
            setFrames = try db.makeStatement(sql: """
                UPDATE exchange SET frame = (CASE WHEN frame LIKE 'iframe%' THEN 'iframe' ELSE 'main' END)
                  || (CASE WHEN ?1 IS NOT NULL AND h5replay_site(url) IS NOT NULL AND h5replay_site(url) != ?1 THEN '-3p' ELSE '' END)
                WHERE recording_id = ?2 AND sequence < ?3
                """)
            diagnosticInsert = try db.makeStatement(sql: "INSERT INTO diagnostic (recording_id, sequence, severity, code, message) VALUES (?, ?, ?, ?, ?)")
            let older = try db.makeStatement(sql: "SELECT sequence, started_at, url, request_headers FROM exchange WHERE recording_id = ? AND sequence < ? ORDER BY sequence DESC")
            walker = CookieProvenance.Walker(recentCapacity: 4096) { before, visit in
                // A script-set window reaching past the walker's memory: read back the rows.
                let cursor = try Row.fetchCursor(older, arguments: [recordingID, before])
                while let row = try cursor.next() {
                    guard let target = RequestTarget(row[2] as String) else { continue }
                    let request = CookieProvenance.PastRequest(sequence: row[0], startedAt: row[1], target: target, headers: try ReportStore.decodeHeaders(row[3]))
                    if !visit(request) { return }
                }
            }
        }

        /// Stores the next exchange in time order with its diagnostics; its sequence is the
        /// number stored before it.
        public func add(_ exchange: Exchange, diagnostics: [Diagnostic] = []) throws {
            var e = exchange
            e.sequence = exchangeCount
            exchangeCount += 1
            for revision in classifier.add(&e) {
                switch revision {
                case .redirectNext(let sequence, let next):
                    try setNext.execute(arguments: [next, recordingID, sequence])
                case .topSite(let site, let before):
                    try setFrames.execute(arguments: [site, recordingID, before])
                }
            }
            if let redact { redact.redactAtRest(&e) }
            try rows.insert(e, recordingID: recordingID)
            let step = try walker.add(e)
            try rows.insertProvenance(sequence: e.sequence, sent: step.sent, inferred: step.inferred, recordingID: recordingID)
            for var d in diagnostics {
                d.sequence = e.sequence
                try diagnosticInsert.execute(arguments: [recordingID, d.sequence, d.severity.rawValue, d.code, d.message])
                diagnosticCount += 1
                if firstDiagnostics.count < Self.keptDiagnostics { firstDiagnostics.append(d) }
            }
        }

        /// Names the recording and adds its recording-level diagnostics ahead of the
        /// per-exchange ones, as a whole-recording save orders them.
        public func finish(name: String, sourceSHA256: String?, diagnostics: [Diagnostic], replace: Bool) throws -> ImportResult {
            var replaced = false
            if let existing = try RecordingRow.filter(Column("name") == name).fetchOne(db) {
                if existing.sourceSHA256 != nil, existing.sourceSHA256 == sourceSHA256 {
                    try db.execute(sql: "DELETE FROM recording WHERE id = ?", arguments: [recordingID])
                    return .unchanged(id: existing.id!)
                }
                guard replace else { throw NameTaken(name: name) }
                try existing.delete(db)
                replaced = true
            }
            try db.execute(sql: "UPDATE recording SET name = ?, source_sha256 = ?, exchange_count = ? WHERE id = ?", arguments: [name, sourceSHA256, exchangeCount, recordingID])
            if !diagnostics.isEmpty {
                let streamed = try Int64.fetchOne(db, sql: "SELECT max(id) FROM diagnostic WHERE recording_id = ?", arguments: [recordingID])
                for d in diagnostics {
                    try diagnosticInsert.execute(arguments: [recordingID, d.sequence, d.severity.rawValue, d.code, d.message])
                }
                if let streamed {
                    // Move the per-exchange diagnostics after the recording-level ones.
                    try db.execute(sql: """
                        INSERT INTO diagnostic (recording_id, sequence, severity, code, message)
                          SELECT recording_id, sequence, severity, code, message FROM diagnostic WHERE recording_id = ? AND id <= ? ORDER BY id
                        """, arguments: [recordingID, streamed])
                    try db.execute(sql: "DELETE FROM diagnostic WHERE recording_id = ? AND id <= ?", arguments: [recordingID, streamed])
                }
            }
            return .imported(id: recordingID, replaced: replaced)
        }
    }

    /// `h5replay_site(url)`: the site of a URL's host, as `Site.of` gives it; NULL when the
    /// URL does not parse.
    static let siteFunction = DatabaseFunction("h5replay_site", argumentCount: 1, pure: true) { values in
        guard let url = String.fromDatabaseValue(values[0]), let target = RequestTarget(url) else { return nil }
        return Site.of(host: target.host)
    }

    /// A streaming import in one transaction: `produce` stores bodies through the sink and
    /// recordings through writers it opens with `open`, and returns what it imported. Any
    /// error rolls everything back, bodies included.
    public func importStreaming<T>(_ produce: (BodySink, _ open: (_ sourceFormat: String, _ sourcePath: String?, _ redact: SecretNames?) throws -> RecordingWriter) throws -> T) throws -> T {
        try writer.write { db in
            // A larger page cache for the import: fewer pages written to the WAL twice.
            try db.execute(sql: "PRAGMA cache_size = -8192")
            defer { try? db.execute(sql: "PRAGMA cache_size = -2000") }
            let sink = try BodySink(db)
            return try produce(sink) { format, path, redact in try RecordingWriter(db, sourceFormat: format, sourcePath: path, redact: redact) }
        }
    }
}
