import CookieJar
import Foundation
import GRDB
import HTTPWire
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
        #expect(throws: InputError(file: bogus.path, place: "offset 0", problem: "not a recording h5replay reads", fix: "expected HAR JSON, pcap or pcapng, or one of them compressed with gzip or zlib")) {
            try ImportPipeline.SourceFile(path: bogus.path)
        }
    }

    /// `gzip -c FILE` into the temporary folder, named `name`.
    static func gzipped(_ file: String, as name: String) throws -> String {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-gz-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let path = out.appendingPathComponent(name).path
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gzip.arguments = ["-c", file]
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        gzip.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try gzip.run()
        gzip.waitUntilExit()
        #expect(gzip.terminationStatus == 0)
        return path
    }

    @Test("a HAR or capture compressed whole (.har.gz, .pcap.gz) imports as the file itself, named as it, and leaves no inflated copy")
    func gzipCompressed() throws {
        for (file, format) in [("login-redirect.har", ImportPipeline.SourceFile.Format.har), ("browser-xhr-fetch.pcap", .pcap)] {
            let plain = Self.root.appendingPathComponent("Recordings/\(file)").path
            let gz = try Self.gzipped(plain, as: file + ".gz")
            defer { try? FileManager.default.removeItem(atPath: (gz as NSString).deletingLastPathComponent) }
            let source = try ImportPipeline.SourceFile(path: gz)
            #expect(source.format == format && source.compression == .gzip && source.defaultName == (file as NSString).deletingPathExtension)
            let readable = try source.readable(limit: 1 << 30)
            #expect(readable.path != gz && FileManager.default.fileExists(atPath: readable.path))
            readable.discard()
            #expect(!FileManager.default.fileExists(atPath: (readable.path as NSString).deletingLastPathComponent))

            let expected = try ImportPipeline().read(plain, name: "r")[0]
            let read = try ImportPipeline().read(gz, name: "r")[0]
            #expect(read.exchanges == expected.exchanges && read.sourcePath == gz)
            // Streamed into the store: the same exchanges, and the file named as given.
            let store = try ReportStore.inMemory()
            let imported = try ImportPipeline().importFile(gz, name: nil, replace: false, into: store)
            #expect(imported.map(\.0.name) == [source.defaultName])
            let stored = try #require(try store.recording(named: source.defaultName))
            #expect(stored.exchanges.map(\.request.url) == expected.exchanges.map(\.request.url))
            #expect(stored.exchanges.map { $0.response.detachedBody ?? BodyFingerprint($0.response.body) } == expected.exchanges.map { $0.response.detachedBody ?? BodyFingerprint($0.response.body) })
            #expect(stored.sourcePath == gz)
            // Cut short (a download interrupted): a capture keeps what inflated before the
            // cut, as a truncated pcap does, and says so; half a HAR is refused.
            let bytes = try Data(contentsOf: URL(fileURLWithPath: gz))
            let cut = (gz as NSString).deletingLastPathComponent + "/cut-" + file + ".gz"
            try bytes.prefix(bytes.count * 3 / 4).write(to: URL(fileURLWithPath: cut))
            if format == .pcap {
                let partial = try ImportPipeline().read(cut, name: "r")[0]
                #expect(partial.diagnostics.first?.code == DiagnosticCode.captureTruncated.rawValue)
                #expect(partial.diagnostics.first?.message.hasPrefix("\(cut): the gzip data ends early, after \(bytes.count * 3 / 4) compressed bytes") == true)
                #expect(partial.exchanges.count < expected.exchanges.count && expected.exchanges.map(\.request.url).starts(with: partial.exchanges.map(\.request.url)))
                let cutStore = try ReportStore.inMemory()
                let stored = try ImportPipeline().importFile(cut, name: "r", replace: false, into: cutStore)
                #expect(stored[0].0.diagnostics.first?.code == DiagnosticCode.captureTruncated.rawValue && stored[0].0.exchangeCount == partial.exchanges.count)
            } else {
                #expect(throws: InputError.self) { try ImportPipeline().read(cut, name: "r") }
            }
            // A folder's compressed recordings are its recordings.
            #expect(try ImportPipeline.SourceFile.expandingFolders([(gz as NSString).deletingLastPathComponent]) == [cut, gz].sorted())
        }
    }

    @Test("mitmproxy's .zhar (its HAR through zlib) imports; a compressed file that is no recording, cut or too large is refused naming it")
    func zlibCompressed() throws {
        let zhar = RealWorldCorpusTests.conformance.appendingPathComponent("har-mitmproxy/test/mitmproxy/data/flows/compressed.zhar").path
        if FileManager.default.fileExists(atPath: zhar) {
            let source = try ImportPipeline.SourceFile(path: zhar)
            #expect(source.format == .har && source.compression == .zlib)
            let recording = try ImportPipeline().read(zhar, name: nil)[0]
            #expect(recording.name == "compressed")
            #expect(recording.exchanges.map { "\($0.request.method) \($0.request.url) \($0.response.status)" } == ["GET https://example.com/ 200", "POST https://httpbin.org/post 200"])
            #expect(recording.exchanges[1].request.bodyFingerprint.length == 23)
        }
        let har = Self.root.appendingPathComponent("Recordings/login-redirect.har").path
        let gz = try Self.gzipped(har, as: "session.har.gz")
        let folder = (gz as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var limits = ImportLimits()
        limits.maxInflatedBytes = 100
        #expect(throws: InputError(file: gz, problem: "gzip-compressed: it inflates to more than 100 bytes", fix: "raise the limit with --max-inflated-bytes")) {
            try ImportPipeline(limits: limits).importFile(gz, name: nil, replace: false, into: try ReportStore.inMemory())
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: gz))
        let cut = folder + "/cut.har.gz"
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: cut))
        #expect(throws: InputError(file: cut, problem: "gzip-compressed: the gzip data ends early, after \(bytes.count / 2) compressed bytes (\(try inflatedCount(cut)) inflated)")) {
            try ImportPipeline().read(cut, name: nil)
        }
        let text = try Self.gzipped(Self.root.appendingPathComponent("README.md").path, as: "notes.har.gz")
        defer { try? FileManager.default.removeItem(atPath: (text as NSString).deletingLastPathComponent) }
        #expect(throws: InputError(file: text, place: "offset 0", problem: "gzip-compressed, and what it holds is not a recording h5replay reads", fix: "expected HAR JSON, pcap or pcapng, or one of them compressed with gzip or zlib")) {
            try ImportPipeline.SourceFile(path: text)
        }
    }

    /// How many bytes the start of a cut gzip file inflates to, as the error counts them.
    func inflatedCount(_ path: String) throws -> Int {
        let out = path + ".out"
        defer { try? FileManager.default.removeItem(atPath: out) }
        do {
            return try CompressedFile.inflate(path, wrapper: .gzip, into: out, limit: 1 << 30).bytes
        } catch {
            return -1
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

    @Test("a capture read whole keeps every body, as the import stores them, and reports progress as progress")
    func captureReadKeepsBodies() throws {
        let path = Self.root.appendingPathComponent("Recordings/browser-form-redirect.pcap").path
        final class Lines: @unchecked Sendable { var said: [String] = [] }
        let lines = Lines()
        let whole = try ImportPipeline(progress: { lines.said.append($0) }).read(path, name: "r")[0]
        #expect(whole.exchanges.allSatisfy { $0.response.detachedBody == nil })
        #expect(whole.exchanges.contains { !$0.request.body.isEmpty } && whole.exchanges.contains { !$0.response.body.isEmpty })
        #expect(lines.said.allSatisfy { $0.hasSuffix(" exchanges") && $0.contains(" packets, ") })
        let store = try ReportStore.inMemory()
        _ = try ImportPipeline().importFile(path, name: "r", replace: false, into: store)
        let stored = try #require(try store.recording(named: "r"))
        #expect(stored.exchanges.map(\.request.body) == whole.exchanges.map(\.request.body))
        #expect(stored.exchanges.map(\.response.body) == whole.exchanges.map(\.response.body))
    }

    @Test("a streamed import writes many rows to a statement without foreign keys: it stores what a whole read gives, its keys hold, and a replaced or unchanged import leaves no row behind")
    func batchedStreamingImport() throws {
        let conformance = Self.root.appendingPathComponent("../shared/conformance/pcap2har-andrewf/tests/sajal.pcap").standardizedFileURL.path
        // A redirect (its next hop and frames are set on rows already written), and a real
        // capture of many exchanges and cookies.
        var files = [Self.root.appendingPathComponent("Recordings/browser-form-redirect.pcap").path, Self.root.appendingPathComponent("Recordings/login-redirect.har").path]
        if FileManager.default.fileExists(atPath: conformance) { files.append(conformance) }
        func shape(_ r: Recording) -> [String] {
            r.exchanges.map { e in
                let redirect = e.redirect.map { "\($0.chainStart)/\($0.hop)/\($0.next ?? -1)" } ?? "-"
                return "\(e.sequence) \(e.request.method) \(e.request.url) \(e.response.status) \(e.frame.label) \(e.initiator.rawValue) \(redirect) \(e.request.headers.count)/\(e.response.headers.count)"
            }
        }
        func orphans(_ store: ReportStore) throws -> [String: Int] {
            try store.writer.read { db in
                var found: [String: Int] = [:]
                for table in ["exchange", "cookie_sent", "cookie_inference", "diagnostic", "provenance_pending"] {
                    found[table] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table) WHERE recording_id NOT IN (SELECT id FROM recording)")!
                }
                found["foreign_key_check"] = try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").count
                return found.filter { $0.value > 0 }
            }
        }
        let store = try ReportStore.inMemory()
        for path in files {
            let whole = try ImportPipeline().read(path, name: "r")[0]
            let provenance = CookieProvenance(recording: whole)
            _ = try ImportPipeline().importFile(path, name: "r", replace: true, into: store)
            let detail = try #require(try store.detail(named: "r"), "\(path)")
            #expect(shape(detail.recording) == shape(whole), "\(path)")
            #expect(detail.cookies.map { $0.map(\.name) } == provenance.sent.map { $0.map(\.name) }, "\(path)")
            #expect(detail.inferred.map { $0.map(\.name) } == provenance.inferred.map { $0.map(\.cookie.name) }, "\(path)")
            // Only this recording's rows are left: the one it replaced took its own along.
            let counts = try store.writer.read { db in
                [try Int.fetchOne(db, sql: "SELECT count(*) FROM recording")!, try Int.fetchOne(db, sql: "SELECT count(*) FROM exchange")!, try Int.fetchOne(db, sql: "SELECT count(*) FROM cookie_sent")!]
            }
            #expect(counts == [1, whole.exchanges.count, provenance.sent.joined().count], "\(path)")
            #expect(try orphans(store) == [:], "\(path)")
        }
        // The same file again: unchanged, and the rows it streamed in the meantime are gone.
        let last = try #require(files.last)
        let again = try ImportPipeline().importFile(last, name: "r", replace: false, into: store)
        #expect(again.map(\.1) == [.unchanged(id: try #require(try store.writer.read { try Int64.fetchOne($0, sql: "SELECT id FROM recording") }))])
        #expect(try store.writer.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM recording") } == 1)
        #expect(try orphans(store) == [:])
    }

    @Test("a capture's compressed responses are stored as they crossed the wire and read back as the decoded bodies; a damaged one is an error naming it", .enabled(if: FileManager.default.fileExists(atPath: root.appendingPathComponent("../shared/conformance").path), "../shared/conformance is not here"))
    func wireCodedBodies() throws {
        // A real browsing capture: 32 responses gzip-encoded.
        let path = Self.root.appendingPathComponent("../shared/conformance/pcap2har-andrewf/tests/sajal.pcap").standardizedFileURL.path
        let whole = try ImportPipeline().read(path, name: "r")[0]
        let store = try ReportStore.inMemory()
        _ = try ImportPipeline().importFile(path, name: "r", replace: false, into: store)
        let row = try #require(try store.writer.read { try Row.fetchOne($0, sql: "SELECT count(*), sum(length(content)), sum(length) FROM body WHERE coding = 'gzip'") })
        let (coded, bytes, length) = (row[0] as Int, row[1] as Int? ?? 0, row[2] as Int? ?? 0)
        #expect(coded >= 20 && bytes * 2 < length)
        let stored = try #require(try store.recording(named: "r"))
        #expect(stored.exchanges.map(\.response.body) == whole.exchanges.map(\.response.body))
        #expect(stored.exchanges.map(\.request.body) == whole.exchanges.map(\.request.body))
        // A coded body whose recorded length changed, or whose bytes did, is not read as a body.
        let hash = try #require(try store.writer.read { try String.fetchOne($0, sql: "SELECT sha256 FROM body WHERE coding = 'gzip' ORDER BY length DESC") })
        try store.writer.write { try $0.execute(sql: "UPDATE exchange SET response_body_length = response_body_length + 1 WHERE response_body_sha256 = ?", arguments: [hash]) }
        #expect {
            try store.recording(named: "r")
        } throws: { error in
            guard case .undecodableBody(hash, let reason)? = error as? StoreError else { return false }
            return reason.contains("decodes to") && "\(error)".contains("table body, sha256 \(hash)")
        }
        try store.writer.write { db in
            try db.execute(sql: "UPDATE exchange SET response_body_length = response_body_length - 1 WHERE response_body_sha256 = ?", arguments: [hash])
            try db.execute(sql: "UPDATE body SET content = substr(content, 1, 20) WHERE sha256 = ?", arguments: [hash])
        }
        #expect {
            try store.recording(named: "r")
        } throws: { error in
            guard case .undecodableBody(hash, let reason)? = error as? StoreError else { return false }
            return reason.contains("does not decode")
        }
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
        var runner = ReplayRunner(presets: Array(Preset.builtIn.prefix(2)), profile: Profile())
        // Slices of about 100 exchanges, in order, every recording in one.
        runner.sliceExchanges = 100
        let slices = runner.slices(recordings)
        #expect(slices.count > 3)
        #expect(slices.flatMap { $0.map(\.name) } == recordings.map(\.name))
        for slice in slices where slice.count > 1 {
            #expect(slice.reduce(0) { $0 + $1.exchanges.count } <= 100)
        }
        var results: [RunResult] = []
        let row = try runner.run(recordings, in: store, label: nil, toolVersion: "t", gitRevision: nil) { results.append($0) }
        #expect(results.count == 200)
        let outcomes = try store.writer.read { try Int.fetchOne($0, sql: "SELECT COUNT(DISTINCT recording_name) FROM outcome WHERE run_id = ?", arguments: [row.id])! }
        #expect(outcomes == 100)
        #expect(try store.findings(run: row.id!).count == results.reduce(0) { $0 + $1.findings.count })
    }

    /// Counts the transactions committed on a store.
    final class Commits: TransactionObserver, @unchecked Sendable {
        var count = 0
        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
        func databaseDidChange(with event: DatabaseEvent) {}
        func databaseDidCommit(_ db: Database) { count += 1 }
        func databaseDidRollback(_ db: Database) {}
    }

    @Test("many HAR files are stored a batch to a commit, each file all or nothing: a file that fails is reported in its place, and without --keep-going the files after it are not stored")
    func filesCommittedTogether() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-batch-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let har = Self.root.appendingPathComponent("Recordings/login-redirect.har").path
        let paths = (0..<40).map { dir.appendingPathComponent(String(format: "f%02d.har", $0)).path }
        for path in paths { try FileManager.default.copyItem(atPath: har, toPath: path) }
        // f05 is not HAR, f07 is a capture (its own transaction), f09's name is taken by
        // another recording already stored.
        try Data("not a recording".utf8).write(to: URL(fileURLWithPath: paths[5]))
        try FileManager.default.removeItem(atPath: paths[7])
        try FileManager.default.copyItem(atPath: Self.root.appendingPathComponent("Recordings/browser-xhr-fetch.pcap").path, toPath: paths[7])
        func seeded() throws -> (ReportStore, Commits) {
            let store = try ReportStore.inMemory()
            var taken = try ImportPipeline().read(Self.root.appendingPathComponent("Recordings/xhr-json-post.har").path, name: "f09")[0]
            taken.sourceSHA256 = "another file"
            try store.save(taken)
            let commits = Commits()
            store.writer.add(transactionObserver: commits)
            return (store, commits)
        }

        let (store, commits) = try seeded()
        var skipped: [String] = []
        let imported = try ImportPipeline().importFiles(paths, replace: false, into: store, skipping: { path, _ in skipped.append((path as NSString).lastPathComponent) })
        #expect(skipped == ["f05.har", "f09.har"])
        #expect(imported.map(\.0.name) == (0..<40).filter { $0 != 5 && $0 != 9 }.map { String(format: "f%02d", $0) })
        // Batches of 32 files: the first split where a file is not read as HAR (f05, f07),
        // and the second; the capture commits as it does alone.
        let (alone, captureCommits) = try seeded()
        _ = try ImportPipeline().importFiles([paths[7]], replace: false, into: alone)
        #expect(captureCommits.count >= 1 && commits.count == 4 + captureCommits.count, "\(commits.count) commits, \(captureCommits.count) for the capture alone")
        #expect(try store.recording(named: "f09")?.exchanges.count == 3)

        let (strict, _) = try seeded()
        #expect(throws: InputError.self) { try ImportPipeline().importFiles(Array(paths[8...]), replace: false, into: strict) }
        #expect(try strict.recordingNames() == ["f08", "f09"])
    }
}
