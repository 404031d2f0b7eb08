import Foundation
import NIOCore
import NIOFoundationCompat

/// The part of a kept response body past its first megabyte, in a file rather than in
/// memory: a long download kept up to `--max-body-bytes` (64 MB by default) would
/// otherwise hold that much in the proxy's memory until it is journaled, one copy per
/// download in flight or waiting for the journal. The file is removed from its folder as
/// soon as it is made, so a proxy killed outright leaves nothing behind; it lives as long
/// as this object (its descriptor). Written on the event loop of the connection (a write
/// into the page cache, a chunk at a time); read from any thread once the response ended.
public final class SpoolFile: @unchecked Sendable {
    let descriptor: Int32
    /// Bytes written so far.
    public private(set) var length = 0

    /// A new, already unlinked file in `directory` (0600); nil when none can be made.
    init?(directory: String) {
        var template = Array((directory as NSString).appendingPathComponent("h5replay-body-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard made >= 0 else { return nil }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        descriptor = made
    }

    deinit { close(descriptor) }

    /// Appends the buffer's readable bytes; false when the file cannot take them all.
    func append(_ buffer: ByteBuffer) -> Bool {
        buffer.withUnsafeReadableBytes { (bytes) -> Bool in
            var offset = 0
            while offset < bytes.count {
                let n = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { return false }
                offset += n
                length += n
            }
            return true
        }
    }

    /// Bytes `range` of the file, read into memory.
    public func read(_ range: Range<Int>) throws -> Data {
        var data = Data(count: range.count)
        var done = 0
        while done < range.count {
            let n = data.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, range.count - done, off_t(range.lowerBound + done)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw ReadError(errno: errno) }
            done += n
        }
        return data
    }

    struct ReadError: Error, CustomStringConvertible {
        var errno: Int32
        var description: String { "the kept body's spool file could not be read (errno \(errno))" }
    }

    /// The whole file as `Data` without reading it: the bytes are mapped, so the pages
    /// only come into memory where a reader touches them (the journal reads the file with
    /// `read` instead). Empty when the file cannot be mapped.
    func mapped() -> Data {
        guard length > 0, let address = mmap(nil, length, PROT_READ, MAP_SHARED, descriptor, 0),
              address != UnsafeMutableRawPointer(bitPattern: -1) else { return Data() }
        return Data(bytesNoCopy: address, count: length, deallocator: .custom { pointer, count in _ = munmap(pointer, count) })
    }
}

/// The recording's copy of a response body: the first `limit` bytes, and how many came in
/// all. The first megabyte is kept in memory, the rest in a `SpoolFile`, so that a long
/// download costs the proxy about a megabyte of memory, not the cap.
struct BodyRecord {
    /// Bytes kept in memory before the body moves to a file (the journal streams a body
    /// from this size too).
    static let inMemory = 1 << 20
    let limit: Int
    let spoolDirectory: String
    private(set) var kept = ByteBuffer()
    private(set) var spool: SpoolFile?
    /// Bytes kept, in memory or in the file.
    private(set) var keptCount = 0
    private(set) var received = 0
    /// The file could not take a write: nothing more is kept.
    private var full = false

    init(limit: Int, spoolDirectory: String) {
        self.limit = limit
        self.spoolDirectory = spoolDirectory
    }

    mutating func append(_ chunk: ByteBuffer) {
        received += chunk.readableBytes
        let room = limit - keptCount
        guard room > 0, !full else { return }
        var part = chunk
        if part.readableBytes > room { part = part.getSlice(at: part.readerIndex, length: room)! }
        let count = part.readableBytes
        if spool == nil, kept.readableBytes + part.readableBytes > Self.inMemory, let file = SpoolFile(directory: spoolDirectory), file.append(kept) {
            spool = file
            kept = ByteBuffer()
        }
        if let spool {
            guard spool.append(part) else {
                full = true
                keptCount = spool.length
                return
            }
        } else {
            kept.writeBuffer(&part)
        }
        keptCount += count
    }

    /// Whether bytes were left out.
    var isCut: Bool { received > keptCount }

    /// The kept bytes: shared with the buffer, or mapped from the file, never copied.
    func data() -> Data {
        if let spool { return spool.mapped() }
        return kept.getData(at: kept.readerIndex, length: kept.readableBytes, byteTransferStrategy: .noCopy) ?? Data()
    }
}
