import Findings
import Foundation
import GRDB
import Pipeline
import HARFormat
import Testing
import TrafficModel
import WebViewEmulation
@testable import ReportStore

/// A new directory of its own under the temporary directory, for a test's database files.
func scratchDirectory(_ name: String) throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-\(name)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
}

@Suite("SQLite store")
struct ReportStoreTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func recording(_ name: String) throws -> Recording {
        let data = try Data(contentsOf: root.appendingPathComponent("Recordings/\(name).har"))
        return try HARImporter().recording(from: data, file: "Recordings/\(name).har", name: name)
    }

    @Test("a stored recording loads back equal, bodies included")
    func roundTrip() throws {
        let store = try ReportStore.inMemory()
        for name in ["login-redirect", "fetch-blob-upload"] {
            let original = try Self.recording(name)
            try store.save(original)
            let loaded = try #require(try store.recording(named: name))
            #expect(loaded.exchanges == original.exchanges)
            #expect(loaded.diagnostics == original.diagnostics)
        }
        #expect(try store.recordingNames() == ["fetch-blob-upload", "login-redirect"])
    }

    @Test("cookie provenance is computed at import and stored per exchange")
    func provenanceStored() throws {
        let store = try ReportStore.inMemory()
        try store.save(try Self.recording("script-cookie-api"))
        let detail = try #require(try store.detail(named: "script-cookie-api"))
        #expect(detail.cookies.map { $0.map(\.name) } == [[], ["uid"], ["uid", "ab_bucket"]])
        #expect(detail.cookies[2][1].provenance == "script-set" && detail.cookies[2][1].setBy == 2)
        #expect(detail.cookies[2][0] == ReportStore.StoredSentCookie(name: "uid", provenance: "server-set", setBy: 0, setByHop: nil))
        #expect(detail.inferred[2].map(\.kind) == ["script-set"])
        #expect(detail.inferred[2].first?.windowStart != nil)
    }

    @Test("bodies are content-addressed: the same bytes are stored once")
    func contentAddressed() throws {
        let store = try ReportStore.inMemory()
        var a = try Self.recording("xhr-json-post")
        try store.save(a)
        a.name = "copy"
        a.sourceSHA256 = "other"
        try store.save(a)
        let bodies = try store.writer.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM body")! }
        let distinct = Set(a.exchanges.flatMap { [$0.request.body, $0.response.body] }).count
        #expect(bodies == distinct)
    }

    @Test("re-importing the same file is a no-op; a different file of the same name needs replace")
    func names() throws {
        let store = try ReportStore.inMemory()
        let a = try Self.recording("xhr-json-post")
        guard case .imported = try store.save(a) else { Issue.record("first save"); return }
        #expect(try store.save(a) == .unchanged(id: 1))
        var b = a
        b.sourceSHA256 = "different"
        b.exchanges.removeLast()
        #expect(throws: ReportStore.NameTaken.self) { try store.save(b) }
        #expect(try store.recording(named: "xhr-json-post")?.exchanges.count == 3)
        guard case .imported(_, let replaced) = try store.save(b, replace: true) else { Issue.record("replace"); return }
        #expect(replaced)
        #expect(try store.recording(named: "xhr-json-post")?.exchanges.count == 2)
    }

    @Test("a failing import leaves the database as it was")
    func atomicImport() throws {
        let store = try ReportStore.inMemory()
        var bad = try Self.recording("xhr-json-post")
        bad.exchanges[2].sequence = 0  // violates UNIQUE (recording_id, sequence) mid-import
        #expect(throws: (any Error).self) { try store.save(bad) }
        let counts = try store.writer.read { db in
            [try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM recording")!, try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM exchange")!, try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM body")!]
        }
        #expect(counts == [0, 0, 0])
    }

    @Test("a run is stored in one transaction with its outcomes and findings, and reads back")
    func run() throws {
        let store = try ReportStore.inMemory()
        let recordings = try ["xhr-json-post", "login-redirect", "script-cookie-api"].map(Self.recording)
        for r in recordings { try store.save(r) }
        let runner = ReplayRunner(presets: Preset.builtIn, profile: Profile())
        let id = try runner.run(recordings, in: store, label: "nightly", toolVersion: "t", gitRevision: nil)
        let row = try #require(try store.run(id: nil))
        #expect(row.id == id && row.label == "nightly" && row.presetList == Preset.builtIn.map(\.name))
        #expect(try store.run(label: "nightly")?.id == id)
        let findings = try store.findings(run: id)
        let expected = runner.replay(recordings).flatMap(\.findings)
        #expect(Set(findings.map(\.identity)) == Set(expected.map(\.identity)))
        #expect(findings.count == expected.count)
        // What each finding rests on reads back as it was found.
        let byIdentity = Dictionary(expected.map { ($0.identity, $0.inferences) }, uniquingKeysWith: { a, _ in a })
        #expect(findings.contains { !$0.inferences.isEmpty } && findings.allSatisfy { byIdentity[$0.identity] == $0.inferences })
        let outcomes = try store.writer.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM outcome WHERE run_id = ?", arguments: [id])! }
        #expect(outcomes == (3 + 4 + 3) * Preset.builtIn.count)
        #expect(try store.recordingNames(run: id) == ["login-redirect", "script-cookie-api", "xhr-json-post"])
    }

    @Test("the report's findings, the matrix's join and the new-findings lookup read one index, with no sort")
    func findingIndex() throws {
        let store = try ReportStore.inMemory()
        let plans = try store.writer.read { db in
            try [
                "SELECT * FROM finding WHERE run_id = 1 ORDER BY recording_name, preset, sequence, code, id",
                "SELECT COUNT(*) FROM finding WHERE run_id = 1 AND recording_name = 'a' AND preset = 'b'",
                "SELECT 1 FROM finding WHERE run_id = 1 AND recording_name = 'a' AND preset = 'b' AND sequence = 2 AND code = 'c'",
            ].map { sql in try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql).map { $0["detail"] as String }.joined(separator: "; ") }
        }
        for plan in plans {
            #expect(plan.contains("USING INDEX finding_by_run") || plan.contains("USING COVERING INDEX finding_by_run"), "\(plan)")
            #expect(!plan.contains("TEMP B-TREE"), "\(plan)")
        }
    }

    @Test("timestamps are ISO 8601 in UTC to the millisecond, as Foundation's formatter writes them", arguments: [0.0, 1.5, 59.999, 0.0005, 951_782_400.25, 1_795_000_000.123, 4_102_444_799.999, -1.5])
    func timestamp(seconds: Double) {
        let date = Date(timeIntervalSince1970: seconds)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        #expect(ReportStore.timestamp(date) == formatter.string(from: date))
    }

    @Test("no index repeats the leading columns of another on its table, and deleting a run finds its rows by index")
    func noRedundantIndex() throws {
        let store = try ReportStore.inMemory()
        try store.writer.read { db in
            let indexes = try Row.fetchAll(db, sql: "SELECT tbl_name, name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
            var columns: [(table: String, name: String, columns: [String])] = []
            for index in indexes {
                let name: String = index["name"]
                columns.append((index["tbl_name"], name, try String.fetchAll(db, sql: "SELECT name FROM pragma_index_info(?) ORDER BY seqno", arguments: [name])))
            }
            for a in columns {
                for b in columns where a.name != b.name && a.table == b.table {
                    #expect(!b.columns.starts(with: a.columns), "\(a.name) (\(a.columns)) is the leading part of \(b.name) (\(b.columns))")
                }
            }
            for table in ["outcome", "finding", "jar_event", "coverage_item", "arrival"] {
                let plan = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN SELECT 1 FROM \(table) WHERE run_id = 1").map { $0["detail"] as String }.joined(separator: "; ")
                #expect(plan.contains("USING") && plan.contains("INDEX"), "\(table): \(plan)")
            }
        }
    }

    @Test("the database file is created with mode 0600, in WAL mode, with 16 KiB pages")
    func fileMode() throws {
        let dir = try scratchDirectory("store")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("db.sqlite").path
        let store = try ReportStore.open(path: path)
        try store.save(try Self.recording("xhr-json-post"))
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let journal = try store.writer.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") }
        #expect(journal == "wal")
        let pageSize = try store.writer.read { try Int.fetchOne($0, sql: "PRAGMA page_size") }
        #expect(pageSize == 16384)
        let walMode = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.posixPermissions] as? Int
        #expect(walMode == 0o600)
        // Opened again, the file keeps what it was created with.
        let again = try ReportStore.open(path: path)
        #expect(try again.writer.read { try Int.fetchOne($0, sql: "PRAGMA page_size") } == 16384)
        #expect(try again.recordingNames() == ["xhr-json-post"])
    }

    @Test("a new file gets the schema every migration makes in one transaction, each migration marked applied")
    func newFileSchema() throws {
        let dir = try scratchDirectory("store")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("db.sqlite").path
        let store = try ReportStore.open(path: path, newFile: .rollbackJournal)
        // One transaction wrote the schema: the header's file change counter (bytes 24-27,
        // big-endian) counts the commits made in a rollback journal.
        let header = try [UInt8](#require(FileHandle(forReadingAtPath: path)).readData(ofLength: 100))
        #expect(header[24..<28].reduce(0) { $0 << 8 | Int($1) } == 1)
        let migrated = try DatabaseQueue()
        try Schema.migrator.migrate(migrated)
        let schema = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
        let copied = try store.writer.read { try Row.fetchAll($0, sql: schema) }
        #expect(copied.count > 20)
        #expect(copied == (try migrated.read { try Row.fetchAll($0, sql: schema) }))
        let applied = try store.writer.read { try Schema.migrator.appliedIdentifiers($0) }
        #expect(applied == Set(Schema.migrator.migrations))
        #expect(try store.writer.read { try Schema.migrator.hasCompletedMigrations($0) })
    }

    @Test("a database created for a bulk write has a rollback journal while its creator holds it, and WAL from the next open")
    func bulkNewFile() throws {
        let dir = try scratchDirectory("store")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("db.sqlite").path
        let store = try ReportStore.open(path: path, newFile: .rollbackJournal)
        try store.save(try Self.recording("xhr-json-post"))
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        // Its first import writes each page once, to the file.
        #expect(try store.writer.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") } == "delete")
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(try store.writer.read { try Int.fetchOne($0, sql: "PRAGMA page_size") } == 16384)
        // Opened again, even for another bulk write, the file keeps its pages and turns to
        // WAL, its -wal owner-only too.
        let again = try ReportStore.open(path: path, newFile: .rollbackJournal)
        #expect(try again.writer.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") } == "wal")
        #expect(try again.writer.read { try Int.fetchOne($0, sql: "PRAGMA page_size") } == 16384)
        #expect(try again.recordingNames() == ["xhr-json-post"])
        #expect(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.posixPermissions] as? Int == 0o600)
    }

    @Test("an exchange read back with an initiator this version does not know is an error naming the row, not a guess")
    func unknownInitiator() throws {
        let store = try ReportStore.inMemory()
        try store.save(try Self.recording("xhr-json-post"))
        try store.writer.write { db in try db.execute(sql: "UPDATE exchange SET initiator = 'telepathy' WHERE sequence = 1") }
        #expect {
            try store.recording(named: "xhr-json-post")
        } throws: { error in
            "\(error)".contains("table exchange") && "\(error)".contains("initiator 'telepathy'")
        }
    }

    @Test("v16 makes outcomes and findings again without the recording's row id: every row, id and view kept; no foreign key or index left on the recording")
    func runRowsByName() throws {
        let queue = try DatabaseQueue()
        try Schema.migrator.migrate(queue, upTo: "v15: bodies kept in the coding they crossed the wire in")
        try queue.write { db in
            try db.execute(sql: """
                INSERT INTO recording (id, name, source_format, imported_at, exchange_count) VALUES (7, 'r', 'har', '', 1);
                INSERT INTO run (id, started_at, finished_at, tool_version, profile, ios, simulator, presets, recording_count, exchange_count)
                  VALUES (3, '', '', 't', 'p', '18', 0, 'plain', 1, 1);
                INSERT INTO outcome (id, run_id, recording_name, recording_id, preset, sequence, delivered_method, delivered_url,
                  delivered_body_length, delivered_body_sha256, sent_cookie_names, page_url, changes)
                  VALUES (41, 3, 'r', 7, 'plain', 0, 'POST', 'https://a.example/', 0, 'e3b0', 'sid', NULL, '[]');
                INSERT INTO finding (id, run_id, preset, code, severity, recording_name, recording_id, sequence, method, url, subject,
                  rules, confidence, message, expected, actual, detail_form, detail_values, likelihood, rank)
                  VALUES (42, 3, 'plain', 'BODY_LOST', 'error', 'r', 7, 0, 'POST', 'https://a.example/', NULL, 'P1', 'source', '', '{}', '{}', 'body-lost', '["POST https://a.example/", "12"]', 1, 'api');
                """)
        }
        let store = try ReportStore(writer: queue)
        try queue.read { db in
            for table in ["outcome", "finding"] {
                let columns = try db.columns(in: table).map(\.name)
                let references = try db.foreignKeys(on: table).map(\.destinationTable)
                #expect(!columns.contains("recording_id") && references == ["run"], "\(table)")
            }
            #expect(try Int64.fetchAll(db, sql: "SELECT id FROM outcome") == [41])
            #expect(try Row.fetchOne(db, sql: "SELECT id, recording_name, code, rules, detail_form FROM finding") == ["id": 42, "recording_name": "r", "code": "BODY_LOST", "rules": "P1", "detail_form": "body-lost"])
            #expect(try Row.fetchOne(db, sql: "SELECT errors, warnings FROM run_matrix WHERE run_id = 3") == ["errors": 1, "warnings": 0])
            #expect(try Int.fetchOne(db, sql: "SELECT findings FROM findings_per_preset_code") == 1)
            #expect(try Set(String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('outcome', 'finding') AND sql IS NOT NULL")) == ["outcome_by_run", "finding_by_run"])
        }
        // Ids go on from where they were; the recording goes without touching the run.
        try store.writer.write { db in
            try db.execute(sql: "INSERT INTO finding (run_id, preset, code, severity, recording_name, sequence, method, url, rules, confidence, message, expected, actual) VALUES (3, 'plain', 'BODY_LOST', 'error', 'r', 1, 'GET', 'u', '', 'source', '', '{}', '{}')")
            #expect(try Int64.fetchOne(db, sql: "SELECT max(id) FROM finding") == 43)
            try db.execute(sql: "DELETE FROM recording WHERE id = 7")
        }
        #expect(try store.writer.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM finding WHERE recording_name = 'r'") } == 2)
        #expect(try store.findings(run: 3).map(\.code) == [.bodyLost, .bodyLost])
    }

    @Test("v17 keys cookie provenance by recording, sequence and position without a rowid: every row kept, inferences in their order, no index beside the key")
    func provenanceClustered() throws {
        let queue = try DatabaseQueue()
        try Schema.migrator.migrate(queue, upTo: "v16: a run's rows name their recording, not its row")
        try queue.write { db in
            // Ids out of sequence order, as rows of two imports interleave: only the id
            // orders one exchange's events.
            try db.execute(sql: """
                INSERT INTO recording (id, name, source_format, imported_at, exchange_count) VALUES (7, 'r', 'har', '', 3);
                INSERT INTO recording (id, name, source_format, imported_at, exchange_count) VALUES (8, 's', 'har', '', 1);
                INSERT INTO cookie_sent (recording_id, sequence, position, name, provenance, set_by, set_by_hop)
                  VALUES (7, 2, 1, 'b', 'script-set', NULL, NULL), (7, 2, 0, 'a', 'server-set', 0, 1), (8, 0, 0, 'c', 'pre-existing', NULL, NULL);
                INSERT INTO cookie_inference (id, recording_id, sequence, name, kind, domain, path, window_start) VALUES
                  (30, 7, 2, 'late', 'script-deleted', 'a.example', '/', NULL),
                  (10, 7, 2, 'early', 'script-set', 'a.example', '/', 1.5),
                  (20, 7, 1, 'first', 'pre-existing', 'a.example', '/x', NULL),
                  (40, 8, 0, 'other', 'script-set', 'b.example', '/', 2.0);
                """)
        }
        _ = try ReportStore(writer: queue)
        try queue.read { db in
            for table in ["cookie_sent", "cookie_inference"] {
                let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = ?", arguments: [table]) ?? ""
                #expect(sql.contains("WITHOUT ROWID"), "\(table)")
                #expect(try db.primaryKey(table).columns == ["recording_id", "sequence", "position"], "\(table)")
                #expect(try db.foreignKeys(on: table).map(\.destinationTable) == ["recording"], "\(table)")
                #expect(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", arguments: [table]) == [], "\(table)")
            }
            #expect(try Row.fetchAll(db, sql: "SELECT recording_id, sequence, position, name, set_by_hop FROM cookie_sent ORDER BY recording_id, sequence, position") == [
                ["recording_id": 7, "sequence": 2, "position": 0, "name": "a", "set_by_hop": 1],
                ["recording_id": 7, "sequence": 2, "position": 1, "name": "b", "set_by_hop": nil],
                ["recording_id": 8, "sequence": 0, "position": 0, "name": "c", "set_by_hop": nil],
            ])
            #expect(try Row.fetchAll(db, sql: "SELECT recording_id, sequence, position, name, window_start FROM cookie_inference ORDER BY recording_id, sequence, position") == [
                ["recording_id": 7, "sequence": 1, "position": 0, "name": "first", "window_start": nil],
                ["recording_id": 7, "sequence": 2, "position": 0, "name": "early", "window_start": 1.5],
                ["recording_id": 7, "sequence": 2, "position": 1, "name": "late", "window_start": nil],
                ["recording_id": 8, "sequence": 0, "position": 0, "name": "other", "window_start": 2.0],
            ])
        }
        // Deleting a recording takes its provenance with it, and only its.
        try queue.write { db in
            try db.execute(sql: "PRAGMA foreign_keys = ON")
            try db.execute(sql: "DELETE FROM recording WHERE id = 7")
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM cookie_sent") == 1)
            #expect(try String.fetchAll(db, sql: "SELECT name FROM cookie_inference") == ["other"])
        }
    }

    @Test("a database a newer h5replay has changed is refused with a word, not misread")
    func newerDatabase() throws {
        let queue = try DatabaseQueue()
        let store = try ReportStore(writer: queue)
        try store.save(try Self.recording("xhr-json-post"))
        // Opening it again is fine; once a migration this version lacks is applied, it is not.
        _ = try ReportStore(writer: queue)
        try queue.write { try $0.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from a later version')") }
        #expect(throws: StoreError.newerDatabase) { try ReportStore(writer: queue) }
    }

    @Test("a finding's message is rendered from its stored detail and the rule catalogue; an unknown code read back is an error naming the row")
    func findingRoundTrip() throws {
        let store = try ReportStore.inMemory()
        let recording = try Self.recording("xhr-json-post")
        try store.save(recording)
        let runner = ReplayRunner(presets: [Preset.named("urlprotocol-naive")!], profile: Profile())
        let computed = runner.replay([recording]).flatMap(\.findings)
        let run = try runner.run([recording], in: store, label: nil, toolVersion: "test", gitRevision: nil)
        let loaded = try store.findings(run: run)
        #expect(loaded.map(\.message) == computed.map(\.message))
        #expect(loaded.first?.message.contains("(P1, source)") == true)
        let stored = try store.writer.read { db in try String.fetchOne(db, sql: "SELECT message FROM finding WHERE run_id = ?", arguments: [run]) }
        #expect(stored == "")
        // The detail is stored as its sentence's parts, not as the sentence.
        let parts = try store.writer.read { db in try Row.fetchOne(db, sql: "SELECT detail, detail_form, detail_values FROM finding WHERE run_id = ?", arguments: [run]) }
        #expect(parts?["detail"] as String? == nil)
        #expect(parts?["detail_form"] as String? == "body-lost")
        #expect(parts?["detail_values"] as String? == #"["The XHR POST m.example.com/api/order","52"]"#)
        // A row an earlier version wrote, its sentence whole, reads back as it was.
        try store.writer.write { db in
            try db.execute(sql: "UPDATE finding SET detail = 'The page lost it', detail_form = NULL, detail_values = NULL WHERE run_id = ?", arguments: [run])
        }
        #expect(try store.findings(run: run).first?.detail == "The page lost it")
        // An unknown form is an error naming the row and the value.
        try store.writer.write { db in try db.execute(sql: "UPDATE finding SET detail_form = 'telepathy' WHERE run_id = ?", arguments: [run]) }
        #expect {
            try store.findings(run: run)
        } throws: { error in
            (error as? StoreError).map { "\($0)".contains("table finding, row") && "\($0)".contains("telepathy") } ?? false
        }
        try store.writer.write { db in try db.execute(sql: "UPDATE finding SET detail_form = NULL WHERE run_id = ?", arguments: [run]) }
        try store.writer.write { db in try db.execute(sql: "UPDATE finding SET code = 'BODY_VANISHED' WHERE run_id = ?", arguments: [run]) }
        #expect {
            try store.findings(run: run)
        } throws: { error in
            (error as? StoreError).map { "\($0)".contains("table finding, row") && "\($0)".contains("BODY_VANISHED") } ?? false
        }
    }

    @Test("findings bound without a copy read back equal: empty, escaped and non-ASCII text, and expected and actual of any size, keys in byte order")
    func findingTextRoundTrip() throws {
        let store = try ReportStore.inMemory()
        func finding(_ sequence: Int, expected: FindingFields, actual: FindingFields, subjects: [String], detail: String) -> Finding {
            let method = sequence == 0 ? "" : "POST"
            let alternative: String? = sequence == 2 ? "an XHR" : nil
            let rules: [RuleID] = ["C1", "C3"]
            var f = Finding(code: FindingCode.cookieMissing, severity: Severity.warning, preset: "p", recording: "r", sequence: sequence, method: method,
                url: "https://例え.jp/a?q=\"x\"", subject: subjects.first, rules: rules, confidence: Confidence.measured,
                expected: expected, actual: actual, detail: detail, alternative: alternative)
            f.subjects = subjects
            return f
        }
        let findings = [
            finding(0, expected: [:], actual: ["only": ""], subjects: [], detail: ""),
            finding(1, expected: ["value": "1", "cookie": "sid"], actual: ["present": "no", "cookie": "sid"], subjects: ["sid"], detail: "line\nbreak \\ 🍪"),
            finding(2, expected: ["z": "3", "a": "1", "m": "2", "B": "0"], actual: ["é": "ü", "e": "u"], subjects: ["a", "", "c"], detail: String(repeating: "long ", count: 2000)),
        ]
        let run = RunRow(id: nil, startedAt: "", finishedAt: "", toolVersion: "t", profile: "p", ios: "18", simulator: false, presets: "p", label: nil, gitRevision: nil, recordingCount: 1, exchangeCount: 3)
        let id = try store.saveRun(run, results: [RunResult(recording: "r", preset: "p", outcomes: [], findings: findings)])
        #expect(try store.findings(run: id) == findings)
        let stored = try store.writer.read { db in try String.fetchAll(db, sql: "SELECT expected FROM finding WHERE run_id = ? ORDER BY sequence", arguments: [id]) }
        #expect(stored == ["{}", #"{"cookie":"sid","value":"1"}"#, #"{"B":"0","a":"1","m":"2","z":"3"}"#])
    }

    @Test("a run's rows are all stored, in order, whether they fill insert statements, fall short of one or spill into the next", arguments: [1, 15, 16, 17, 40])
    func rowsPerStatement(count: Int) throws {
        let store = try ReportStore.inMemory()
        let findings = (0..<count).map { n in
            Finding(code: FindingCode.bodyLost, severity: Severity.error, preset: "p\(n % 3)", recording: "r", sequence: n, method: "POST",
                url: "https://a.example/\(n)", subject: nil, rules: ["P1"], confidence: Confidence.source, expected: ["n": "\(n)"], actual: [:], detail: "row \(n)")
        }
        let run = RunRow(id: nil, startedAt: "", finishedAt: "", toolVersion: "t", profile: "p", ios: "18", simulator: false, presets: "p", label: nil, gitRevision: nil, recordingCount: 1, exchangeCount: count)
        let id = try store.saveRun(run, results: [RunResult(recording: "r", preset: "p", outcomes: [], findings: findings)])
        let details = try store.writer.read { db in try String.fetchAll(db, sql: "SELECT detail_values FROM finding WHERE run_id = ? ORDER BY id", arguments: [id]) }
        #expect(details == findings.map { #"["\#($0.detail)"]"# })
    }

    @Test("a run that fails while its rows are written leaves no row; afterwards foreign keys hold again: a row naming no run is refused, deleting a run deletes its rows, a finished serve session leaves no arrival behind")
    func runWrittenWithoutForeignKeys() throws {
        let dir = try scratchDirectory("fk")
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try ReportStore.open(path: dir.appendingPathComponent("t.sqlite").path)
        let recording = try Self.recording("xhr-json-post")
        try store.save(recording)
        let results = ReplayRunner(presets: Preset.builtIn, profile: Profile()).replay([recording])
        #expect(results.contains { !$0.findings.isEmpty })
        let run = RunRow(id: nil, startedAt: "", finishedAt: "", toolVersion: "t", profile: "p", ios: "18", simulator: false, presets: "p", label: nil, gitRevision: nil, recordingCount: 1, exchangeCount: 3)
        func count(_ table: String) throws -> Int { try store.writer.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM \(table)")! } }

        struct Interrupted: Error {}
        #expect(throws: Interrupted.self) {
            try store.writeRun(run) { writer in
                try writer.add(results)
                try writer.flush()
                throw Interrupted()
            }
        }
        for table in ["run", "finding", "outcome", "jar_event"] { #expect(try count(table) == 0, "\(table)") }

        let id = try store.saveRun(run, results: results)
        #expect(try count("finding") == results.reduce(0) { $0 + $1.findings.count })
        #expect(try store.writer.read { try String.fetchSet($0, sql: "SELECT DISTINCT recording_name FROM finding") } == [recording.name])
        try store.writer.write { db in
            #expect(try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") == true)
            #expect(throws: DatabaseError.self) {
                try db.execute(sql: "INSERT INTO finding (run_id, preset, code, severity, recording_name, sequence, method, url, rules, confidence, message, expected, actual) VALUES (999, 'p', 'BODY_LOST', 'error', 'r', 0, 'GET', 'u', '', 'source', '', '{}', '{}')")
            }
            try db.execute(sql: "DELETE FROM run WHERE id = ?", arguments: [id])
        }
        for table in ["finding", "outcome", "jar_event"] { #expect(try count(table) == 0, "\(table)") }

        let session = try store.beginServeSession(recordings: [recording.name], label: nil)
        var bodies: Set<String> = []
        try store.appendArrivals([ReportStore.ArrivalRecord(time: 0, method: "GET", target: "/", headers: [], body: Data(), recordingName: nil, sequence: nil, status: 404)], firstPosition: 0, session: session.id, storedBodies: &bodies)
        #expect(try store.finishServeSession(session.id, results: results, recordings: [recording], label: nil, toolVersion: "t") != nil)
        #expect(try count("pending_arrival") == 0 && count("serve_session") == 0 && count("arrival") == 1)
    }

    @Test("a run's rows are stored in its indexes' key order (recording, preset, sequence, code, by UTF-8 bytes) whatever order the replay hands them in")
    func rowsInKeyOrder() throws {
        let store = try ReportStore.inMemory()
        // Byte order, not the locale's: "Z" < "a" < "é".
        let recordings = ["é", "a", "Z"], presets = ["wk", "Wk", "urlprotocol"]
        var results: [RunResult] = []
        for recording in recordings {
            for preset in presets {
                let findings = (0..<3).reversed().flatMap { n in
                    [FindingCode.cookieMissing, FindingCode.bodyLost].map { code in
                        Finding(code: code, severity: Severity.error, preset: preset, recording: recording, sequence: n, method: "POST",
                            url: "https://a.example/\(n)", subject: nil, rules: ["P1"], confidence: Confidence.source, expected: [:], actual: [:], detail: "")
                    }
                }
                let outcome = Outcome(sequence: 0, deliveredMethod: "GET", deliveredURL: "https://a.example/", deliveredBody: .empty)
                results.append(RunResult(recording: recording, preset: preset, outcomes: [outcome], findings: findings))
            }
        }
        let run = RunRow(id: nil, startedAt: "", finishedAt: "", toolVersion: "t", profile: "p", ios: "18", simulator: false, presets: presets.joined(separator: ","), label: nil, gitRevision: nil, recordingCount: 3, exchangeCount: 3)
        let id = try store.saveRun(run, results: results)
        let findings = try store.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT recording_name, preset, sequence, code FROM finding WHERE run_id = ? ORDER BY id", arguments: [id])
                .map { "\($0[0] as String)/\($0[1] as String)/\($0[2] as Int)/\($0[3] as String)" }
        }
        var expected: [String] = []
        for recording in ["Z", "a", "é"] {
            for preset in ["Wk", "urlprotocol", "wk"] {
                for n in 0..<3 { expected += ["BODY_LOST", "COOKIE_MISSING"].map { "\(recording)/\(preset)/\(n)/\($0)" } }
            }
        }
        #expect(findings == expected)
        let outcomes = try store.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT recording_name, preset FROM outcome WHERE run_id = ? ORDER BY id", arguments: [id]).map { "\($0[0] as String)/\($0[1] as String)" }
        }
        #expect(outcomes == ["Z", "a", "é"].flatMap { r in ["Wk", "urlprotocol", "wk"].map { "\(r)/\($0)" } })
        #expect(Set(try store.findings(run: id)) == Set(results.flatMap(\.findings)))
    }

    @Test("a recording's results handed over apart are written together, presets in byte order, equal keys in the order given")
    func keyOrderJoinsApartResults() {
        let given = [("a", "wk"), ("Z", "p"), ("a", "Wk"), ("a", "Wk"), ("é", "p"), ("Z", "a")]
        let results = given.map { RunResult(recording: $0.0, preset: $0.1, outcomes: [], findings: []) }
        #expect(ReportStore.keyOrder(of: results) == [5, 1, 2, 3, 0, 4])
        // Recordings with the same presets in the same order share their order; one with
        // another order gets its own.
        let shared = [("r1", "b"), ("r1", "a"), ("r2", "b"), ("r2", "a"), ("r3", "a"), ("r3", "b"), ("r0", "b"), ("r0", "a")]
        let sharedResults = shared.map { RunResult(recording: $0.0, preset: $0.1, outcomes: [], findings: []) }
        #expect(ReportStore.keyOrder(of: sharedResults) == [7, 6, 1, 0, 3, 2, 4, 5])
        #expect(ReportStore.byteOrder(["é", "a", "Z", "a"]) == [2, 1, 3, 0])
    }

    @Test("blobs, empty blobs, nulls and text bound across several rows of one statement read back as bound", arguments: [1, 3, 7])
    func blobsAcrossRows(count: Int) throws {
        let store = try ReportStore.inMemory()
        let rows: [(Data?, String)] = (0..<count).map { n in (n % 3 == 2 ? nil : Data(repeating: UInt8(n), count: n % 3 == 1 ? 0 : n + 1), "t\(n)") }
        let read = try store.writer.write { db -> [Row] in
            try db.execute(sql: "CREATE TEMP TABLE b (content BLOB, label TEXT)")
            let insert = try RawInsert(db, head: "INSERT INTO b (content, label) VALUES", tuple: "(?, ?)", rowsPerStatement: 3)
            for (content, label) in rows {
                if let content { insert.bind(1, content) }
                insert.bind(2, label)
                try insert.run()
            }
            try insert.flush()
            return try Row.fetchAll(db, sql: "SELECT content, label FROM b ORDER BY rowid")
        }
        #expect(read.map { $0[0] as Data? } == rows.map(\.0))
        #expect(read.map { $0[1] as String } == rows.map(\.1))
    }

    @Test("rows holding a mebibyte of blobs are written before their statement fills, and a value of a row still waiting can be changed")
    func largeBlobsWrittenEarly() throws {
        let store = try ReportStore.inMemory()
        let big = Data(repeating: 7, count: RawInsert.maxPendingBlobBytes / 2 + 1)
        let read = try store.writer.write { db -> [Row] in
            try db.execute(sql: "CREATE TEMP TABLE b (content BLOB, n INTEGER)")
            let insert = try RawInsert(db, head: "INSERT INTO b (content, n) VALUES", tuple: "(?, ?)", rowsPerStatement: 16)
            var waiting: [Int] = []
            for n in 0..<5 {
                insert.bind(1, n == 4 ? Data([1]) : big)
                insert.bind(2, n)
                try insert.run()
                waiting.append(insert.pendingCount)
            }
            // The second large blob takes the rows past a mebibyte: both are written.
            #expect(waiting == [1, 0, 1, 0, 1])
            insert.setPending(row: 0, 2, 40)
            try insert.flush()
            return try Row.fetchAll(db, sql: "SELECT length(content), n FROM b ORDER BY rowid")
        }
        #expect(read.map { $0[0] as Int } == [big.count, big.count, big.count, big.count, 1])
        #expect(read.map { $0[1] as Int } == [0, 1, 2, 3, 40])
    }

    @Test("blobs bound in place reach their own rows and columns, byte for byte, whatever their size")
    func blobsBoundInPlace() throws {
        let store = try ReportStore.inMemory()
        // Empty, inline-sized, slices of a larger buffer and heap-sized, in two columns a
        // row binds in reverse order.
        let whole = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        let blobs: [Data] = (0..<11).map { n in
            switch n % 4 {
            case 0: Data()
            case 1: Data([UInt8(n), 1, 2, 3])
            case 2: whole[(n * 1000)..<(n * 1000 + 40_000)]
            default: Data(whole.prefix(100_000 + n))
            }
        }
        let read = try store.writer.write { db -> [Row] in
            try db.execute(sql: "CREATE TEMP TABLE b (first BLOB, second BLOB, n INTEGER)")
            let insert = try RawInsert(db, head: "INSERT INTO b (first, second, n) VALUES", tuple: "(?, ?, ?)", rowsPerStatement: 4)
            for n in 0..<blobs.count {
                insert.bind(3, n)
                insert.bind(2, blobs[(n + 5) % blobs.count])
                insert.bind(1, blobs[n])
                try insert.run()
            }
            try insert.flush()
            return try Row.fetchAll(db, sql: "SELECT first, second, n FROM b ORDER BY rowid")
        }
        #expect(read.count == blobs.count)
        for row in read {
            let n: Int = row[2]
            #expect((row[0] as Data? ?? Data()) == blobs[n], "row \(n), first")
            #expect((row[1] as Data? ?? Data()) == blobs[(n + 5) % blobs.count], "row \(n), second")
        }
    }
}

