import Foundation
import GRDB
import Testing
import TrafficModel
import WebViewEmulation
@testable import Pipeline
@testable import ReportStore

@Suite("Import pipeline")
struct ImportPipelineTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("the format is told by content, and a file that is none is refused naming the file and the offset")
    func formats() throws {
        #expect(try ImportPipeline.SourceFile(path: Self.root.appendingPathComponent("Recordings/login-redirect.har").path).format == .har)
        #expect(try ImportPipeline.SourceFile(path: Self.root.appendingPathComponent("Recordings/browser-xhr-fetch.pcap").path).format == .pcap)
        let bogus = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-bogus-\(getpid()).txt")
        try Data("hello".utf8).write(to: bogus)
        defer { try? FileManager.default.removeItem(at: bogus) }
        #expect(throws: InputError(file: bogus.path, place: "offset 0", problem: "not a recording h5replay reads", fix: "expected HAR JSON, pcap or pcapng")) {
            try ImportPipeline.SourceFile(path: bogus.path)
        }
    }

    @Test("requests from no browser engine (NC1) are counted on the recording, read whole or streamed into the store alike")
    func nativeRequestDiagnostics() throws {
        let charles = RealWorldCorpusTests.conformance.appendingPathComponent("har-mitmproxy/test/mitmproxy/data/har_files/charles.har").path
        var files = [(Self.root.appendingPathComponent("Recordings/native-api-login.har").path, DiagnosticCode.nativeRequests, "2 of 4 request(s)")]
        if FileManager.default.fileExists(atPath: charles) { files.append((charles, .noPageRequests, "none of the 1 request(s)")) }
        for (path, code, start) in files {
            let whole = try ImportPipeline().read(path, name: "r")[0]
            let said = try #require(whole.diagnostics.first { $0.code == code.rawValue }, "\(path)")
            #expect(said.severity == code.severity && said.message.hasPrefix(start), "\(path): \(said.message)")
            let store = try ReportStore.inMemory()
            let imported = try ImportPipeline().importFile(path, name: "r", replace: false, into: store)
            #expect(imported[0].0.diagnostics.contains(said), "\(path)")
            #expect(try #require(try store.recording(named: "r")).diagnostics.contains(said), "\(path)")
        }
        // A flow of the page alone says nothing of the kind.
        #expect(try ImportPipeline().read(Self.root.appendingPathComponent("Recordings/login-redirect.har").path, name: "r")[0].diagnostics.isEmpty)
    }

    @Test("a recording stored before provenance was kept gets it when the pipeline opens the store, not from a migration")
    func provenanceBackfill() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-backfill-\(getpid()).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let store = try ReportStore.open(path: path)
        _ = try ImportPipeline().importFile(Self.root.appendingPathComponent("Recordings/script-cookie-api.har").path, name: nil, replace: false, into: store)
        let before = try #require(try store.detail(named: "script-cookie-api")).cookies
        #expect(before.joined().count > 0)
        // What an old database looks like to migration v7: no provenance rows, listed as pending.
        try store.writer.write { db in
            try db.execute(sql: "DELETE FROM cookie_sent")
            try db.execute(sql: "DELETE FROM cookie_inference")
            try db.execute(sql: "INSERT INTO provenance_pending SELECT id FROM recording")
        }
        #expect(try store.recordingsAwaitingProvenance() == ["script-cookie-api"])
        let reopened = try ReportStore.openForPipeline(path: path)
        #expect(try reopened.recordingsAwaitingProvenance().isEmpty)
        #expect(try #require(try reopened.detail(named: "script-cookie-api")).cookies == before)
    }

    @Test("a hundred files, HAR and pcap mixed, import in file order over several read-ahead batches, and replay over several written slices stores every one")
    func manyFiles() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-many-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let sources = ["xhr-json-post.har", "login-redirect.har", "browser-xhr-fetch.pcap"]
        var paths: [String] = []
        for n in 0..<100 {
            let source = sources[n % sources.count]
            let path = dir.appendingPathComponent(String(format: "r%03d.", n) + (source as NSString).pathExtension).path
            try FileManager.default.copyItem(atPath: Self.root.appendingPathComponent("Recordings/" + source).path, toPath: path)
            paths.append(path)
        }
        let store = try ReportStore.inMemory()
        let imported = try ImportPipeline().importFiles(paths, replace: false, into: store)
        #expect(imported.map(\.0.name) == (0..<100).map { String(format: "r%03d", $0) })
        #expect(try store.recordingNames().count == 100)
        let recordings = try store.recordingNames().map { try #require(try store.recording(named: $0)) }
        let runner = ReplayRunner(presets: Array(Preset.builtIn.prefix(2)), profile: Profile())
        let (row, results) = try runner.runKeeping(recordings, in: store, label: nil, toolVersion: "t", gitRevision: nil)
        #expect(results.count == 200)
        let outcomes = try store.writer.read { try Int.fetchOne($0, sql: "SELECT COUNT(DISTINCT recording_name) FROM outcome WHERE run_id = ?", arguments: [row.id])! }
        #expect(outcomes == 100)
        #expect(try store.findings(run: row.id!).count == results.reduce(0) { $0 + $1.findings.count })
    }
}
