#if canImport(Glibc)
import Glibc
#endif
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

// The HTTP/1.1 connection plumbing `serve --tls` and `record --proxy` share around the TLS
// server: a limit on open connections, the HTTP server handlers under a handler of their
// own, and the switch a CONNECT makes from HTTP to a tunnel.

/// Why a client connection failed below HTTP, in a line for the log; nil when it is no
/// fault (a client that resets or goes away, as a load tester stopping does).
public func connectionFault(_ error: Error) -> String? {
    if let io = error as? IOError, [ECONNRESET, EPIPE].contains(io.errnoCode) { return nil }
    let text = String(describing: error)
    // llhttp pauses on the HTTP/2 connection preface ("PRI * HTTP/2.0").
    if text.contains("paused") || text.contains("invalidMethod") || text.contains("PRI") {
        return "it speaks HTTP/2 (only HTTP/1.1 is served here; see docs/serving.md)"
    }
    return "not HTTP/1.1 (\(text))"
}

/// Counts a server's open connections against a limit.
public final class ConnectionLimit: Sendable {
    public let maximum: Int
    let open = NIOLockedValueBox(0)

    public init(maximum: Int) { self.maximum = maximum }

    /// Counts `channel` until it closes; false when `maximum` are already open (the caller
    /// closes it and says why).
    public func admit(_ channel: Channel) -> Bool {
        let admitted = open.withLockedValue { open -> Bool in
            guard open < maximum else { return false }
            open += 1
            return true
        }
        if admitted { channel.closeFuture.whenComplete { _ in self.open.withLockedValue { $0 -= 1 } } }
        return admitted
    }
}

/// The HTTP/1.1 server handlers under `top`: the decoder stops at a CONNECT and keeps the
/// bytes after it for whatever replaces these handlers.
public struct HTTPServerLayer {
    let handlers: [RemovableChannelHandler]
    let decoder: RemovableChannelHandler

    /// Adds the handlers and `top` to `channel`'s pipeline (on its event loop).
    public static func add(to channel: Channel, top: ChannelHandler & RemovableChannelHandler) throws -> HTTPServerLayer {
        let decoder = ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes))
        let encoder = HTTPResponseEncoder()
        let pipelining = HTTPServerPipelineHandler()
        let errors = HTTPServerProtocolErrorHandler()
        try channel.pipeline.syncOperations.addHandlers([encoder, decoder, pipelining, errors, top])
        return HTTPServerLayer(handlers: [encoder, pipelining, errors, top], decoder: decoder)
    }

    /// Once a CONNECT is answered: on the loop's next turn (never inside the decoder's own
    /// call), removes these handlers, lets `next` add what the tunnel carries, and removes
    /// the decoder last so that the bytes it holds reach it.
    public func switchToTunnel(_ channel: Channel, next: @escaping @Sendable () -> EventLoopFuture<Void>) -> EventLoopFuture<Void> {
        let pipeline = channel.pipeline
        let bound = NIOLoopBound(self, eventLoop: channel.eventLoop)
        let turn = channel.eventLoop.makePromise(of: Void.self)
        channel.eventLoop.execute { turn.succeed() }
        return turn.futureResult.flatMap {
            EventLoopFuture.andAllSucceed(bound.value.handlers.map { pipeline.syncOperations.removeHandler($0) }, on: channel.eventLoop)
        }.flatMap {
            next()
        }.flatMap {
            pipeline.syncOperations.removeHandler(bound.value.decoder)
        }
    }

    /// Removes these handlers now, the decoder last (after something else was put after
    /// them to take the bytes it holds).
    public func remove(from channel: Channel) {
        for handler in handlers { channel.pipeline.syncOperations.removeHandler(handler, promise: nil) }
        channel.pipeline.syncOperations.removeHandler(decoder, promise: nil)
    }

    /// `host:port`, `[v6]:port` or `host`, to the host in lower case.
    public static func host(ofAuthority authority: String) -> String {
        if authority.hasPrefix("["), let end = authority.firstIndex(of: "]") {
            return String(authority[authority.index(after: authority.startIndex)..<end]).lowercased()
        }
        if let colon = authority.lastIndex(of: ":") { return String(authority[..<colon]).lowercased() }
        return authority.lowercased()
    }
}

/// Gathers one request's head and body from the HTTP decoder's parts, keeping at most
/// `maxBodyBytes` of the body (a larger one is marked, its bytes dropped).
public struct RequestCollector {
    public struct Request {
        public var head: HTTPRequestHead
        public var body: ByteBuffer
        public var tooLarge: Bool
    }

    public let maxBodyBytes: Int
    var head: HTTPRequestHead?
    var body = ByteBuffer()
    var tooLarge = false

    public init(maxBodyBytes: Int) { self.maxBodyBytes = maxBodyBytes }

    /// The whole request once its end is read; nil before.
    public mutating func add(_ part: HTTPServerRequestPart) -> Request? {
        switch part {
        case .head(let h):
            head = h
            body.clear()
            tooLarge = false
        case .body(var chunk):
            guard !tooLarge else { return nil }
            if body.readableBytes + chunk.readableBytes > maxBodyBytes {
                tooLarge = true
                body.clear()
                return nil
            }
            body.writeBuffer(&chunk)
        case .end:
            guard let head else { return nil }
            self.head = nil
            return Request(head: head, body: body, tooLarge: tooLarge)
        }
        return nil
    }
}
