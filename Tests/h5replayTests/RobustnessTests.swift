import Foundation
import GRDB
import ReportStore
import Testing

/// Hostile inputs, crash safety and concurrent writers (docs/design.md, "Reliability and security"), through the
/// built binary as a user runs it.
@Suite("Robustness: hostile inputs, kills, concurrent writers")
struct RobustnessTests {
    static var python: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") }

    static func run(_ executable: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    static func scratch() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-robust-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// A 400 MB capture of many exchanges, in `dir`.
    static func largeCapture(in dir: URL) throws -> String {
        let capture = dir.appendingPathComponent("large.pcap").path
        #expect(try run("/usr/bin/python3", [CLITests.root.appendingPathComponent("Tools/make-hostile-corpus.py").path, "--large", capture, "400"]) == 0)
        return capture
    }

    /// Runs `h5replay import --db db capture` and kills it (SIGKILL) once the file `grown`
    /// passes `bytes`, or after 30 s; `look` runs at each look. Expects the kill to have
    /// landed while the import ran.
    static func killImport(db: String, capture: String, onceGrown grown: String, past bytes: Int = 8 << 20, look: () -> Void = {}) throws {
        let process = Process()
        process.executableURL = CLITests.binary
        process.arguments = ["import", "--db", db, capture]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, process.isRunning {
            look()
            let size = (try? FileManager.default.attributesOfItem(atPath: grown)[.size] as? Int) ?? 0
            if size > bytes { break }
            Thread.sleep(forTimeInterval: 0.01)
        }
        let killedWhileRunning = process.isRunning
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(killedWhileRunning, "the import finished before it could be killed; the capture is too small for this machine")
        #expect(process.terminationReason == .uncaughtSignal)
    }

    static func integrityCheck(_ path: String) throws -> String {
        let queue = try DatabaseQueue(path: path)
        return try queue.read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") ?? "" }
    }

    @Test("every input of the hostile corpus imports with diagnostics or is refused naming the file; none crashes or leaves a partial recording",
          .enabled(if: python, "python3 makes the corpus"))
    func hostileCorpus() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let corpus = dir.appendingPathComponent("corpus")
        #expect(try Self.run("/usr/bin/python3", [CLITests.root.appendingPathComponent("Tools/make-hostile-corpus.py").path, corpus.path]) == 0)
        let files = try FileManager.default.contentsOfDirectory(atPath: corpus.path).sorted()
        #expect(files.count >= 100)
        let db = dir.appendingPathComponent("hostile.sqlite").path
        var exits: [Int32: Int] = [:]
        for file in files {
            let result = try CLITests.h5replay(["import", "--db", db, file], in: corpus)
            exits[result.status, default: 0] += 1
            let name = (file as NSString).deletingPathExtension
            let store = try ReportStore.open(path: db)
            let stored = try store.recording(named: name)
            switch result.status {
            case 0:
                #expect(stored != nil, "\(file): exit 0 but nothing stored")
            case 2:
                #expect(result.stderr.hasPrefix("h5replay: error: \(file)"), "\(file): the message does not name the file: \(result.stderr)")
                #expect(stored == nil, "\(file): refused, yet a recording was stored")
            default:
                Issue.record("\(file): exit \(result.status): \(result.stderr.suffix(500))")
            }
        }
        print("hostile corpus: \(files.count) inputs; exit codes \(exits.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))")
        #expect(try Self.integrityCheck(db) == "ok")
        // Bombs stop at their limits, and say so.
        let bomb = try #require(try ReportStore.open(path: db).recording(named: "bomb-gzip-200mb"))
        #expect(bomb.exchanges.first?.response.body.count == 64 << 20)
        #expect(bomb.diagnostics.contains { $0.code == "decoded-body-limit" })
    }

    @Test("SIGKILL in the middle of a capture import leaves the database whole, with no partial recording",
          .enabled(if: python, "python3 makes the capture"))
    func killedImport() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let capture = try Self.largeCapture(in: dir)
        let db = dir.appendingPathComponent("killed.sqlite").path
        // A recording imported before, which must survive.
        #expect(try CLITests.h5replay(["import", "--db", db, CLITests.root.appendingPathComponent("Recordings/login-redirect.har").path], in: dir).status == 0)
        // Kill once bodies are being written: the WAL file grows past a few MB.
        try Self.killImport(db: db, capture: capture, onceGrown: db + "-wal")

