import LocalCA
import NIOCore
import NIOEmbedded
import Testing

/// What reaches the TLS handler from the packer: whole records where the writes allow, the
/// same bytes in the same order, and every write's promise kept.
@Suite("TLS record packer")
struct TLSRecordPackerTests {
    static let record = TLSRecordPacker.recordSize

    /// Writes `sizes` (bytes counting up, so that order shows), flushing after the indices
    /// in `flushes`; returns the buffers the TLS handler would get, the bytes written and how
    /// many of the writes' promises succeeded.
    static func pack(_ sizes: [Int], flushes: Set<Int> = []) throws -> (out: [ByteBuffer], sent: [UInt8], kept: Int) {
        let channel = EmbeddedChannel(handler: TLSRecordPacker())
        var sent: [UInt8] = []
        let kept = Kept()
        for (index, size) in sizes.enumerated() {
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: sent.count + $0) }
            sent += bytes
            let promise = channel.eventLoop.makePromise(of: Void.self)
            channel.write(ByteBuffer(bytes: bytes), promise: promise)
            promise.futureResult.whenSuccess { kept.count += 1 }
            if flushes.contains(index) { channel.flush() }
        }
        channel.flush()
        var out: [ByteBuffer] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { out.append(buffer) }
        _ = try channel.finish()
        return (out, sent, kept.count)
    }

    final class Kept { var count = 0 }

    @Test("HTTP/2 frames (a 9-byte header, then 8 KB) leave in full records, the bytes unchanged, every promise kept")
    func framesPacked() throws {
        let sizes = Array(repeating: [9, 8192], count: 10).flatMap { $0 }
        let (out, sent, kept) = try Self.pack(sizes)
        #expect(out.flatMap { Array($0.readableBytesView) } == sent)
        #expect(out.dropLast().allSatisfy { $0.readableBytes == Self.record }, "\(out.map(\.readableBytes))")
        #expect(out.count == (sent.count + Self.record - 1) / Self.record)
        #expect(kept == sizes.count)
    }

    @Test("A write of whole records goes down as it is; a longer one leaves only its tail to be packed")
    func largeWritesPassed() throws {
        let (out, sent, _) = try Self.pack([2 * Self.record, 2 * Self.record + 100, 50])
        #expect(out.map(\.readableBytes) == [2 * Self.record, 2 * Self.record, 150])
        #expect(out.flatMap { Array($0.readableBytesView) } == sent)
    }

    @Test("A flush sends what is packed so far: nothing waits for a record to fill")
    func flushSends() throws {
        let sizes = [100, 200, 300]
        let (out, sent, kept) = try Self.pack(sizes, flushes: [0])
        #expect(out.map(\.readableBytes) == [100, 500])
        #expect(out.flatMap { Array($0.readableBytesView) } == sent)
        #expect(kept == sizes.count)
    }

    @Test("Any run of writes and flushes: the same bytes in order, and no record but a flush's last is short")
    func anyWrites() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            let sizes = (0..<Int.random(in: 1...40, using: &generator)).map { _ in
                [0, 9, 1, 100, 8192, Self.record - 1, Self.record, Self.record + 1, 3 * Self.record + 7].randomElement(using: &generator)!
            }
            let flushes = Set(sizes.indices.filter { _ in Int.random(in: 0..<6, using: &generator) == 0 })
            let (out, sent, kept) = try Self.pack(sizes, flushes: flushes)
            #expect(out.flatMap { Array($0.readableBytesView) } == sent, "sizes \(sizes) flushes \(flushes.sorted())")
            #expect(kept == sizes.count)
            let short = out.filter { $0.readableBytes % Self.record != 0 }.count
            #expect(short <= flushes.count + 1, "sizes \(sizes) flushes \(flushes.sorted()): \(out.map(\.readableBytes))")
        }
    }
}
