import Foundation
import GRDB
import HARFormat
import Testing
import TrafficModel
@testable import ReportStore

/// `record -i` imports into a scratch database while it captures and copies the
/// recording in when it stops (`copyRecordings`): what is copied must read back as what
/// was stored, cookie provenance included.
@Suite("Recordings copied from another database")
struct CopyRecordingTests {
    static func provenanceRows(_ store: ReportStore, _ name: String) throws -> [[String]] {
        try store.writer.read { db in
            let id = try Int64.fetchOne(db, sql: "SELECT id FROM recording WHERE name = ?", arguments: [name])
            let sent = try Row.fetchAll(db, sql: "SELECT sequence, position, name, provenance, set_by, set_by_hop FROM cookie_sent WHERE recording_id = ? ORDER BY sequence, position", arguments: [id])
            let inferred = try Row.fetchAll(db, sql: "SELECT sequence, position, name, kind, domain, path, window_start FROM cookie_inference WHERE recording_id = ? ORDER BY sequence, position", arguments: [id])
            return (sent + inferred).map { row in row.databaseValues.map(\.description) }
        }
    }

    @Test("a recording copied in reads back as stored, with its cookie provenance; a name taken is refused without --replace and replaced with it")
    func copied() throws {
        let dir = try scratchDirectory("copy")
        defer { try? FileManager.default.removeItem(at: dir) }
        let scratchPath = dir.appendingPathComponent("scratch.sqlite").path
        let scratch = try ReportStore.open(path: scratchPath, newFile: .rollbackJournal)
        var names: [String] = []
        for name in ["login-redirect", "script-cookie-api"] {
            let recording = try MergeTests.recording(name)
            try scratch.save(recording)
            names.append(name)
        }
        let store = try ReportStore.open(path: dir.appendingPathComponent("main.sqlite").path)
        let results = try store.copyRecordings(named: names, from: scratchPath, replace: false)
        #expect(results.allSatisfy { if case .imported(_, false) = $0 { true } else { false } })
        for name in names {
            let original = try #require(try scratch.recording(named: name))
            let copy = try #require(try store.recording(named: name))
            #expect(copy == original, "\(name)")
            #expect(try Self.provenanceRows(store, name) == Self.provenanceRows(scratch, name), "\(name)")
            #expect(try !Self.provenanceRows(store, name).isEmpty, "\(name)")
        }

        #expect(throws: ReportStore.NameTaken.self) { try store.copyRecordings(named: ["login-redirect"], from: scratchPath, replace: false) }
        #expect(try store.recordingNames() == names.sorted())
        let again = try store.copyRecordings(named: ["login-redirect"], from: scratchPath, replace: true)
        #expect(again.count == 1 && { if case .imported(_, true) = again[0] { true } else { false } }())
        #expect(try store.recording(named: "login-redirect") == scratch.recording(named: "login-redirect"))
    }
}