@Suite("Header JSON as stored")
struct HeaderJSONTests {
    @Test("every byte a header can hold survives the hand-written JSON, and JSONSerialization reads it the same")
    func roundTrip() throws {
        var controls = ""
        for c in 0..<0x20 { controls.unicodeScalars.append(Unicode.Scalar(UInt8(c))) }
        let headers: HeaderList = [
            HeaderField("X-Quote", #"a "quoted" \ value"#),
            HeaderField("X-Controls", controls + "\u{7F}"),
            HeaderField("X-Unicode", "中文 é 🍪"),
            HeaderField("", ""),
        ]
        let text = ReportStore.encodeHeaders(headers)
        #expect(try ReportStore.decodeHeaders(text) == headers)
        let parsed = try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String]])
        #expect(parsed.map { HeaderField($0[0], $0[1]) } == Array(headers))
        #expect(text.contains(#"\u001f"#) && text.contains(#"\n"#) && text.contains(#"\""#))
    }

    @Test("header JSON from other writers reads as a JSON reader reads it: escapes of every kind, pairs short or long, whitespace; a text that is not JSON is refused")
    func otherWriters() throws {
        // What JSONEncoder wrote before the hand-written form: escaped slashes, \u escapes,
        // a surrogate pair for a character beyond the first plane.
        #expect(try ReportStore.decodeHeaders(#"[["Referer","https:\/\/a.example\/x"],["X-Cookie","\ud83c\udf6a \u00e9\b\f"]]"#)
            == [HeaderField("Referer", "https://a.example/x"), HeaderField("X-Cookie", "🍪 é\u{08}\u{0C}")])
        // A pair of one string, or of three: the name, and the value or nothing.
        #expect(try ReportStore.decodeHeaders(#"[["Only"],["A","1","extra"],[]]"#) == [HeaderField("Only", ""), HeaderField("A", "1"), HeaderField("", "")])
        // Whitespace between tokens, as a pretty-printing writer leaves it.
        #expect(try ReportStore.decodeHeaders("[ [\"A\", \"1\"],\n [\"B\", \"2\"] ]") == [HeaderField("A", "1"), HeaderField("B", "2")])
        #expect(try ReportStore.decodeHeaders("[]") == [])
        // The store's own forms are read by hand; a pretty-printed one is left to JSONDecoder.
        #expect(StoredJSONReader.read(#"[["A","1\n\u001f"],["B"]]"#, { $0.headerList() }) == [HeaderField("A", "1\n\u{1F}"), HeaderField("B", "")])
        #expect(StoredJSONReader.read(#"["x","\ud83c\udf6a"]"#, { $0.stringList() }) == ["x", "🍪"])
        #expect(StoredJSONReader.read(#"{"cookie":"a","value":"\"b\""}"#, { $0.stringObject() })?.map { "\($0)=\($1)" } == ["cookie=a", #"value="b""#])
        #expect(StoredJSONReader.read("[ [\"A\", \"1\"] ]", { $0.headerList() }) == nil)
        #expect(StoredJSONReader.read(#"["x"] "#, { $0.stringList() }) == nil)
        for broken in [#"[["A","1"]"#, #"[["A","1\q"]]"#, #"[["A",1]]"#, "", #"[["A","\ud83c"]]"#] {
            #expect(throws: (any Error).self, "\(broken)") { try ReportStore.decodeHeaders(broken) }
        }
    }

}
