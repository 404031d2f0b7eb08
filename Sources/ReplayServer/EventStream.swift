import Foundation
import NIOCore
import NIOHTTP1
import TrafficModel

/// A recorded `text/event-stream` response (server-sent events), served event by event:
/// each event a write of its own, flushed, so that a client's EventSource sees them one at a
/// time as it did, not a body that lands at once. A recording keeps no time per event (a
/// HAR holds the body whole), so they go one after another without waiting; the response
/// then ends, as the recorded one did.
enum EventStream {
    static func isEventStream(_ response: RecordedResponse) -> Bool {
        response.headers.first("Content-Type")?.lowercased().hasPrefix("text/event-stream") == true
    }

    /// The body cut after each blank line (`\n\n`, `\r\n\r\n` or `\r\r`), each event
    /// keeping its own line ends; what follows the last blank line is an event too.
    static func events(_ body: Data, allocator: ByteBufferAllocator) -> [ByteBuffer] {
        let bytes = [UInt8](body)
        var events: [ByteBuffer] = []
        var start = 0, i = 0
        while i < bytes.count {
            let end = blankLineEnd(bytes, at: i)
            if let end {
                events.append(allocator.buffer(bytes: bytes[start..<end]))
                start = end
                i = end
            } else {
                i += 1
            }
        }
        if start < bytes.count { events.append(allocator.buffer(bytes: bytes[start...])) }
        return events
    }

    /// Where a blank line that starts with the line end at `i` ends; nil when none does.
    static func blankLineEnd(_ bytes: [UInt8], at i: Int) -> Int? {
        let cr: UInt8 = 13, lf: UInt8 = 10
        func at(_ j: Int) -> UInt8? { j < bytes.count ? bytes[j] : nil }
        if at(i) == lf, at(i + 1) == lf { return i + 2 }
        if at(i) == cr, at(i + 1) == lf, at(i + 2) == cr, at(i + 3) == lf { return i + 4 }
        if at(i) == cr, at(i + 1) == cr { return i + 2 }
        return nil
    }
}

extension ReplayHandler {
    /// The head without a length (chunked for HTTP/1.1, closed after for HTTP/1.0), then each
    /// event flushed on its own, then the end.
    func writeEvents(_ context: ChannelHandlerContext, _ head: HTTPResponseHead, _ events: [ByteBuffer], keepAlive: Bool) {
        var head = head
        head.headers.remove(name: "Content-Length")
        let keepAlive = keepAlive && head.version != .http1_0
        if !keepAlive { head.headers.replaceOrAdd(name: "Connection", value: "close") }
        context.writeAndFlush(wrapOutboundOut(.head(head)), promise: nil)
        for event in events { context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(event))), promise: nil) }
        let done = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: done)
        guard !keepAlive else { return }
        let channel = context.channel
        done.futureResult.whenComplete { _ in channel.close(promise: nil) }
    }
}
