import Foundation
import GRDB

// One struct per table read through GRDB's records, columns in snake_case: Codable, each
// with the `Columns` its queries name, for the tables read a row or a few at a time; decoded
// by column index (`init(row:)`) for the two read by the thousand, exchanges and findings.
// Tables written only through prepared statements (body, outcome, cookie rows) have no record.

public struct RecordingRow: Codable, FetchableRecord, MutablePersistableRecord, Sendable {
    public static let databaseTableName = "recording"
    public static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
    public static let databaseColumnEncodingStrategy = DatabaseColumnEncodingStrategy.convertToSnakeCase
    public var id: Int64?
    public var name: String
    public var sourceFormat: String
    public var sourcePath: String?
    public var sourceSHA256: String?
    public var importedAt: String
    public var exchangeCount: Int

    enum CodingKeys: String, CodingKey {
        case id, name, sourceFormat, sourcePath, importedAt, exchangeCount
        case sourceSHA256 = "sourceSha256"
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    public enum Columns {
        public static let id = Column("id")
        public static let name = Column("name")
        public static let sourceSHA256 = Column("source_sha256")
    }
}

struct DiagnosticRow: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "diagnostic"
    static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
    static let databaseColumnEncodingStrategy = DatabaseColumnEncodingStrategy.convertToSnakeCase
    var id: Int64?
    var recordingId: Int64
    var sequence: Int?
    var severity: String
    var code: String
    var message: String
}

/// An exchange as stored. Every exchange of a recording read back is one, so it is decoded
/// by hand from a fixed selection of columns (GRDB's `init(row:)` over column indexes,
/// its fastest documented way): Codable decoding, converting each of thirty column names
/// from snake_case for every row, was two thirds of reading a recording back. Written
/// through `ExchangeRows`' prepared statement.
struct ExchangeRow: FetchableRecord {
    var id: Int64?
    var recordingId: Int64
    var sequence: Int
    var startedAt: Double
    var duration: Double
    var connectionId: String?
    var serverAddress: String?
    var method: String
    var url: String
    var httpVersion: String
    var requestHeaders: String
    var requestBodySha256: String
    var requestBodyLength: Int
    var status: Int
    var statusText: String
    var responseHttpVersion: String
    var responseHeaders: String
    var responseBodySha256: String
    var responseBodyLength: Int
    var responseEncodedLength: Int?
    var responseBodyMissing: Bool
    var redirectUrl: String?
    var initiator: String
    var frame: String
    var bodyKind: String
    var redirectChainStart: Int?
    var redirectHop: Int?
    var redirectNext: Int?
    var resourceType: String?
    var evidenceGap: String?
    var responseStart: Double?

    /// The columns `init(row:)` reads, in its order.
    static let selection = "id, recording_id, sequence, started_at, duration, connection_id, server_address, method, url, http_version, request_headers, request_body_sha256, request_body_length, status, status_text, response_http_version, response_headers, response_body_sha256, response_body_length, response_encoded_length, response_body_missing, redirect_url, initiator, frame, body_kind, redirect_chain_start, redirect_hop, redirect_next, resource_type, evidence_gap, response_start"

    /// The exchanges of one recording, in sequence order.
    static func fetchAll(_ db: Database, recordingID: Int64) throws -> [ExchangeRow] {
        try fetchAll(db.cachedStatement(sql: "SELECT \(selection) FROM exchange WHERE recording_id = ? ORDER BY sequence"), arguments: [recordingID])
    }

    init(row: Row) throws {
        id = try row.decode(atIndex: 0)
        recordingId = try row.decode(atIndex: 1)
        sequence = try row.decode(atIndex: 2)
        startedAt = try row.decode(atIndex: 3)
        duration = try row.decode(atIndex: 4)
        connectionId = try row.decode(atIndex: 5)
        serverAddress = try row.decode(atIndex: 6)
        method = try row.decode(atIndex: 7)
        url = try row.decode(atIndex: 8)
        httpVersion = try row.decode(atIndex: 9)
        requestHeaders = try row.decode(atIndex: 10)
        requestBodySha256 = try row.decode(atIndex: 11)
        requestBodyLength = try row.decode(atIndex: 12)
        status = try row.decode(atIndex: 13)
        statusText = try row.decode(atIndex: 14)
        responseHttpVersion = try row.decode(atIndex: 15)
        responseHeaders = try row.decode(atIndex: 16)
        responseBodySha256 = try row.decode(atIndex: 17)
        responseBodyLength = try row.decode(atIndex: 18)
        responseEncodedLength = try row.decode(atIndex: 19)
        responseBodyMissing = try row.decode(atIndex: 20)
        redirectUrl = try row.decode(atIndex: 21)
        initiator = try row.decode(atIndex: 22)
        frame = try row.decode(atIndex: 23)
        bodyKind = try row.decode(atIndex: 24)
        redirectChainStart = try row.decode(atIndex: 25)
        redirectHop = try row.decode(atIndex: 26)
        redirectNext = try row.decode(atIndex: 27)
        resourceType = try row.decode(atIndex: 28)
        evidenceGap = try row.decode(atIndex: 29)
        responseStart = try row.decode(atIndex: 30)
    }
}

