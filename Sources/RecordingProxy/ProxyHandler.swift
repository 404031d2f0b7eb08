import Foundation
import LocalCA
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import TrafficModel

/// One client connection: reads each request, forwards it, streams the upstream's response
/// back as it arrives, and reports the exchange when the response ends.
final class ProxyHandler: ChannelInboundHandler, RemovableChannelHandler, ResponseSink, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    struct Origin: Hashable, Sendable {
        var scheme: String
        var host: String
        var port: Int
        var authority: String { port == RequestTarget.defaultPort(scheme) ? host : "\(host):\(port)" }
    }

    /// The upstream connection kept for this client connection, with the HTTP handlers a
    /// WebSocket's 101 replaces. Over HTTP/2 (the upstream chose h2), `channel` is the
    /// exchange's stream and `connection` the TCP connection its streams share; over
    /// HTTP/1.1 both are the connection. Unchecked: it is only touched on the event loop
    /// the client and upstream connections share.
    struct Upstream: @unchecked Sendable {
        var origin: Origin
        var channel: Channel
        var connection: Channel
        var reader: UpstreamReader
        var encoder: HTTPRequestEncoder?
        var decoder: ByteToMessageHandler<HTTPResponseDecoder>?
        var multiplexer: Multiplexer?

        /// The connection can carry another exchange (over HTTP/2, on a new stream).
        var isOpen: Bool { multiplexer == nil ? channel.isActive : connection.isActive }

        var address: String? { connection.remoteAddress?.ipAddress }

        /// Closes the exchange's channel and the connection under it.
        func close() {
            channel.close(promise: nil)
            if multiplexer != nil { connection.close(promise: nil) }
        }
    }

    let proxy: RecordingProxy
    let tunnel: Origin?
    let connectionID: String
    /// The HTTP handlers below this one, which a CONNECT or a WebSocket replaces.
    var layer: HTTPServerLayer?
    var collector: RequestCollector
    var started = 0.0
    var context: ChannelHandlerContext?
    var upstream: Upstream?
    /// The exchange whose response is being relayed (one at a time: the pipelining handler
    /// below holds the next request until this response's end is written).
    var inFlight: InFlight?
    var clientGone = false
    /// On an HTTP/2 stream: the upstream connections the client connection's streams share.
    let pool: UpstreamPool?

    init(proxy: RecordingProxy, tunnel: Origin?, connectionID: String, pool: UpstreamPool? = nil) {
        self.proxy = proxy
        self.tunnel = tunnel
        self.connectionID = connectionID
        self.pool = pool
        self.collector = RequestCollector(maxBodyBytes: proxy.configuration.maxBodyBytes)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if let why = connectionFault(error) {
            // The channel's address, not the context's: on an HTTP/2 stream the context
            // asks the stream's core, which has none and stops the process.
            proxy.onFault("connection from \(context.channel.remoteAddress?.description ?? "a client") dropped: \(why)")
        }
        context.close(promise: nil)
    }

    /// The client went away: its upstream is closed, and a response being relayed is
    /// reported as cut (UpstreamReader sees the close).
    func channelInactive(context: ChannelHandlerContext) {
        clientLeft()
        context.fireChannelInactive()
    }

    /// The client closed its side of an HTTP/1.1 connection. From here a close and a
    /// half-close look alike, and no HTTP client half-closes while it waits for its answer:
    /// it went away, and the exchange in flight is aborted at once rather than when the
    /// next write to the client fails (an HTTP/2 stream's client resets it instead).
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let event = event as? ChannelEvent, case .inputClosed = event, layer != nil else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        clientLeft()
        context.close(promise: nil)
    }

    func clientLeft() {
        clientGone = true
        upstream?.close()
        upstream = nil
    }

    /// Back-pressure: the upstream is read no faster than the client takes the bytes. Turning
    /// reading back on also asks for a read: an h2 stream's channel does not start one
    /// itself, so a download over an h2 upstream stalled until the server gave up (nginx
    /// closed it after 60 s, 80 MB into 1 GB).
    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, let channel = upstream?.channel {
            channel.setOption(ChannelOptions.autoRead, value: true).whenSuccess { channel.read() }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if case .head = part { started = Date().timeIntervalSince1970 }
        guard let request = collector.add(part) else { return }
        if request.head.method == .CONNECT {
            connect(context: context, head: request.head)
        } else {
            forward(context: context, head: request.head, body: request.body, tooLarge: request.tooLarge)
        }
    }

    // MARK: - Requests

    /// The URL the request names and the origin to send it to; nil (answered 400) when
    /// the request is neither absolute-form HTTP nor inside a CONNECT tunnel.
    func destination(_ context: ChannelHandlerContext, _ head: HTTPRequestHead) -> (url: String, origin: Origin)? {
        if let tunnel {
            return ("\(tunnel.scheme)://\(tunnel.authority)\(head.uri.hasPrefix("/") ? head.uri : "/" + head.uri)", tunnel)
        }
        if let target = RequestTarget(head.uri), target.scheme == "http" {
            return (head.uri, Origin(scheme: "http", host: target.host, port: target.port))
        }
        answer(context, head, .badRequest, "h5replay record --proxy: send requests in absolute form (use this address as an HTTP proxy), or HTTPS through CONNECT\n")
        return nil
    }

    func forward(context: ChannelHandlerContext, head: HTTPRequestHead, body: ByteBuffer, tooLarge: Bool) {
        guard let (url, origin) = destination(context, head) else { return }
        if tooLarge {
            proxy.onFault("\(head.method.rawValue) \(url): request body over \(proxy.configuration.maxBodyBytes) bytes; answered 413, not recorded")
            answer(context, head, .payloadTooLarge, "h5replay record --proxy: request body over --max-body-bytes\n", close: true)
            return
        }
        let recorded = RecordedRequest(method: head.method.rawValue, url: url, httpVersion: Self.version(head.version),
                                       headers: HeaderList(head.headers.lazy.map { HeaderField($0.name, $0.value) }), body: Data(body.readableBytesView))
        inFlight = InFlight(head: head, recorded: recorded, origin: origin, url: url, started: started, bodyLimit: proxy.configuration.maxBodyBytes,
                            spoolDirectory: proxy.configuration.spoolDirectory)
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let timeout = proxy.configuration.responseTimeout
        let webSocket = head.headers[canonicalForm: "Upgrade"].contains { $0.lowercased() == "websocket" }
        upstreamChannel(for: origin, on: context.eventLoop, webSocket: webSocket).whenComplete { result in
            let handler = bound.value
            switch result {
            case .success(let upstream):
                upstream.reader.expect(handler, timeout: timeout, on: upstream.channel.eventLoop)
                guard !handler.clientGone else {
                    // The client left while the upstream was being reached: the close reports it.
                    upstream.close()
                    return
                }
                Self.send(head, body: body, to: upstream.channel, origin: origin, url: url)
            case .failure(let error):
                handler.upstreamFailed(error, afterHead: false)
            }
        }
    }

    /// Writes the request upstream in origin form, without the hop-by-hop fields meant for
    /// the proxy. A WebSocket handshake loses its extension offer: a compressed message
    /// (permessage-deflate) would be recorded as bytes no one can read.
    static func send(_ head: HTTPRequestHead, body: ByteBuffer, to channel: Channel, origin: Origin, url: String) {
        var headers = head.headers
        for name in ["Proxy-Connection", "Proxy-Authorization", "Keep-Alive", "Sec-WebSocket-Extensions"] { headers.remove(name: name) }
        if !headers.contains(name: "Host") { headers.add(name: "Host", value: origin.authority) }
        let target = RequestTarget(url)?.pathAndQuery ?? "/"
        channel.write(HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: head.method, uri: target, headers: headers)), promise: nil)
        if body.readableBytes > 0 { channel.write(HTTPClientRequestPart.body(.byteBuffer(body)), promise: nil) }
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
    }

    func report(_ item: RecordingProxy.Proxied) {
        proxy.onExchange(item)
    }

    func answer(_ context: ChannelHandlerContext, _ head: HTTPRequestHead, _ status: HTTPResponseStatus, _ text: String, close: Bool = false) {
        var headers = HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", String(text.utf8.count))])
        let keepAlive = (head.isKeepAlive || HTTP2Serving.isHTTP2(head.version)) && !close
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: text)))), promise: nil)
        let done = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: done)
        if !keepAlive {
            let channel = context.channel
            done.futureResult.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    /// The connection to `origin`: the one kept if it is to the same origin and open (over
    /// HTTP/2, a new stream on it), else a new one (UpstreamHTTP2.swift). A WebSocket
    /// handshake takes an HTTP/1.1 connection: its 101 turns the connection into the socket.
    func upstreamChannel(for origin: Origin, on loop: EventLoop, webSocket: Bool) -> EventLoopFuture<Upstream> {
        if let upstream, upstream.origin == origin, upstream.isOpen, upstream.multiplexer == nil || !webSocket {
            return upstream.multiplexer == nil ? loop.makeSucceededFuture(upstream) : openStream(on: upstream)
        }
        upstream?.close()
        upstream = pool?.take(origin)
        if let upstream, upstream.multiplexer == nil || !webSocket {
            return upstream.multiplexer == nil ? loop.makeSucceededFuture(upstream) : openStream(on: upstream)
        }
        upstream?.close()
        upstream = nil
        return connectUpstream(origin, on: loop, webSocket: webSocket)
    }

    // MARK: - CONNECT

    func connect(context: ChannelHandlerContext, head: HTTPRequestHead) {
        let authority = head.uri
        let host = HTTPServerLayer.host(ofAuthority: authority)
        let port = authority.split(separator: ":").last.flatMap { Int($0) } ?? 443
        guard !host.isEmpty, tunnel == nil, let layer else {
            answer(context, head, .badRequest, "h5replay record --proxy: CONNECT needs host:port\n", close: true)
            return
        }
        let proxy = self.proxy
        let channel = context.channel
        let origin = Origin(scheme: "https", host: host, port: port)
        if proxy.configuration.passesThrough(host) {
            passThrough(context: context, head: head, to: origin, layer: layer)
            return
        }
        let established = HTTPResponseHead(version: head.version, status: .ok, headers: HTTPHeaders([("Content-Length", "0")]))
        context.write(wrapOutboundOut(.head(established)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        // One connection ID for the tunnel, shared by its HTTP/2 streams.
        let connectionID = proxy.nextConnectionID()
        let pool = NIOLoopBound(UpstreamPool(), eventLoop: context.eventLoop)
        channel.closeFuture.whenComplete { _ in pool.value.closeAll() }
        layer.switchToTunnel(channel) {
            channel.setOption(ChannelOptions.recvAllocator, value: RecordingProxy.readBuffers(tls: true)).whenFailure { _ in }
            return proxy.configuration.tls.addServer(to: channel, fallbackHost: host, onError: { proxy.onFault($0) },
                                              then: { channel, _, _ in proxy.addHTTP(to: channel, tunnel: origin, connectionID: connectionID) },
                                              stream: { stream, _, _ in proxy.addStream(stream, tunnel: origin, connectionID: connectionID, pool: pool.value) })
        }.whenFailure { error in
            proxy.onFault("CONNECT \(authority): \(Self.explain(error, origin: origin))")
            channel.close(promise: nil)
        }
    }

    /// A tunnel passed through: the upstream connected first (a refusal is a 502, as for any
    /// request), then the 200 and the HTTP handlers making way for bytes copied each way, in
    /// one turn of the loop, so that whatever the client does after the 200 (a half-close)
    /// meets the tunnel.
    func passThrough(context: ChannelHandlerContext, head: HTTPRequestHead, to origin: Origin, layer: HTTPServerLayer) {
        let proxy = self.proxy
        let channel = context.channel
        let bound = NIOLoopBound((self, context, layer), eventLoop: context.eventLoop)
        Tunnel.connect(to: origin, from: channel, proxy: proxy).whenComplete { result in
            let (handler, context, layer) = bound.value
            switch result {
            case .failure(let error):
                let why = Self.explain(error, origin: origin)
                proxy.onFault("CONNECT \(origin.authority) (passed through): \(why)")
                handler.answer(context, head, .badGateway, "h5replay record --proxy: \(why)\n", close: true)
            case .success(let glue):
                do {
                    try channel.pipeline.syncOperations.addHandler(glue)
                    let established = HTTPResponseHead(version: head.version, status: .ok, headers: HTTPHeaders([("Content-Length", "0")]))
                    context.write(handler.wrapOutboundOut(.head(established)), promise: nil)
                    context.writeAndFlush(handler.wrapOutboundOut(.end(nil)), promise: nil)
                    layer.remove(from: channel)
                } catch {
                    proxy.onFault("CONNECT \(origin.authority): the tunnel could not start: \(error)")
                    channel.close(promise: nil)
                }
            }
        }
    }

    // MARK: - Words

    /// As HAR writes it; HTTP/2 as the importer reads Chrome's `h2`.
    static func version(_ v: HTTPVersion) -> String { HTTP2Serving.isHTTP2(v) ? "HTTP/2" : "HTTP/\(v.major).\(v.minor)" }

    static func explain(_ error: Error, origin: ProxyHandler.Origin) -> String {
        let text = String(describing: error)
        if let channelError = error as? ChannelError, case .connectTimeout = channelError { return "the upstream \(origin.authority) did not accept a connection in time" }
        if text.contains("connectionRefused") || text.contains("Connection refused") { return "the upstream \(origin.authority) refused the connection" }
        if let timeout = error as? UpstreamReader.Timeout { return "the upstream \(origin.authority) sent no response head in \(timeout.seconds) s" }
        if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("certificate") {
            return "the upstream \(origin.authority)'s certificate is not trusted (--upstream-ca FILE adds a root; --insecure-upstream skips the check) [\(text)]"
        }
        if error is UpstreamReader.Closed { return "the upstream \(origin.authority) closed the connection before it answered" }
        if error is ClientClosed { return "aborted: the client closed the connection before the upstream \(origin.authority) answered" }
        return "upstream \(origin.authority): \(text)"
    }

    /// Whether the upstream failed by taking too long (a 504, not a 502).
    static func isTimeout(_ error: Error) -> Bool {
        if let channelError = error as? ChannelError, case .connectTimeout = channelError { return true }
        return error is UpstreamReader.Timeout
    }

    struct ClientClosed: Error {}
}
