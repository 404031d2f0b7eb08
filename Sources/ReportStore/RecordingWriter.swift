import CookieJar
import Foundation
import GRDB
import GRDBSQLite
import TrafficModel

/// The prepared statements that store exchanges and their cookie provenance, shared by a
/// whole-recording insert and a streaming one.
struct ExchangeRows {
    let exchange: RawInsert
    let body: RawInsert
    let sent: RawInsert
    let inferred: RawInsert
    let message: RawInsert
    /// Response bodies met before: each is hashed and stored once.
    var repeated = RepeatedBodies()

    /// `rowsPerStatement` above one writes bodies, exchanges and their provenance that many
    /// rows to a statement (`RawInsert`), `OR FAIL`: only inside a transaction with foreign
    /// keys off (`ReportStore.withoutForeignKeys`), and rows reach their tables at `flush()`.
    init(_ db: Database, rowsPerStatement: Int = 1) throws {
        // Prepared once and reused for every statement: a capture can hold a hundred
        // thousand rows.
        let verb = rowsPerStatement > 1 ? "INSERT OR FAIL" : "INSERT"
        exchange = try RawInsert(
            db,
            head: """
                \(verb) INTO exchange (recording_id, sequence, started_at, duration, connection_id, server_address,
                    method, url, http_version, request_headers, request_body_sha256, request_body_length,
                    status, status_text, response_http_version, response_headers, response_body_sha256, response_body_length,
                    response_encoded_length, response_body_missing, redirect_url, initiator, frame, body_kind,
                    redirect_chain_start, redirect_hop, redirect_next, resource_type, evidence_gap, response_start) VALUES
                """,
            tuple: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rowsPerStatement: rowsPerStatement)
        body = try RawInsert(db, head: "INSERT OR IGNORE INTO body (sha256, length, content, coding) VALUES", tuple: "(?, ?, ?, ?)", rowsPerStatement: rowsPerStatement)
        sent = try RawInsert(
            db, head: "\(verb) INTO cookie_sent (recording_id, sequence, position, name, provenance, set_by, set_by_hop, value) VALUES",
            tuple: "(?, ?, ?, ?, ?, ?, ?, ?)", rowsPerStatement: rowsPerStatement)
        inferred = try RawInsert(
            db,
            head: """
                \(verb) INTO cookie_inference (recording_id, sequence, position, name, kind, domain, path, window_start,
                    value, host_only, expiry, secure, http_only, same_site, creation, last_access, creation_order, written_by) VALUES
                """,
            tuple: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rowsPerStatement: rowsPerStatement)
        message = try RawInsert(
            db, head: "\(verb) INTO websocket_message (recording_id, sequence, position, direction, time, opcode, data_sha256, length) VALUES",
            tuple: "(?, ?, ?, ?, ?, ?, ?, ?)", rowsPerStatement: rowsPerStatement)
    }

    /// Writes the body, exchange and provenance rows still pending: before anything reads
    /// or updates them, and before the transaction ends.
    func flush() throws {
        try body.flush()
        try exchange.flush()
        try sent.flush()
        try inferred.flush()
        try message.flush()
    }

    func insertBody(_ data: Data, sha256: String) throws {
        try insertBody(StoredBody(data, fingerprint: BodyFingerprint(length: data.count, sha256: sha256)))
    }

    /// A body row: its length is the decoded body's, whatever form `bytes` keep it in.
    func insertBody(_ stored: StoredBody) throws {
        body.bind(1, stored.fingerprint.sha256)
        body.bind(2, stored.fingerprint.length)
        body.bind(3, stored.bytes)
        body.bind(4, stored.coding)
        try body.run()
    }

    /// The exchange insert's parameter of `redirect_next`.
    static let redirectNextParameter: Int32 = 27

