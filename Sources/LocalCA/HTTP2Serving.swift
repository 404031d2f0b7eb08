import NIOCore
import NIOHTTP1
import NIOHTTP2

/// HTTP/2 on a TLS connection whose client chose h2 by ALPN, for `serve --tls` and the
/// recording proxy: each stream becomes a child channel that reads HTTP/1-style request
/// parts and takes response parts (NIOHTTP2's codec), so that the handler serving
/// HTTP/1.1 serves a stream unchanged. A stream's response head names HTTP/2.0, and the
/// codec drops the fields HTTP/2 forbids (Connection, Transfer-Encoding, Keep-Alive).
public enum HTTP2Serving {
    /// The window each stream offers for a request body (NIOHTTP2's default is 64 KB).
    static let targetWindowSize = 1 << 20

    /// Adds the HTTP/2 connection handlers to `channel`; `stream` adds the handler above
    /// the codec of each stream the client opens.
    public static func add(to channel: Channel, onError: @escaping @Sendable (String) -> Void,
                           stream: @escaping @Sendable (Channel) -> EventLoopFuture<Void>) -> EventLoopFuture<Void> {
        channel.configureHTTP2Pipeline(mode: .server, targetWindowSize: targetWindowSize) { child in
            child.eventLoop.makeCompletedFuture {
                try child.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
            }.flatMap { stream(child) }
        }.flatMap { _ in
            channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(ConnectionErrors(onError: onError)) }
        }
    }

    /// Whether a request came over HTTP/2 (its stream's codec says HTTP/2.0).
    public static func isHTTP2(_ version: HTTPVersion) -> Bool { version.major == 2 }

    /// Says why an HTTP/2 connection failed (a protocol error from the client), and
    /// closes it.
    final class ConnectionErrors: ChannelInboundHandler, Sendable {
        typealias InboundIn = Any
        let onError: @Sendable (String) -> Void

        init(onError: @escaping @Sendable (String) -> Void) { self.onError = onError }

        func errorCaught(context: ChannelHandlerContext, error: Error) {
            if connectionFault(error) != nil {
                onError("HTTP/2 connection from \(context.channel.remoteAddress?.description ?? "a client") dropped: \(error)")
            }
            context.close(promise: nil)
        }
    }
}
