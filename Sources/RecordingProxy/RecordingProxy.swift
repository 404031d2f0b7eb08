import Foundation
import HTTPWire
import LocalCA
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import TrafficModel

/// A forward proxy that records: plain HTTP requests in absolute form are forwarded, and
/// `CONNECT host:443` tunnels are opened with a certificate the local CA mints for the host
/// (TLS intercepted) unless the host is excluded, in which case the tunnel passes bytes
/// through untouched (certificate-pinned APIs). Each exchange is forwarded upstream over a
/// connection kept per client connection and, once its response is complete, handed to
/// `onExchange` as the client saw it (bodies decoded of their content coding, as a capture
/// import stores them).
public final class RecordingProxy: Sendable {
    /// How upstream certificates are checked.
    public enum UpstreamTrust: Sendable {
        /// Against the system's trust store (the default).
        case system
        /// The system's store and these extra roots (`--upstream-ca FILE`).
        case adding([NIOSSLCertificate])
        /// Not at all (`--insecure-upstream`, for test servers).
        case none

        /// The system's store and the roots in a PEM file.
        public static func adding(pemFile path: String) throws -> UpstreamTrust {
            do {
                return .adding(try NIOSSLCertificate.fromPEMFile(path))
            } catch {
                throw InputError(file: path, problem: "not a PEM certificate file: \(error)")
            }
        }
    }

    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        public var tls: TLSContexts
        /// Hosts whose CONNECT tunnels are passed through, not intercepted.
        public var noIntercept: [String]
        public var upstreamTrust: UpstreamTrust
        public var maxConnections: Int
        public var maxBodyBytes: Int
        public var connectTimeout: TimeAmount
        public var responseTimeout: TimeAmount

        public init(host: String = "127.0.0.1", port: Int = 8080, tls: TLSContexts, noIntercept: [String] = [], upstreamTrust: UpstreamTrust = .system,
                    maxConnections: Int = 1024, maxBodyBytes: Int = 64 << 20, connectTimeout: TimeAmount = .seconds(10), responseTimeout: TimeAmount = .seconds(60)) {
            self.host = host
            self.port = port
            self.tls = tls
            self.noIntercept = noIntercept
            self.upstreamTrust = upstreamTrust
            self.maxConnections = maxConnections
            self.maxBodyBytes = maxBodyBytes
            self.connectTimeout = connectTimeout
            self.responseTimeout = responseTimeout
        }

        /// Whether `host` is excluded: an exact name, or `*.example.com` for its subdomains.
        public func passesThrough(_ host: String) -> Bool {
            let host = host.lowercased()
            return noIntercept.contains { pattern in
                let pattern = pattern.lowercased()
                if pattern.hasPrefix("*.") { return host.hasSuffix(pattern.dropFirst()) }
                return host == pattern
            }
        }
    }

    /// One exchange as it crossed the proxy; `failure` says why there is no response.
    public struct Proxied: Sendable {
        public var exchange: Exchange
        public var failure: String?
    }

    let configuration: Configuration
    let group: MultiThreadedEventLoopGroup
    let channel = NIOLockedValueBox<Channel?>(nil)
    let onExchange: @Sendable (Proxied) -> Void
    let onFault: @Sendable (String) -> Void
    let upstreamContext: NIOSSLContext
    let connections: ConnectionLimit
    let connectionCount = NIOLockedValueBox(0)

    public init(configuration: Configuration, threads: Int = System.coreCount, onExchange: @escaping @Sendable (Proxied) -> Void, onFault: @escaping @Sendable (String) -> Void) throws {
        self.configuration = configuration
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
        self.onExchange = onExchange
        self.onFault = onFault
        self.connections = ConnectionLimit(maximum: configuration.maxConnections)
        var client = TLSConfiguration.makeClientConfiguration()
        client.applicationProtocols = ["http/1.1"]
        switch configuration.upstreamTrust {
        case .system: break
        case .adding(let roots): client.additionalTrustRoots = [.certificates(roots)]
        case .none: client.certificateVerification = .none
        }
        self.upstreamContext = try NIOSSLContext(configuration: client)
    }

    /// Binds and starts; returns the bound port.
    public func start() throws -> Int {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                guard self.admit(channel) else { return channel.close() }
                return self.addHTTP(to: channel, tunnel: nil)
            }
        let bound = try bootstrap.bind(host: configuration.host, port: configuration.port).wait()
        channel.withLockedValue { $0 = bound }
        return bound.localAddress?.port ?? configuration.port
    }

    public func stop() {
        if let bound = channel.withLockedValue({ $0 }) { try? bound.close().wait() }
        try? group.syncShutdownGracefully()
    }

    func admit(_ channel: Channel) -> Bool {
        guard connections.admit(channel) else {
            onFault("connection from \(channel.remoteAddress?.description ?? "a client") refused: \(configuration.maxConnections) already open")
            return false
        }
        return true
    }

    func nextConnectionID() -> String {
        "proxy-" + String(connectionCount.withLockedValue { n in defer { n += 1 }; return n })
    }

    /// The HTTP/1.1 server handlers and the proxy above them; `tunnel` is the origin a
    /// CONNECT opened (its requests are origin-form), nil on the proxy's own port.
    func addHTTP(to channel: Channel, tunnel: ProxyHandler.Origin?) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            let proxy = ProxyHandler(proxy: self, tunnel: tunnel, connectionID: self.nextConnectionID())
            proxy.layer = try HTTPServerLayer.add(to: channel, top: proxy)
        }
    }
}

