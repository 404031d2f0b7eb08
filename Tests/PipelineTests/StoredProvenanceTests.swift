import CookieJar
import Findings
import Foundation
import GRDB
import Testing
import TrafficModel
import WebViewEmulation
@testable import Pipeline
@testable import ReportStore

/// A recording's cookie provenance is walked once, at import, and stored whole (v24): a
/// recording replayed by name loads it, and what it loads is what walking the recording
/// read back gives.
@Suite("Stored cookie provenance")
struct StoredProvenanceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let pagexray = root.appendingPathComponent("../shared/conformance/har-pagexray/test/files").standardizedFileURL
    /// Whether PageXray's real exports are beside the project: the counts below ask more of
    /// a run that has them (a fresh clone elsewhere has only the bundled recordings).
    static var present: Bool { FileManager.default.fileExists(atPath: pagexray.path) }

    /// Every bundled recording file, and real HARs with many cookies when the conformance
    /// folder is beside the project.
    static var files: [String] {
        let bundled = (try? ImportPipeline.SourceFile.expandingFolders([root.appendingPathComponent("Recordings").path])) ?? []
        let real = ["www.nytimes.com.har", "requests/expressen.har", "responseCodes/304.har", "redirect/mytoys.de.har", "contentTypes/ferguson.har"]
            .map { pagexray.appendingPathComponent($0).path }.filter { FileManager.default.fileExists(atPath: $0) }
        return bundled + real
    }

    /// Imports `files`, streamed (no recording kept in hand) or read whole, into a new store.
    static func imported(_ files: [String], whole: Bool, redact: SecretNames? = nil) throws -> ReportStore {
        let store = try ReportStore.inMemory()
        for file in files {
            _ = try ImportPipeline().importFile(file, name: nil, replace: true, redact: redact, into: store, inHand: whole ? { _, _ in } : nil)
        }
        return store
    }

    /// How much of a provenance there is to get wrong: cookies sent, inferences, and
    /// inferences with a write time bound or attributes beyond the defaults.
    static func tally(_ p: CookieProvenance) -> [Int] {
        let events = p.inferred.joined()
        return [p.sent.joined().count, events.count, events.filter { $0.writtenBy != nil }.count, events.filter { $0.windowStart != nil }.count, events.filter { !$0.cookie.hostOnly }.count]
    }

    @Test("for every bundled recording and real HARs, streamed and read whole, the provenance loaded equals the walk of the recording read back; a changed row does not")
    func loadedIsWalked() throws {
        let files = Self.files
        #expect(files.count >= (Self.present ? 40 : 35))
        var totals = [0, 0, 0, 0, 0]
        for whole in [false, true] {
            let store = try Self.imported(files, whole: whole)
            for name in try store.recordingNames() {
                let readBack = try #require(try store.recording(named: name))
                let walked = CookieProvenance(recording: readBack)
                let loaded = try #require(try store.provenance(named: name), "\(name)")
                #expect(loaded == walked, "\(name), \(whole ? "read whole" : "streamed")")
                let together = try #require(try store.recordingWithProvenance(named: name))
                #expect(together.recording == readBack && together.provenance == walked, "\(name)")
                totals = zip(totals, Self.tally(loaded)).map { $0 + $1 }
            }
            // The comparison sees a value, and an inference's attribute, that changed.
            let changed = try #require(try store.writer.read { try String.fetchOne($0, sql: "SELECT r.name FROM recording r JOIN cookie_inference i ON i.recording_id = r.id ORDER BY r.name LIMIT 1") })
            let walked = CookieProvenance(recording: try #require(try store.recording(named: changed)))
            try store.writer.write { try $0.execute(sql: "UPDATE cookie_inference SET secure = NOT secure WHERE recording_id = (SELECT id FROM recording WHERE name = ?)", arguments: [changed]) }
            #expect(try store.provenance(named: changed) != walked)
            try store.writer.write { try $0.execute(sql: "UPDATE cookie_sent SET value = value || 'x' WHERE set_by IS NOT NULL") }
            #expect(try store.recordingNames().contains { name in try store.provenance(named: name) != CookieProvenance(recording: try #require(try store.recording(named: name))) })
        }
        // Enough of every part to compare: the bundled flows alone have cookies sent and
        // inferred; the real exports add write times, windows and domain cookies.
        #expect(Self.present ? totals.allSatisfy { $0 > 0 } && totals[0] > 1_000 : totals[0] > 100 && totals[1] > 0, "\(totals)")
    }

    @Test("with --redact, streamed and read whole, the rows hold the stand-ins the headers hold, and load as the walk of the redacted recording read back")
    func redacted() throws {
        let files = Self.files.filter { !$0.contains("expressen") && !$0.contains("304") }
        for whole in [false, true] {
            let store = try Self.imported(files, whole: whole, redact: .default)
            var values = 0
            for name in try store.recordingNames() {
                let loaded = try #require(try store.provenance(named: name), "\(name)")
                #expect(loaded == CookieProvenance(recording: try #require(try store.recording(named: name))), "\(name), \(whole ? "read whole" : "streamed")")
                let cookies = loaded.sent.joined().map(\.value) + loaded.inferred.joined().map(\.cookie.value)
                #expect(cookies.allSatisfy { $0.hasPrefix("redacted-") }, "\(name)")
                values += cookies.count
            }
            #expect(values > (Self.present ? 500 : 50))
        }
    }

    @Test("a recording stored before v24 loads no provenance: it is walked, as before, until the pipeline's open walks it once and stores it whole")
    func storedBefore() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-provenance-v23-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let files = ["script-cookie-api.har", "login-redirect.har", "browser-form-redirect.pcap", "large-text-body.har"].map { Self.root.appendingPathComponent("Recordings/\($0)").path }
        let current = dir.appendingPathComponent("current.sqlite").path
        let store = try ReportStore.open(path: current)
        for file in files { _ = try ImportPipeline().importFile(file, name: nil, replace: false, into: store) }
        let names = try store.recordingNames()
        // The same rows in a database at v23: what the version before stored.
        let old = dir.appendingPathComponent("old.sqlite").path
        try Self.copyAtV23(from: current, to: old)
        let reopened = try ReportStore.open(path: old)
        let withCookies = try names.filter { !(try store.detail(named: $0)?.cookies.joined().isEmpty ?? true) }
        #expect(withCookies.count == 3)
        #expect(try reopened.recordingsAwaitingProvenance() == withCookies)
        let source = try RecordingSource(names, database: old)
        let loaded = try source.load(source.resolve(importer: ImportPipeline(), store: reopened, skipping: nil), from: reopened)
        for recording in loaded.recordings {
            let walked = CookieProvenance(recording: recording)
            #expect(try reopened.provenance(named: recording.name) == (withCookies.contains(recording.name) ? nil : walked), "\(recording.name)")
            #expect(loaded.provenances[recording.name] == (withCookies.contains(recording.name) ? nil : walked), "\(recording.name)")
            #expect(ReplayInput(recording: recording, provenance: loaded.provenances[recording.name]).provenance == walked, "\(recording.name)")
        }
        // The pipeline's open walks each once; from then on it loads.
        let backfilled = try ReportStore.openForPipeline(path: old)
        #expect(try backfilled.recordingsAwaitingProvenance().isEmpty)
        for name in names {
            let walked = CookieProvenance(recording: try #require(try backfilled.recording(named: name)))
            #expect(try backfilled.provenance(named: name) == walked, "\(name)")
            #expect(try backfilled.provenance(named: name) == store.provenance(named: name), "\(name)")
        }
    }

    /// A database at v23 holding `current`'s rows, every column v23 has.
    static func copyAtV23(from current: String, to old: String) throws {
        let queue = try DatabaseQueue(path: old)
        try Schema.migrator.migrate(queue, upTo: "v23: cells whose preset the recording never exercised")
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "ATTACH DATABASE ? AS current", arguments: [current])
            for table in ["body", "recording", "exchange", "diagnostic", "websocket_message", "cookie_sent", "cookie_inference"] {
                let columns = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?, 'main')", arguments: [table]).map(\.quotedDatabaseIdentifier).joined(separator: ", ")
                try db.execute(sql: "INSERT INTO main.\(table) (\(columns)) SELECT \(columns) FROM current.\(table)")
            }
            try db.execute(sql: "DETACH DATABASE current")
        }
        try queue.close()
    }

    @Test("a replay by name, with the provenance loaded, gives the findings and outcomes of a replay of the files, walked")
    func replayByName() throws {
        let files = Self.files.filter { !$0.contains("expressen") && !$0.contains("304") && !$0.contains("ferguson") }
        var runner = ReplayRunner(presets: Preset.builtIn, profile: Profile())
        let fromFiles = try files.flatMap { try ImportPipeline().read($0, name: nil) }
        try runner.setScenarios(nil, for: fromFiles)
        let walked = runner.replay(fromFiles)

        let store = try Self.imported(files, whole: false)
        let names = fromFiles.map(\.name)
        let source = try RecordingSource(names, database: "test")
        let loaded = try source.load(source.resolve(importer: ImportPipeline(), store: store, skipping: nil), from: store)
        #expect(loaded.recordings.map(\.name) == names)
        #expect(Set(loaded.provenances.keys) == Set(names), "every recording's provenance is loaded, none walked")
        runner.provenances = loaded.provenances
        let byName = runner.replay(loaded.recordings)
        #expect(byName.count == walked.count)
        for (a, b) in zip(walked, byName) {
            #expect(a.recording == b.recording && a.preset == b.preset)
            #expect(a.findings == b.findings, "\(a.recording) \(a.preset)")
            #expect(a.outcomes == b.outcomes, "\(a.recording) \(a.preset)")
        }
        #expect(walked.contains { !$0.findings.isEmpty })
    }
}