    /// Stores the exchange's row, and its bodies unless they were stored when detached.
    mutating func insert(_ e: Exchange, recordingID: Int64) throws {
        let requestHash = e.request.bodyFingerprint.sha256
        if !e.request.bodyDetached { try insertBody(e.request.body, sha256: requestHash) }
        let responseHash: String
        if let detached = e.response.detachedBody {
            responseHash = detached.sha256
        } else {
            let (fingerprint, metBefore) = repeated.fingerprint(of: e.response.body)
            responseHash = fingerprint.sha256
            // A body met before was stored then.
            if !metBefore { try insertBody(e.response.body, sha256: responseHash) }
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
        x.bind(10) { ReportStore.appendHeaderJSON(e.request.headers, to: $0) }
        x.bind(11, requestHash)
        x.bind(12, e.request.bodyFingerprint.length)
        x.bind(13, e.response.status)
        x.bind(14, e.response.statusText)
        x.bind(15, e.response.httpVersion)
        x.bind(16) { ReportStore.appendHeaderJSON(e.response.headers, to: $0) }
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
        x.bind(Self.redirectNextParameter, e.redirect?.next)
        x.bind(29, e.evidenceGap?.rawValue)
        x.bind(30, e.responseStart)
        x.bind(28, e.resourceType)
        try x.run()
        try insertMessages(e.webSocketMessages, sequence: e.sequence, recordingID: recordingID)
    }

    /// A WebSocket handshake's messages, in the order they crossed, each payload a body.
    mutating func insertMessages(_ messages: [WebSocketMessage], sequence: Int, recordingID: Int64) throws {
        for (position, m) in messages.enumerated() {
            let (fingerprint, metBefore) = repeated.fingerprint(of: m.data)
            if !metBefore { try insertBody(m.data, sha256: fingerprint.sha256) }
            message.bind(1, recordingID)
            message.bind(2, sequence)
            message.bind(3, position)
            message.bind(4, m.direction.rawValue)
            message.bind(5, m.time)
            message.bind(6, m.opcode)
            message.bind(7, fingerprint.sha256)
            message.bind(8, m.data.count)
            try message.run()
        }
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
            sent.bind(8, Self.readsBackWhole(c.name) && Self.readsBackWhole(c.value) ? c.value : nil)
            try sent.run()
        }
        for (position, e) in events.enumerated() { try insertInference(e, sequence: sequence, position: position, recordingID: recordingID) }
    }

    /// An inferred event's row with its whole cookie (v24), so that loading gives the walk's
    /// event back; its value NULL when a column would not read back as it was.
    func insertInference(_ e: CookieProvenance.Inference, sequence: Int, position: Int, recordingID: Int64) throws {
        let c = e.cookie
        let whole = Self.readsBackWhole(c.name) && Self.readsBackWhole(c.value) && Self.readsBackWhole(c.domain) && Self.readsBackWhole(c.path)
            && !(c.expiry?.isNaN ?? false) && !(e.windowStart?.isNaN ?? false) && !(e.writtenBy?.isNaN ?? false) && !c.creation.isNaN && !c.lastAccess.isNaN
        let x = inferred
        x.bind(1, recordingID)
        x.bind(2, sequence)
        x.bind(3, position)
        x.bind(4, c.name)
        x.bind(5, e.kind.rawValue)
        x.bind(6, c.domain)
        x.bind(7, c.path)
        x.bind(8, e.windowStart)
        x.bind(9, whole ? c.value : nil)
        x.bind(10, c.hostOnly)
        x.bind(11, c.expiry)
        x.bind(12, c.secure)
        x.bind(13, c.httpOnly)
        x.bind(14, c.sameSite.rawValue)
        x.bind(15, c.creation)
        x.bind(16, c.lastAccess)
        x.bind(17, Int64(bitPattern: c.creationOrder))
        x.bind(18, e.writtenBy)
        try x.run()
    }

    /// Whether SQLite gives the text back as it was: it reads a text up to its first NUL. A
    /// row holding one (or a NaN, which SQLite stores as NULL) keeps its value NULL, and
    /// loading walks the recording again instead (`ReportStore.loadProvenance`).
    static func readsBackWhole(_ text: String) -> Bool {
        !text.utf8.contains(0)
    }
}