/// A replay run: when, with which tool, profile and presets.
public struct RunRow: Codable, FetchableRecord, MutablePersistableRecord, Sendable {
    public static let databaseTableName = "run"
    public static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
    public static let databaseColumnEncodingStrategy = DatabaseColumnEncodingStrategy.convertToSnakeCase
    public var id: Int64?
    public var startedAt: String
    public var finishedAt: String
    public var toolVersion: String
    public var profile: String
    public var ios: String
    public var simulator: Bool
    public var presets: String
    public var label: String?
    public var gitRevision: String?
    public var recordingCount: Int
    public var exchangeCount: Int
    /// The preset whose findings are the web view's own (v18): `plain` when the run had
    /// it, nil when it had none or `--baseline-preset none`.
    public var baselinePreset: String?

    public init(id: Int64?, startedAt: String, finishedAt: String, toolVersion: String, profile: String, ios: String, simulator: Bool, presets: String, label: String?, gitRevision: String?, recordingCount: Int, exchangeCount: Int, baselinePreset: String? = nil) {
        self.id = id
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.toolVersion = toolVersion
        self.profile = profile
        self.ios = ios
        self.simulator = simulator
        self.presets = presets
        self.label = label
        self.gitRevision = gitRevision
        self.recordingCount = recordingCount
        self.exchangeCount = exchangeCount
        self.baselinePreset = baselinePreset
    }

    public var presetList: [String] { presets.split(separator: ",").map(String.init) }
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    public enum Columns {
        public static let id = Column("id")
        public static let label = Column("label")
    }
}

/// A finding as stored, read for every finding of a run a report or gate loads: decoded
/// by column index from a fixed selection, as `ExchangeRow` is. Written through
/// `RunWriter`'s prepared statement.
struct FindingRow: FetchableRecord {
    var id: Int64?
    var runId: Int64
    var preset: String
    var code: String
    var severity: String
    var recordingName: String
    var sequence: Int
    var method: String
    var url: String
    var subject: String?
    var rules: String
    var confidence: String
    /// Empty for rows written since v6, which store `detail` instead.
    var message: String
    var expected: String
    var actual: String
    /// The whole sentence, for rows written from v6 to v13; since v14 `detailForm` and
    /// `detailValues` hold its parts.
    var detail: String?
    var alternative: String?
    var subjects: String?
    var likelihood: Double?
    var rank: String?
    /// `FindingDetail.Form`'s raw value.
    var detailForm: String?
    /// The sentence's values, a JSON array of strings.
    var detailValues: String?
    /// The baseline preset found the same (v18; false for rows written before).
    var baseline: Bool
    /// `FindingInference.stored` lines, a JSON array (v22; nil for none).
    var inferences: String?

    /// The columns `init(row:)` reads, in its order.
    static let selection = "id, run_id, preset, code, severity, recording_name, sequence, method, url, subject, rules, confidence, message, expected, actual, detail, alternative, subjects, likelihood, rank, detail_form, detail_values, baseline, inferences"

    /// A run's findings by recording, preset, exchange and code, then as stored.
    static func fetchAll(_ db: Database, run: Int64) throws -> [FindingRow] {
        try fetchAll(db.cachedStatement(sql: "SELECT \(selection) FROM finding WHERE run_id = ? ORDER BY recording_name, preset, sequence, code, id"), arguments: [run])
    }

    init(row: Row) throws {
        id = try row.decode(atIndex: 0)
        runId = try row.decode(atIndex: 1)
        preset = try row.decode(atIndex: 2)
        code = try row.decode(atIndex: 3)
        severity = try row.decode(atIndex: 4)
        recordingName = try row.decode(atIndex: 5)
        sequence = try row.decode(atIndex: 6)
        method = try row.decode(atIndex: 7)
        url = try row.decode(atIndex: 8)
        subject = try row.decode(atIndex: 9)
        rules = try row.decode(atIndex: 10)
        confidence = try row.decode(atIndex: 11)
        message = try row.decode(atIndex: 12)
        expected = try row.decode(atIndex: 13)
        actual = try row.decode(atIndex: 14)
        detail = try row.decode(atIndex: 15)
        alternative = try row.decode(atIndex: 16)
        subjects = try row.decode(atIndex: 17)
        likelihood = try row.decode(atIndex: 18)
        rank = try row.decode(atIndex: 19)
        detailForm = try row.decode(atIndex: 20)
        detailValues = try row.decode(atIndex: 21)
        baseline = try row.decode(atIndex: 22)
        inferences = try row.decode(atIndex: 23)
    }
}