        #expect(try Self.integrityCheck(db) == "ok")
        let store = try ReportStore.open(path: db)
        // On a busy machine the kill can land after the commit, while the process closes
        // the database: then the recording is there whole. Either way, never a part of it.
        let names = try store.recordingNames()
        #expect(names == ["login-redirect"] || names == ["large", "login-redirect"], "\(names)")
        let queue = try DatabaseQueue(path: db)
        func exchanges() throws -> Int {
            try queue.read { db in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM exchange JOIN recording ON recording.id = exchange.recording_id WHERE recording.name = 'large'") ?? -1
            }
        }
        let afterKill = try exchanges()
        let orphans = try queue.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM exchange WHERE recording_id NOT IN (SELECT id FROM recording)") ?? -1
        }
        #expect(orphans == 0)
        // And the same import, run again, completes.
        #expect(try CLITests.h5replay(["import", "--db", db, capture], in: dir).status == 0)
        #expect(try store.recordingNames() == ["large", "login-redirect"])
        let whole = try exchanges()
        #expect(whole > 1000)
        if names.contains("large") { #expect(afterKill == whole, "the killed import left \(afterKill) of \(whole) exchanges") }
    }

    @Test("SIGKILL in the middle of the import that creates the database leaves it empty and whole; the next open turns it to WAL",
          .enabled(if: python, "python3 makes the capture"))
    func killedFirstImport() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let capture = try Self.largeCapture(in: dir)
        let db = dir.appendingPathComponent("new.sqlite").path
        // The creating process writes pages to the file itself, its rollback journal
        // beside it: kill once the file holds a few MB of the import's pages. The import's
        // page cache holds its first 8 MB of pages, so the file grows only once the cache
        // spills, from about half way, and passes 8 MB (15 MB in all) at the commit alone:
        // a kill at 8 MB landed at the commit, just before or just after it.
        var journalSeen = false
        try Self.killImport(db: db, capture: capture, onceGrown: db, past: 4 << 20) {
            journalSeen = journalSeen || FileManager.default.fileExists(atPath: db + "-journal")
        }
        #expect(journalSeen, "no rollback journal beside the database its import created")
        #expect(!FileManager.default.fileExists(atPath: db + "-wal"))

        // The journal rolls the file back: no recording, no row of one, and whole.
        #expect(try Self.integrityCheck(db) == "ok")
        let rows = try DatabaseQueue(path: db).read { db in
            try ["recording", "exchange", "body"].map { try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \($0)") ?? -1 }
        }
        #expect(rows == [0, 0, 0])
        // The next import opens the file as any existing database: in WAL mode, owner-only.
        #expect(try CLITests.h5replay(["import", "--db", db, capture], in: dir).status == 0)
        let store = try ReportStore.open(path: db)
        #expect(try store.recordingNames() == ["large"])
        #expect(try store.writer.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") } == "wal")
        #expect(try FileManager.default.attributesOfItem(atPath: db + "-wal")[.posixPermissions] as? Int == 0o600)
    }

    /// Each round a new database, made by `import` in rollback-journal mode, so that both
    /// replays open it first and turn it to WAL together: one of them was answered "database
    /// is locked" 5 times in 12 before `ReportStore.open` tried again.
    @Test("two processes replaying into one database at once both succeed, also on its first opens after the import that made it")
    func concurrentReplays() throws {
        let dir = try CLITests.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        for round in 0..<4 {
            let db = "shared-\(round).sqlite"
            #expect(try CLITests.h5replay(["import", "--db", db] + ["login-redirect", "xhr-json-post", "logout-xhr"].map { "Recordings/\($0).har" }, in: dir).status == 0)
            let errors = (0..<2).map { _ in Pipe() }
            let processes = try (0..<2).map { k -> Process in
                let process = Process()
                process.executableURL = CLITests.binary
                process.arguments = ["replay", "--db", db, "--label", "writer-\(k)", "--quiet", "login-redirect", "xhr-json-post", "logout-xhr"]
                process.currentDirectoryURL = dir
                process.standardOutput = FileHandle.nullDevice
                process.standardError = errors[k]
                try process.run()
                return process
            }
            let messages = errors.map { String(decoding: $0.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
            for process in processes { process.waitUntilExit() }
            #expect(processes.map(\.terminationStatus) == [0, 0], "round \(round): \(messages)")
            let queue = try DatabaseQueue(path: dir.appendingPathComponent(db).path)
            let labels = try queue.read { db in try String.fetchAll(db, sql: "SELECT label FROM run ORDER BY label") }
            #expect(labels == ["writer-0", "writer-1"], "round \(round)")
        }
    }
}
