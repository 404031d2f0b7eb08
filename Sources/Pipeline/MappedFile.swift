import Foundation
import TrafficModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file mapped read-only whose pages can be let go once read: a reader of a file of any
/// size keeps resident only what it is working on. Threads may read it side by side: its
/// bytes never change, and a page one lets go is read again when another touches it.
final class MappedFile: @unchecked Sendable {
    let bytes: UnsafeBufferPointer<UInt8>
    private let base: UnsafeMutableRawPointer?
    private static let page = Int(sysconf(Int32(_SC_PAGESIZE)))

    init(path: String) throws {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw InputError(file: path, problem: "cannot read the file: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw InputError(file: path, problem: "cannot read the file: \(String(cString: strerror(errno)))") }
        let length = Int(status.st_size)
        guard length > 0 else {
            base = nil
            bytes = UnsafeBufferPointer(start: nil, count: 0)
            return
        }
        guard let mapped = mmap(nil, length, PROT_READ, MAP_PRIVATE, fd, 0), mapped != MAP_FAILED else {
            throw InputError(file: path, problem: "cannot map the file: \(String(cString: strerror(errno)))")
        }
        _ = madvise(mapped, length, MADV_SEQUENTIAL)
        base = mapped
        bytes = UnsafeBufferPointer(start: mapped.assumingMemoryBound(to: UInt8.self), count: length)
    }

    /// Lets go of the pages `range` touches. The mapping is private and never written, so
    /// a page let go is read again from the file if it is touched again.
    func release(_ range: Range<Int>) {
        guard let base, !range.isEmpty else { return }
        let lower = range.lowerBound / Self.page * Self.page
        let upper = min((range.upperBound + Self.page - 1) / Self.page * Self.page, bytes.count)
        guard upper > lower else { return }
        _ = madvise(base + lower, upper - lower, MADV_DONTNEED)
    }

    /// SHA-256 of the whole file, read a slice at a time and let go behind.
    func sha256Hex() -> String {
        var hasher = StreamingSHA256()
        var at = 0
        let step = 8 << 20
        while at < bytes.count {
            let end = min(at + step, bytes.count)
            hasher.update(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[at..<end])))
            release(at..<end)
            at = end
        }
        return hasher.finalizeHex()
    }

    deinit {
        if let base { munmap(base, bytes.count) }
    }
}
