import Foundation
import GRDB
import Testing
@testable import ReportStore

@Suite("Writeback of a large transaction's pages")
struct WritebackTests {
    /// The process's descriptors whose file is `path`, read from /proc/self/fd.
    static func descriptors(_ path: String) -> Int {
        Writeback.descriptors(of: [URL(fileURLWithPath: path).resolvingSymlinksInPath().path]).count
    }

    @Test("a transaction writing a file database has its pages written back as it goes, through SQLite's own descriptor")
    func startsWritebackOnSQLitesDescriptor() throws {
        #if os(Linux)
            let dir = try scratchDirectory("writeback")
            defer { try? FileManager.default.removeItem(at: dir) }
            let path = dir.appendingPathComponent("w.sqlite").path
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in
                try db.execute(sql: "CREATE TABLE t (x BLOB)")
                let before = Self.descriptors(path)
                #expect(before >= 1, "SQLite holds the file open")
                let writeback = Writeback(database: path, period: 0.005)
                for _ in 0..<64 { try db.execute(sql: "INSERT INTO t VALUES (randomblob(65536))") }
                Thread.sleep(forTimeInterval: 0.05)
                // No descriptor of its own: closing one would release SQLite's POSIX locks.
                #expect(Self.descriptors(path) == before)
                writeback.stop()
                #expect(writeback.started >= 1)
            }
            #expect(try queue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM t") } == 64)
        #endif
    }

    @Test("an import's or a run's transaction on a file database runs the writeback, and stops it when it ends")
    func transactionsRunIt() throws {
        #if os(Linux)
            let dir = try scratchDirectory("writeback-store")
            defer { try? FileManager.default.removeItem(at: dir) }
            let path = dir.appendingPathComponent("s.sqlite").path
            let store = try ReportStore.open(path: path)
            #expect(!Writeback.isRunning(for: path))
            try store.withoutForeignKeys { _ in #expect(Writeback.isRunning(for: path)) }
            #expect(!Writeback.isRunning(for: path))
        #endif
    }

    @Test("a database in memory has no writeback")
    func noneInMemory() throws {
        #expect(Writeback.of(":memory:") == nil)
        #expect(Writeback.of("") == nil)
        let store = try ReportStore.inMemory()
        #expect(Writeback.of(store.writer.path) == nil)
    }
}
