import NIOCore

/// Packs what is written to a TLS connection into full records. BoringSSL makes at least one
/// record of each write it is given, so a stream of small writes (an HTTP/2 frame's 9-byte
/// header, then its payload; a relayed upstream's 8 KB frames) leaves as many small records,
/// and the peer reads each with a syscall or two: curl, taking 1 GB through the recording
/// proxy, read 8 KB records and spent half again the CPU it spends straight. This handler sits
/// just above the TLS handler: a write that fills whole records goes down as it is, the rest
/// is copied into one buffer of up to a record, which goes down once full or at the flush.
/// Every write's promise completes when the write that carries its last byte does.
public final class TLSRecordPacker: ChannelOutboundHandler, RemovableChannelHandler {
    public typealias OutboundIn = ByteBuffer
    public typealias OutboundOut = ByteBuffer

    /// TLS's largest record plaintext (RFC 8446 section 5.1).
    public static let recordSize = 16_384

    private var pending: ByteBuffer?
    private var pendingPromises: [EventLoopPromise<Void>] = []

    public init() {}

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        var data = unwrapOutboundIn(data)
        let size = Self.recordSize
        if let filled = pending?.readableBytes, filled > 0 {
            // Top up the part-filled record first; it goes once full.
            let taken = min(size - filled, data.readableBytes)
            var head = data.readSlice(length: taken)!
            pending!.writeBuffer(&head)
            if data.readableBytes == 0, let promise { pendingPromises.append(promise) }
            if pending!.readableBytes == size { writePending(context: context) }
            if data.readableBytes == 0 { return }
        }
        // Whole records go down as they are, without a copy.
        let whole = data.readableBytes / size * size
        if whole == data.readableBytes {
            context.write(wrapOutboundOut(data), promise: promise)
            return
        }
        if whole > 0 { context.write(wrapOutboundOut(data.readSlice(length: whole)!), promise: nil) }
        if pending == nil { pending = context.channel.allocator.buffer(capacity: size) }
        pending!.writeBuffer(&data)
        if let promise { pendingPromises.append(promise) }
    }

    public func flush(context: ChannelHandlerContext) {
        writePending(context: context)
        context.flush()
    }

    public func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // What was written before the close goes before it, as it would without this handler.
        writePending(context: context)
        context.close(mode: mode, promise: promise)
    }

    /// Removed with its channel: a record still packing never went out (the close above
    /// sends it first, so only a connection that ended otherwise leaves one).
    public func handlerRemoved(context: ChannelHandlerContext) {
        pending = nil
        let promises = pendingPromises
        pendingPromises = []
        for promise in promises { promise.fail(ChannelError.ioOnClosedChannel) }
    }

    /// Writes the part-filled record; its writes' promises complete with it.
    private func writePending(context: ChannelHandlerContext) {
        guard let buffer = pending, buffer.readableBytes > 0 else { return }
        // The next record gets a buffer of its own: the one written is the TLS handler's now.
        pending = nil
        let promises = pendingPromises
        pendingPromises = []
        switch promises.count {
        case 0: context.write(wrapOutboundOut(buffer), promise: nil)
        case 1: context.write(wrapOutboundOut(buffer), promise: promises[0])
        default:
            let written = context.eventLoop.makePromise(of: Void.self)
            context.write(wrapOutboundOut(buffer), promise: written)
            written.futureResult.whenComplete { result in
                for promise in promises { promise.completeWith(result) }
            }
        }
    }
}
