import CFileSync
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Starts the kernel's writeback of a database's files every `period` while a large
/// transaction writes them, so that the commit's sync finds most pages on their way to
/// the disk already. Left to itself, the kernel writes a file back once its dirty pages
/// pass a tenth of memory or are 30 s old: an import of a 159 MB capture left all of its
/// 153 MB for the commit's `fdatasync`, 55-70 ms of a 0.9 s import in which nothing else ran.
///
/// SQLite's own descriptors are used, found in /proc/self/fd: a descriptor of ours to the
/// file could never be closed safely, since closing any descriptor of a file releases
/// every POSIX lock the process holds on it, SQLite's included. A descriptor that SQLite
/// closes meanwhile costs a call that fails (`EBADF`); one whose number another file has
/// taken since starts that file's writeback, which only writes sooner what the kernel
/// would write anyway. Elsewhere than Linux it does nothing.
final class Writeback: @unchecked Sendable {
    private let condition = NSCondition()
    private var stopping = false
    private var stopped = false
    /// The database file and its WAL, symbolic links resolved, as /proc/self/fd names them.
    private let paths: Set<String>
    private let period: TimeInterval
    /// Writebacks started on a descriptor of the database, for tests.
    private(set) var started = 0
    /// The databases (their resolved paths) whose writeback runs now, with how many run for
    /// each: what a test reads to see that a transaction started one.
    private static let runningLock = NSLock()
    nonisolated(unsafe) private static var running: [String: Int] = [:]
    static func isRunning(for path: String) -> Bool {
        let real = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        return runningLock.withLock { running[real, default: 0] > 0 }
    }
    private let database: String

    /// A writeback of the database at `path`; nil for a database in memory.
    static func of(_ path: String) -> Writeback? {
        path.isEmpty || path == ":memory:" || path.hasPrefix("file::memory:") ? nil : Writeback(database: path)
    }

    /// Starts nudging the files of the database at `path` (and its `-wal`).
    init(database path: String, period: TimeInterval = 0.05) {
        let real = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        paths = [real, real + "-wal"]
        database = real
        self.period = period
        #if os(Linux)
            Self.runningLock.withLock { Self.running[real, default: 0] += 1 }
            let thread = Thread { [self] in run() }
            thread.name = "h5replay-writeback"
            thread.start()
        #else
            stopped = true
        #endif
    }

    private func run() {
        condition.lock()
        while !stopping {
            _ = condition.wait(until: Date(timeIntervalSinceNow: period))
            if stopping { break }
            condition.unlock()
            let count = Self.descriptors(of: paths).reduce(0) { $0 + (h5replay_start_writeback($1) == 0 ? 1 : 0) }
            condition.lock()
            started += count
        }
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// Stops the nudging and waits for the thread; call once the transaction has committed
    /// or rolled back.
    func stop() {
        condition.lock()
        let first = !stopping
        stopping = true
        condition.broadcast()
        while !stopped { condition.wait() }
        condition.unlock()
        #if os(Linux)
            if first { Self.runningLock.withLock { Self.running[database, default: 1] -= 1 } }
        #endif
    }

    /// The process's open descriptors whose files are `paths`.
    static func descriptors(of paths: Set<String>) -> [Int32] {
        #if os(Linux)
            guard let directory = opendir("/proc/self/fd") else { return [] }
            defer { closedir(directory) }
            var found: [Int32] = []
            var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                guard let fd = Int32(name) else { continue }
                let n = readlink("/proc/self/fd/" + name, &target, target.count - 1)
                guard n > 0 else { continue }
                let file = target.withUnsafeBufferPointer { String(decoding: UnsafeRawBufferPointer($0).prefix(n), as: UTF8.self) }
                if paths.contains(file) { found.append(fd) }
            }
            return found
        #else
            return []
        #endif
    }
}