extension ReportStore {
    /// Stores one recording as its exchanges arrive in time order, inside the caller's
    /// transaction (`importStreaming`): each exchange's row, its cookie provenance and its
    /// diagnostics are written at once, so memory never holds the recording. What the
    /// pipeline learns later (a 3xx's next hop, a frame's third-party mark) updates rows
    /// already written; reading back older rows serves the provenance walker.
    ///
    /// The recording's row exists from the start under a placeholder name; `finish` gives
    /// it its name, and applies the same rules as a whole-recording save: the same source
    /// already stored under the name leaves it unchanged, another source needs `replace`.
    public final class RecordingWriter {
        let db: Database
        var rows: ExchangeRows
        let recordingID: Int64
        let setNext: Statement
        let setFrame: Statement
        let framesIn: Statement
        let older: Statement
        let diagnosticInsert: Statement
        /// Exchanges stored so far.
        public private(set) var exchangeCount = 0
        /// Per-exchange diagnostics stored so far (the recording-level ones go before them).
        public private(set) var diagnosticCount = 0
        /// The first diagnostics, kept for the caller to print.
        public private(set) var firstDiagnostics: [Diagnostic] = []
        static let keptDiagnostics = 200

        init(_ db: Database, sourceFormat: String, sourcePath: String?) throws {
            self.db = db
            // Many rows to a statement: the import's transaction has foreign keys off.
            rows = try ExchangeRows(db, rowsPerStatement: RunWriter.rowsPerStatement)
            var row = RecordingRow(id: nil, name: "(importing \(UUID().uuidString))", sourceFormat: sourceFormat, sourcePath: sourcePath, sourceSHA256: nil, importedAt: ReportStore.timestamp(Date()), exchangeCount: 0)
            try row.insert(db)
            let recordingID = row.id!
            self.recordingID = recordingID
            setNext = try db.makeStatement(sql: "UPDATE exchange SET redirect_next = ? WHERE recording_id = ? AND sequence = ?")
            setFrame = try db.makeStatement(sql: "UPDATE exchange SET frame = ? WHERE recording_id = ? AND sequence = ?")
            framesIn = try db.makeStatement(sql: "SELECT sequence, url, frame FROM exchange WHERE recording_id = ? AND sequence >= ? AND sequence < ? ORDER BY sequence")
            diagnosticInsert = try db.makeStatement(sql: "INSERT INTO diagnostic (recording_id, sequence, severity, code, message) VALUES (?, ?, ?, ?, ?)")
            older = try db.makeStatement(sql: "SELECT sequence, started_at, url, request_headers, evidence_gap FROM exchange WHERE recording_id = ? AND sequence < ? ORDER BY sequence DESC")
        }

        /// Stores the next exchange in time order (its sequence is the number stored before
        /// it) with its cookie provenance and diagnostics.
        public func add(_ e: Exchange, sent: [CookieProvenance.SentCookie], inferred: [CookieProvenance.Inference], diagnostics: [Diagnostic] = []) throws {
            precondition(e.sequence == exchangeCount, "exchanges are stored in sequence order")
            exchangeCount += 1
            try rows.insert(e, recordingID: recordingID)
            try rows.insertProvenance(sequence: e.sequence, sent: sent, inferred: inferred, recordingID: recordingID)
            for var d in diagnostics {
                d.sequence = e.sequence
                try diagnosticInsert.execute(arguments: [recordingID, d.sequence, d.severity.rawValue, d.code, d.message])
                diagnosticCount += 1
                if firstDiagnostics.count < Self.keptDiagnostics { firstDiagnostics.append(d) }
            }
        }

        /// The 3xx stored at `sequence` was followed by the request at `next`.
        public func setRedirectNext(_ next: Int, of sequence: Int) throws {
            // A hop still waiting to be written gets its next hop in place: most redirects
            // are followed within a few exchanges, and writing the rows first would cut
            // short a statement of many rows for each.
            let pending = rows.exchange.pendingCount, firstPending = exchangeCount - pending
            if sequence >= firstPending && sequence < exchangeCount {
                rows.exchange.setPending(row: sequence - firstPending, ExchangeRows.redirectNextParameter, next)
                return
            }
            // Written already: the rows still waiting come after it, and the update needs
            // none of them.
            try setNext.execute(arguments: [next, recordingID, sequence])
        }