/// One client connection: reads each request, forwards it, answers with the upstream's
/// response, and reports the exchange.
final class ProxyHandler: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    struct Origin: Hashable, Sendable {
        var scheme: String
        var host: String
        var port: Int
        var authority: String { port == RequestTarget.defaultPort(scheme) ? host : "\(host):\(port)" }
    }

    let proxy: RecordingProxy
    let tunnel: Origin?
    let connectionID: String
    /// The HTTP handlers below this one, which a CONNECT replaces.
    var layer: HTTPServerLayer?
    var collector: RequestCollector
    var started = 0.0
    /// The upstream connection kept for this client connection, with the origin it is to.
    var upstream: (origin: Origin, channel: Channel, reader: UpstreamReader)?

    init(proxy: RecordingProxy, tunnel: Origin?, connectionID: String) {
        self.proxy = proxy
        self.tunnel = tunnel
        self.connectionID = connectionID
        self.collector = RequestCollector(maxBodyBytes: proxy.configuration.maxBodyBytes)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if let why = connectionFault(error) {
            proxy.onFault("connection from \(context.remoteAddress?.description ?? "a client") dropped: \(why)")
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        upstream?.channel.close(promise: nil)
        upstream = nil
        context.fireChannelInactive()
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

    func forward(context: ChannelHandlerContext, head: HTTPRequestHead, body: ByteBuffer, tooLarge: Bool) {
        let url: String
        let origin: Origin
        if let tunnel {
            url = "\(tunnel.scheme)://\(tunnel.authority)\(head.uri.hasPrefix("/") ? head.uri : "/" + head.uri)"
            origin = tunnel
        } else if let target = RequestTarget(head.uri), target.scheme == "http" {
            url = head.uri
            origin = Origin(scheme: "http", host: target.host, port: target.port)
        } else {
            answer(context, head, .badRequest, "h5replay record --proxy: send requests in absolute form (use this address as an HTTP proxy), or HTTPS through CONNECT\n")
            return
        }
        if tooLarge {
            proxy.onFault("\(head.method.rawValue) \(url): request body over \(proxy.configuration.maxBodyBytes) bytes; answered 413, not recorded")
            answer(context, head, .payloadTooLarge, "h5replay record --proxy: request body over --max-body-bytes\n", close: true)
            return
        }
        let requestBody = body
        let requestHead = head
        let recordedRequest = RecordedRequest(method: head.method.rawValue, url: url, httpVersion: Self.version(head.version),
                                              headers: HeaderList(head.headers.lazy.map { HeaderField($0.name, $0.value) }), body: Data(requestBody.readableBytesView))
        let started = self.started
        let loop = context.eventLoop
        let bound = NIOLoopBound((self, context), eventLoop: loop)
        upstreamChannel(for: origin, on: loop).flatMap { (channel, reader) -> EventLoopFuture<UpstreamReader.Response> in
            var upstreamHeaders = requestHead.headers
            for name in ["Proxy-Connection", "Proxy-Authorization", "Keep-Alive"] { upstreamHeaders.remove(name: name) }
            if !upstreamHeaders.contains(name: "Host") { upstreamHeaders.add(name: "Host", value: origin.authority) }
            let target = RequestTarget(url)?.pathAndQuery ?? "/"
            let promise = loop.makePromise(of: UpstreamReader.Response.self)
            reader.expect(promise, maxBodyBytes: bound.value.0.proxy.configuration.maxBodyBytes, timeout: bound.value.0.proxy.configuration.responseTimeout)
            channel.write(HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: requestHead.method, uri: target, headers: upstreamHeaders)), promise: nil)
            if requestBody.readableBytes > 0 { channel.write(HTTPClientRequestPart.body(.byteBuffer(requestBody)), promise: nil) }
            channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
            return promise.futureResult
        }.whenComplete { result in
            let (handler, context) = bound.value
            let duration = Date().timeIntervalSince1970 - started
            // HAR's serverIPAddress: the address connected to, not the name.
            let address = handler.upstream?.channel.remoteAddress?.ipAddress
            switch result {
            case .success(let response):
                handler.relay(context, request: requestHead, response: response)
                handler.report(Exchange(sequence: 0, startedAt: started, duration: duration, connectionID: handler.connectionID, serverAddress: address,
                                        request: recordedRequest, response: Self.recorded(response)), failure: nil)
                if !response.keepAlive {
                    handler.upstream?.channel.close(promise: nil)
                    handler.upstream = nil
                }
            case .failure(let error):
                handler.upstream?.channel.close(promise: nil)
                handler.upstream = nil
                let why = Self.explain(error, origin: origin)
                handler.proxy.onFault("\(requestHead.method.rawValue) \(url): \(why)")
                handler.answer(context, requestHead, .badGateway, "h5replay record --proxy: \(why)\n")
                handler.report(Exchange(sequence: 0, startedAt: started, duration: duration, connectionID: handler.connectionID, serverAddress: address,
                                        request: recordedRequest, response: RecordedResponse(status: 0, bodyMissing: true)), failure: why)
            }
        }
    }

    func report(_ exchange: Exchange, failure: String?) {
        proxy.onExchange(RecordingProxy.Proxied(exchange: exchange, failure: failure))
    }

    /// The response as the client receives it: the upstream's head and bytes, unchanged
    /// but for hop-by-hop fields.
    func relay(_ context: ChannelHandlerContext, request: HTTPRequestHead, response: UpstreamReader.Response) {
        var headers = response.head.headers
        for name in ["Keep-Alive", "Proxy-Connection"] { headers.remove(name: name) }
        let keepAlive = request.isKeepAlive
        if headers.contains(name: "Transfer-Encoding") {
            headers.remove(name: "Transfer-Encoding")
            headers.replaceOrAdd(name: "Content-Length", value: String(response.body.readableBytes))
        } else if !headers.contains(name: "Content-Length"), request.method != .HEAD, ![204, 304].contains(response.head.status.code) {
            headers.add(name: "Content-Length", value: String(response.body.readableBytes))
        }
        if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: response.head.status, headers: headers))), promise: nil)
        if response.body.readableBytes > 0, request.method != .HEAD { context.write(wrapOutboundOut(.body(.byteBuffer(response.body))), promise: nil) }
        let done = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: done)
        if !keepAlive {
            let channel = context.channel
            done.futureResult.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    func answer(_ context: ChannelHandlerContext, _ head: HTTPRequestHead, _ status: HTTPResponseStatus, _ text: String, close: Bool = false) {
        var headers = HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", String(text.utf8.count))])
        let keepAlive = head.isKeepAlive && !close
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

    /// The connection to `origin`: the one kept if it is to the same origin and open, else
    /// a new one (TLS for https, its certificate checked as configured).
    func upstreamChannel(for origin: Origin, on loop: EventLoop) -> EventLoopFuture<(Channel, UpstreamReader)> {
        if let upstream, upstream.origin == origin, upstream.channel.isActive {
            return loop.makeSucceededFuture((upstream.channel, upstream.reader))
        }
        upstream?.channel.close(promise: nil)
        upstream = nil
        let reader = UpstreamReader()
        let context = proxy.upstreamContext
        let bound = NIOLoopBound(self, eventLoop: loop)
        return ClientBootstrap(group: loop)
            .connectTimeout(proxy.configuration.connectTimeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if origin.scheme == "https" {
                        let sni = LocalCA.ipAddressBytes(origin.host) == nil ? origin.host : nil
                        try sync.addHandler(try NIOSSLClientHandler(context: context, serverHostname: sni))
                    }
                    try sync.addHTTPClientHandlers()
                    try sync.addHandler(reader)
                }
            }
            .connect(host: origin.host, port: origin.port)
            .map { channel in
                bound.value.upstream = (origin, channel, reader)
                return (channel, reader)
            }
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
        layer.switchToTunnel(channel) {
            proxy.configuration.tls.addServer(to: channel, fallbackHost: host, onError: { proxy.onFault($0) }) { channel, _, _ in
                proxy.addHTTP(to: channel, tunnel: origin)
            }
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

    // MARK: - Recording

    static func version(_ v: HTTPVersion) -> String { "HTTP/\(v.major).\(v.minor)" }

    /// The response as a recording holds it: the body decoded of its content coding (the
    /// headers keep Content-Encoding), the coded length kept.
    static func recorded(_ response: UpstreamReader.Response) -> RecordedResponse {
        let headers = HeaderList(response.head.headers.lazy.map { HeaderField($0.name, $0.value) })
        var body = Data(response.body.readableBytesView)
        let coded = body.count
        if let coding = response.head.headers.first(name: "Content-Encoding"),
           let decoded = try? ContentDecoder().decodeIfEncoded([UInt8](body), contentEncoding: coding) {
            body = Data(decoded.bytes)
        }
        return RecordedResponse(status: Int(response.head.status.code), statusText: response.head.status.reasonPhrase, httpVersion: version(response.head.version),
                                headers: headers, body: body, encodedLength: coded)
    }

    static func explain(_ error: Error, origin: ProxyHandler.Origin) -> String {
        let text = String(describing: error)
        if error is ChannelError, case .connectTimeout = error as! ChannelError { return "the upstream \(origin.authority) did not accept a connection in time" }
        if text.contains("connectionRefused") || text.contains("Connection refused") { return "the upstream \(origin.authority) refused the connection" }
        if let timeout = error as? UpstreamReader.Timeout { return "the upstream \(origin.authority) sent no complete response in \(timeout.seconds) s" }
        if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("certificate") {
            return "the upstream \(origin.authority)'s certificate is not trusted (--upstream-ca FILE adds a root; --insecure-upstream skips the check) [\(text)]"
        }
        if let tooLarge = error as? UpstreamReader.TooLarge {
            return "the upstream \(origin.authority)'s response body is over \(tooLarge.limit) bytes (--max-body-bytes)"
        }
        if error is UpstreamReader.Closed { return "the upstream \(origin.authority) closed the connection before a complete response" }
        return "upstream \(origin.authority): \(text)"
    }
}

/// Collects one upstream response at a time.
final class UpstreamReader: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPClientResponsePart

    struct Response {
        var head: HTTPResponseHead
        var body: ByteBuffer
        var keepAlive: Bool
    }
    struct Closed: Error {}
    struct TooLarge: Error { var limit: Int }
    struct Timeout: Error { var seconds: Int64 }

    var promise: EventLoopPromise<Response>?
    var head: HTTPResponseHead?
    var body = ByteBuffer()
    var maxBodyBytes = Int.max
    var timer: Scheduled<Void>?

    func expect(_ promise: EventLoopPromise<Response>, maxBodyBytes: Int, timeout: TimeAmount) {
        self.promise = promise
        self.maxBodyBytes = maxBodyBytes
        head = nil
        body.clear()
        timer = promise.futureResult.eventLoop.scheduleTask(in: timeout) { [self] in
            self.fail(Timeout(seconds: timeout.nanoseconds / 1_000_000_000))
        }
    }

    func fail(_ error: Error) {
        timer?.cancel()
        let p = promise
        promise = nil
        p?.fail(error)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            // 1xx informational responses are not the answer.
            if h.status.code >= 100, h.status.code < 200, h.status.code != 101 { return }
            head = h
        case .body(var chunk):
            guard promise != nil else { return }
            if body.readableBytes + chunk.readableBytes > maxBodyBytes {
                // Never a cut body passed off as the response: the client gets a 502 and
                // the recording says why.
                body.clear()
                fail(TooLarge(limit: maxBodyBytes))
                context.close(promise: nil)
                return
            }
            body.writeBuffer(&chunk)
        case .end:
            guard let head else { return }
            timer?.cancel()
            let p = promise
            promise = nil
            p?.succeed(Response(head: head, body: body, keepAlive: head.isKeepAlive))
            self.head = nil
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(Closed())
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        fail(error)
        context.close(promise: nil)
    }
}

/// A CONNECT tunnel passed through untouched: bytes each way, a close on one side closing
/// the other (a half-closed side is closed whole).
enum Tunnel {
    /// Connects to the upstream with one glue handler in its pipeline; returns its partner,
    /// for the client's pipeline.
    static func connect(to origin: ProxyHandler.Origin, from client: Channel, proxy: RecordingProxy) -> EventLoopFuture<GlueHandler> {
        let (clientSide, upstreamSide) = GlueHandler.pair()
        let bound = NIOLoopBound((upstreamSide, clientSide), eventLoop: client.eventLoop)
        return ClientBootstrap(group: client.eventLoop)
            .connectTimeout(proxy.configuration.connectTimeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(bound.value.0) }
            }
            .connect(host: origin.host, port: origin.port)
            .map { _ in bound.value.1 }
    }
}

final class GlueHandler: ChannelDuplexHandler, @unchecked Sendable {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    var partner: GlueHandler?
    var context: ChannelHandlerContext?

    static func pair() -> (GlueHandler, GlueHandler) {
        let a = GlueHandler()
        let b = GlueHandler()
        a.partner = b
        b.partner = a
        return (a, b)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        partner?.context?.writeAndFlush(data, promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner?.context?.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, case .inputClosed = event {
            // One side finished sending: the tunnel is done.
            partner?.context?.close(promise: nil)
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}
