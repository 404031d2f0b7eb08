import CookieJar
import Foundation
import Pipeline
import GRDB
import HARFormat
import Testing
import TrafficModel
import WebViewEmulation
@testable import ReportStore

@Suite("Shards, merge and the SQL views")
struct MergeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let names = ["fetch-blob-upload", "login-redirect", "script-cookie-api", "xhr-json-post"]

    static func recording(_ name: String) throws -> Recording {
        try HARImporter().recording(from: Data(contentsOf: root.appendingPathComponent("Recordings/\(name).har")), file: name, name: name)
    }

    static func shard(_ names: [String], in dir: URL, _ file: String, profile: Profile = Profile()) throws -> String {
        let path = dir.appendingPathComponent(file).path
        let store = try ReportStore.open(path: path)
        let recordings = try names.map(recording)
        for r in recordings { try store.save(r) }
        _ = try ReplayRunner(presets: Preset.builtIn, profile: profile).run(recordings, in: store, label: "nightly", toolVersion: "t", gitRevision: nil)
        return path
    }

    @Test("merging shards gives the run an unsharded replay gives")
    func mergeEqualsWhole() throws {
        let dir = try scratchDirectory("merge")
        defer { try? FileManager.default.removeItem(at: dir) }
        let a = try Self.shard(Array(Self.names.prefix(2)), in: dir, "a.sqlite")
        let b = try Self.shard(Array(Self.names.suffix(2)), in: dir, "b.sqlite")
        let whole = try Self.shard(Self.names, in: dir, "whole.sqlite")
        let merged = try ReportStore.open(path: dir.appendingPathComponent("all.sqlite").path)
        let summary = try merged.merge(shards: [a, b])
        #expect(summary.recordings == 4 && summary.duplicates.isEmpty)
        let wholeStore = try ReportStore.open(path: whole)
        let expected = try wholeStore.findings(run: try #require(try wholeStore.run(id: nil)?.id))
        let got = try merged.findings(run: summary.runID)
        #expect(Set(got.map(\.identity)) == Set(expected.map(\.identity)))
        #expect(got.count == expected.count)
        #expect(try merged.recordingNames(run: summary.runID) == Self.names)
        #expect(try merged.run(id: summary.runID)?.label == "nightly")
        #expect(try !merged.jarEvents(run: summary.runID, recording: "login-redirect", preset: "urlprotocol-naive").isEmpty)
        // Each recording's cookie provenance comes whole, as the shard stored it (v24).
        for name in Self.names {
            #expect(try merged.provenance(named: name) == CookieProvenance(recording: try #require(try merged.recording(named: name))), "\(name)")
        }
    }

    @Test("a shard's recording whose provenance waits to be walked (stored before v24) still waits once merged, and loads none")
    func pendingProvenance() throws {
        let dir = try scratchDirectory("merge")
        defer { try? FileManager.default.removeItem(at: dir) }
        let a = try Self.shard(["script-cookie-api"], in: dir, "a.sqlite")
        // What v24 leaves of a recording stored before it: rows without values, listed as pending.
        try ReportStore.open(path: a).writer.write { db in
            try db.execute(sql: "UPDATE cookie_sent SET value = NULL")
            try db.execute(sql: "INSERT INTO provenance_pending SELECT id FROM recording")
        }
        let merged = try ReportStore.open(path: dir.appendingPathComponent("all.sqlite").path)
        _ = try merged.merge(shards: [a])
        #expect(try merged.recordingsAwaitingProvenance() == ["script-cookie-api"])
        #expect(try merged.provenance(named: "script-cookie-api") == nil)
        #expect(try merged.writer.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM cookie_sent") } ?? 0 > 0)
    }

    @Test("shards of different profiles do not merge, and the output is left as it was")
    func mismatch() throws {
        let dir = try scratchDirectory("merge")
        defer { try? FileManager.default.removeItem(at: dir) }
        let a = try Self.shard(["xhr-json-post"], in: dir, "a.sqlite")
        let b = try Self.shard(["login-redirect"], in: dir, "b.sqlite", profile: Profile(ios: IOSVersion(11, 0)))
        let merged = try ReportStore.open(path: dir.appendingPathComponent("all.sqlite").path)
        let error = try #require(throws: ReportStore.MergeError.self) { try merged.merge(shards: [a, b]) }
        #expect(error.file == b)
        #expect(try merged.run(id: nil) == nil)
        #expect(try merged.recordingNames().isEmpty)
    }

    @Test("the views: findings per preset and code, new findings of one run against another, the matrix")
    func views() throws {
        let store = try ReportStore.inMemory()
        let recordings = try ["script-cookie-api", "xhr-json-post"].map(Self.recording)
        for r in recordings { try store.save(r) }
        let base = Preset.builtIn.filter { ["plain", "urlprotocol-naive", "urlprotocol-forwarded", "schemehandler-naive"].contains($0.name) }
        let device = try ReplayRunner(presets: base, profile: Profile()).run(recordings, in: store, label: nil, toolVersion: "t", gitRevision: nil)
        let simulator = try ReplayRunner(presets: base, profile: Profile(simulator: true)).run(recordings, in: store, label: nil, toolVersion: "t", gitRevision: nil)
        try store.writer.read { db in
            let perCode = try Int.fetchOne(db, sql: "SELECT findings FROM findings_per_preset_code WHERE run_id = ? AND preset = 'urlprotocol-naive' AND code = 'BODY_LOST'", arguments: [device])
            #expect(perCode == 1)
            // The simulator adds JAR_DIVERGED for the script-set cookie under every preset.
            let new = try Row.fetchAll(db, sql: "SELECT preset, code FROM new_finding WHERE run_id = ? AND baseline_run_id = ? ORDER BY preset", arguments: [simulator, device])
            #expect(new.map { "\($0["preset"] as String):\($0["code"] as String)" } == base.map(\.name).sorted().map { "\($0):JAR_DIVERGED" })
            let fixed = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM new_finding WHERE run_id = ? AND baseline_run_id = ?", arguments: [device, simulator])
            #expect(fixed == 0)
            let cell = try Row.fetchOne(db, sql: "SELECT errors, warnings FROM run_matrix WHERE run_id = ? AND recording_name = 'xhr-json-post' AND preset = 'urlprotocol-naive'", arguments: [device])
            #expect(cell?["errors"] == 1 && cell?["warnings"] == 0)
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM run_matrix WHERE run_id = ?", arguments: [device]) == 2 * base.count)
        }
    }
}