        /// Visits the stored exchanges whose sequence is in `sequences`, in order: sequence,
        /// URL and frame.
        public func visitFrames(_ sequences: Range<Int>, _ visit: (_ sequence: Int, _ url: String, _ frame: Frame) throws -> Void) throws {
            try rows.flush()
            let cursor = try Row.fetchCursor(framesIn, arguments: [recordingID, sequences.lowerBound, sequences.upperBound])
            while let row = try cursor.next() {
                let label: String = row[2]
                guard let frame = Frame(label: label) else {
                    throw StoreError.unknownValue(table: "exchange", row: row[0], column: "frame", value: label)
                }
                try visit(row[0], row[1], frame)
            }
        }

        /// Changes the frame of the exchange stored at `sequence`.
        public func setFrame(_ frame: Frame, of sequence: Int) throws {
            try rows.flush()
            try setFrame.execute(arguments: [frame.label, recordingID, sequence])
        }

        /// Visits the stored requests before `sequence`, newest first, until `visit` returns
        /// false: what a script-set cookie window reaching past the walker's memory needs.
        public func visitRequests(before sequence: Int, _ visit: (CookieProvenance.PastRequest) -> Bool) throws {
            try rows.flush()
            let cursor = try Row.fetchCursor(older, arguments: [recordingID, sequence])
            while let row = try cursor.next() {
                guard let target = RequestTarget(row[2] as String) else { continue }
                // As Exchange.evidenceGap tells it (E1-E6).
                let evidence = (row[4] as String?) == nil
                let request = CookieProvenance.PastRequest(sequence: row[0], startedAt: row[1], target: target, headers: try ReportStore.decodeHeaders(row[3]), isEvidence: evidence)
                if !visit(request) { return }
            }
        }

    /// Names the recording and adds its recording-level diagnostics ahead of the
        /// per-exchange ones, as a whole-recording save orders them.
        public func finish(name: String, sourceSHA256: String?, diagnostics: [Diagnostic], replace: Bool) throws -> ImportResult {
            try rows.flush()
            var replaced = false
            if let existing = try RecordingRow.filter(RecordingRow.Columns.name == name).fetchOne(db) {
                if existing.sourceSHA256 != nil, existing.sourceSHA256 == sourceSHA256 {
                    try ReportStore.deleteRecording(recordingID, db)
                    return .unchanged(id: existing.id!)
                }
                guard replace else { throw NameTaken(name: name) }
                try ReportStore.deleteRecording(existing.id!, db)
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

    /// A streaming import in one transaction: `produce` stores bodies through the sink and
    /// recordings through writers it opens with `open`, and returns what it imported. Any
    /// error rolls everything back, bodies included.
    ///
    /// Foreign keys are off in that transaction, as in a run's (`writeRun`), so that a
    /// writer stores many rows to a statement without a statement journal: every row
    /// names the recording its writer inserted first, and bodies the sink or the row's own
    /// insert stored before it. A recording the import replaces is deleted with what
    /// depends on it (`deleteRecording`).
    public func importStreaming<T>(_ produce: (BodySink, _ open: (_ sourceFormat: String, _ sourcePath: String?) throws -> RecordingWriter) throws -> T) throws -> T {
        try withoutForeignKeys { db in
            // A larger page cache for the import: fewer pages written to the WAL twice.
            try db.execute(sql: "PRAGMA cache_size = -8192")
            defer { try? db.execute(sql: "PRAGMA cache_size = -2000") }
            let sink = try BodySink(db)
            let result = try produce(sink) { format, path in try RecordingWriter(db, sourceFormat: format, sourcePath: path) }
            try sink.flush()
            return result
        }
    }
}
