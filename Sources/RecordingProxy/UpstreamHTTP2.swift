import LocalCA
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS

// A new upstream connection, on the protocol the upstream offers: over TLS the proxy offers
// h2 and http/1.1 by ALPN (http/1.1 alone for a WebSocket handshake) and speaks what the
// upstream picks. HTTP/1.1 gets the request encoder, the response decoder and the reader in
// the connection's pipeline; h2 gets NIOHTTP2's multiplexer, and each exchange a stream
// of its own whose codec turns HTTP/2 frames into the same HTTP/1-style parts, so the
// reader and the relay above it work unchanged. The response's `httpVersion` in the
// recording says which it was (HTTP/2 or HTTP/1.1), beside the client's on the request.

extension ProxyHandler {
    /// An h2 connection's multiplexer, bound to the connection's event loop (it is not
    /// Sendable, and is only used there).
    typealias Multiplexer = NIOLoopBound<HTTP2StreamMultiplexer>

    /// Connects to `origin` and, once TLS and ALPN are done, hands back the exchange's
    /// channel: the connection itself (HTTP/1.1) or its first stream (h2).
    func connectUpstream(_ origin: Origin, on loop: EventLoop, webSocket: Bool) -> EventLoopFuture<Upstream> {
        let reader = UpstreamReader()
        let encoder = HTTPRequestEncoder()
        // Bytes after a 101 are the WebSocket's first frames: kept for its decoder.
        let decoder = ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes))
        let handlers = NIOLoopBound((reader, encoder, decoder), eventLoop: loop)
        let negotiated = loop.makePromise(of: Multiplexer?.self)
        let context = webSocket ? proxy.upstreamContextHTTP1 : proxy.upstreamContext
        let bound = NIOLoopBound(self, eventLoop: loop)
        let connected = ClientBootstrap(group: loop)
            .connectTimeout(proxy.configuration.connectTimeout)
            .channelOption(ChannelOptions.recvAllocator, value: RecordingProxy.readBuffers(tls: origin.scheme == "https"))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let (reader, encoder, decoder) = handlers.value
                    try Self.addProtocolHandlers(to: channel, origin: origin, context: context, http1: [encoder, decoder, reader], negotiated: negotiated)
                }
            }
            .connect(host: origin.host, port: origin.port)
        connected.whenFailure { negotiated.fail($0) }
        // A TLS handshake that never ends counts against the connect timeout (a 504).
        let timeout = proxy.configuration.connectTimeout
        let timer = loop.scheduleTask(in: timeout) { negotiated.fail(ChannelError.connectTimeout(timeout)) }
        negotiated.futureResult.whenComplete { _ in timer.cancel() }
        return connected.flatMap { channel in
            negotiated.futureResult.flatMapError { error in
                channel.close(promise: nil)
                return loop.makeFailedFuture(error)
            }.flatMap { multiplexer in
                let (reader, encoder, decoder) = handlers.value
                let upstream = Upstream(origin: origin, channel: channel, connection: channel, reader: reader, encoder: encoder, decoder: decoder,
                                        multiplexer: multiplexer)
                guard multiplexer != nil else {
                    bound.value.upstream = upstream
                    return loop.makeSucceededFuture(upstream)
                }
                return bound.value.openStream(on: upstream)
            }
        }
    }

    /// Plain HTTP: the HTTP/1.1 handlers at once. HTTPS: TLS (SNI unless the host is an
    /// address), then by what ALPN chose, h2's multiplexer or the HTTP/1.1 handlers;
    /// `negotiated` completes with the multiplexer (nil for HTTP/1.1), or fails with the
    /// handshake's error (an untrusted certificate) or the close.
    static func addProtocolHandlers(to channel: Channel, origin: Origin, context: NIOSSLContext, http1: [ChannelHandler],
                                    negotiated: EventLoopPromise<Multiplexer?>) throws {
        let sync = channel.pipeline.syncOperations
        guard origin.scheme == "https" else {
            try sync.addHandlers(http1)
            negotiated.succeed(nil)
            return
        }
        let watch = NegotiationWatch(negotiated)
        let alpn = ApplicationProtocolNegotiationHandler { result, channel in
            let done: EventLoopFuture<Multiplexer?>
            if case .negotiated("h2") = result {
                done = channel.configureHTTP2Pipeline(mode: .client, initialLocalSettings: upstreamSettings, targetWindowSize: upstreamWindow, inboundStreamInitializer: nil)
                    .map { NIOLoopBound($0, eventLoop: channel.eventLoop) }
            } else {
                done = channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandlers(http1) }.map { nil }
            }
            return done.flatMap { multiplexer in
                channel.pipeline.removeHandler(watch).map { negotiated.succeed(multiplexer) }
            }
        }
        let sni = LocalCA.ipAddressBytes(origin.host) == nil ? origin.host : nil
        try sync.addHandlers([try NIOSSLClientHandler(context: context, serverHostname: sni), alpn, watch])
    }

    /// A new stream on an h2 connection for the next exchange, its codec and reader above
    /// it; the stream is this handler's upstream channel until its response ends.
    func openStream(on connection: Upstream) -> EventLoopFuture<Upstream> {
        let loop = connection.connection.eventLoop
        guard let multiplexer = connection.multiplexer else { return loop.makeSucceededFuture(connection) }
        let reader = UpstreamReader()
        let bound = NIOLoopBound(self, eventLoop: loop)
        return multiplexer.value.createStreamChannel { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandlers([HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: .https), reader])
            }
        }.map { stream in
            var upstream = connection
            upstream.channel = stream
            upstream.reader = reader
            upstream.encoder = nil
            upstream.decoder = nil
            bound.value.upstream = upstream
            return upstream
        }
    }
}

/// The flow-control window the proxy keeps open for an h2 upstream, per stream and for the
/// connection: HTTP/2's default of 64 KB let a 1 GB download through at 6 MB/s, a window's
/// worth per round trip, where nginx gave 700 MB/s straight (Tools/bench's streaming
/// stage, release build). 4 MB bounds what one stream buffers while its client is slow.
let upstreamWindow = 4 << 20
let upstreamSettings = nioDefaultSettings + [HTTP2Setting(parameter: .initialWindowSize, value: upstreamWindow)]

/// Fails the negotiation's promise when the connection fails or closes before ALPN is done
/// (a refused certificate), so that the exchange is answered with a 502 naming the cause.
/// Removed once the protocol's handlers are in place.
final class NegotiationWatch: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = Any
    let negotiated: EventLoopPromise<ProxyHandler.Multiplexer?>

    init(_ negotiated: EventLoopPromise<ProxyHandler.Multiplexer?>) { self.negotiated = negotiated }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        negotiated.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        negotiated.fail(UpstreamReader.Closed())
        context.fireChannelInactive()
    }
}
