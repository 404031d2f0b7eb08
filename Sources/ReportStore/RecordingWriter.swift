import CookieJar
import Foundation
import GRDB
import TrafficModel

/// The prepared statements that store exchanges and their cookie provenance, shared by a
/// whole-recording insert and a streaming one.
struct ExchangeRows {
    let exchange: Statement
    let body: Statement
    let sent: Statement
    let inferred: Statement

    init(_ db: Database) throws {
        // One prepared statement for every row: a capture can hold a hundred thousand.
        exchange = try db.makeStatement(sql: """
            INSERT INTO exchange (recording_id, sequence, started_at, duration, connection_id, server_address,
                method, url, http_version, request_headers, request_body_sha256, request_body_length,
                status, status_text, response_http_version, response_headers, response_body_sha256, response_body_length,
                response_encoded_length, response_body_missing, redirect_url, initiator, frame, body_kind,
                redirect_chain_start, redirect_hop, redirect_next, resource_type)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        body = try db.makeStatement(sql: "INSERT OR IGNORE INTO body (sha256, length, content) VALUES (?, ?, ?)")
        sent = try db.makeStatement(sql: "INSERT INTO cookie_sent (recording_id, sequence, position, name, provenance, set_by, set_by_hop) VALUES (?, ?, ?, ?, ?, ?, ?)")
        inferred = try db.makeStatement(sql: "INSERT INTO cookie_inference (recording_id, sequence, name, kind, domain, path, window_start) VALUES (?, ?, ?, ?, ?, ?, ?)")
    }

    /// Stores the exchange's row, and its bodies unless they were stored when detached.
    func insert(_ e: Exchange, recordingID: Int64) throws {
        let requestHash: String
        if e.request.bodyDetached {
            requestHash = e.request.bodyFingerprint.sha256
        } else {
            requestHash = e.request.bodyFingerprint.sha256
            try body.execute(arguments: [requestHash, e.request.body.count, e.request.body])
        }
        let responseHash: String
        if let detached = e.response.detachedBody {
            responseHash = detached.sha256
        } else {
            responseHash = e.response.body.sha256Hex
            try body.execute(arguments: [responseHash, e.response.body.count, e.response.body])
        }
        let values: [(any DatabaseValueConvertible)?] = [
            recordingID, e.sequence, e.startedAt, e.duration, e.connectionID, e.serverAddress,
            e.request.method, e.request.url, e.request.httpVersion, ReportStore.encodeHeaders(e.request.headers), requestHash, e.request.bodyFingerprint.length,
            e.response.status, e.response.statusText, e.response.httpVersion, ReportStore.encodeHeaders(e.response.headers), responseHash,
            e.response.detachedBody?.length ?? e.response.body.count,
            e.response.encodedLength, e.response.bodyMissing, e.response.redirectURL, e.initiator.rawValue, e.frame.label, e.bodyKind.rawValue,
            e.redirect?.chainStart, e.redirect?.hop, e.redirect?.next, e.resourceType,
        ]
        try exchange.execute(arguments: StatementArguments(values))
    }

    func insertProvenance(sequence: Int, sent cookies: [CookieProvenance.SentCookie], inferred events: [CookieProvenance.Inference], recordingID: Int64) throws {
        for (position, c) in cookies.enumerated() {
            try sent.execute(arguments: [recordingID, sequence, position, c.name, c.kind.rawValue, c.setBy, c.hop])
        }
        for e in events {
            try inferred.execute(arguments: [recordingID, sequence, e.cookie.name, e.kind.rawValue, e.cookie.domain, e.cookie.path, e.windowStart])
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
