// ReplayServer: `serve`. A real HTTP/1.1 origin on SwiftNIO, over TLS (HTTP/2 too, where
// the client chooses h2) and through CONNECT with LocalCA's certificates, that answers each
// arrival with the recorded response it matches (`ReplayOrigin`) and hands every `Arrival`
// to its caller. It detects nothing: Pipeline's `ObservedRun` holds the stored arrivals
// against the recording.

import Foundation
import NIOConcurrencyHelpers
import NIOCore
// LocalCA is re-exported: a caller builds the `TLSContexts` the configuration takes from it.
@_exported import LocalCA
import NIOHTTP1
import NIOPosix
import TrafficModel

/// One request as it reached `serve`: what a real client (an app with its own
/// interception, a browser, curl) actually sent.
public struct Arrival: Sendable {
    public var time: Double
    public var method: String
    /// The request-target as sent (origin form, or absolute form through the proxy).
    public var target: String
    public var headers: HeaderList
    public var body: Data
    /// The recorded exchange that answered it; nil when nothing matched.
    public var matched: ReplayOrigin.Ref?
    public var status: Int

    /// The method of a WebSocket client message's arrival (`WebSocketPlayback`): its target
    /// the handshake's, its body the payload, its headers `:opcode`, `:message` (the
    /// client's messages before it) and `:recorded` (same, differs or extra).
    public static let webSocketMethod = "WEBSOCKET"

    /// What a WebSocket message's arrival says of itself, for a log line; nil for a request.
    public var webSocketNote: String? {
        guard method == Self.webSocketMethod else { return nil }
        return "message \(headers.first(":message") ?? "?") \(headers.first(":recorded") ?? "")"
    }

    public init(time: Double, method: String, target: String, headers: HeaderList, body: Data, matched: ReplayOrigin.Ref?, status: Int) {
        self.time = time
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.matched = matched
        self.status = status
    }
}

/// What `serve` does when no recorded exchange matches a request.
public enum MissPolicy: String, Sendable, CaseIterable {
    case notFound = "404"
    case badGateway = "502"
    case close
}

/// The replay origin over real HTTP/1.1 (SwiftNIO, docs/design.md, "Replay"): serves the
/// recorded responses and logs every arrival.
public final class ReplayServer: Sendable {
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        public var onMiss: MissPolicy
        /// With TLS, one port is an HTTPS origin (the certificate named by SNI), an HTTP
        /// origin, and an HTTP proxy whose CONNECT tunnels are HTTPS to the recorded host.
        public var tls: TLSContexts?
        /// Connections open at once; more are closed as they arrive.
        public var maxConnections: Int
        /// Largest request body read; a larger one is answered 413 and the connection closed.
        public var maxBodyBytes: Int
        /// Whether `arrivals` keeps every arrival; off when the caller stores each as it
        /// comes (`onArrival`), so a long session stays flat in memory.
        public var keepsArrivals: Bool
        /// The longest wait, in seconds, between two recorded server messages of a
        /// WebSocket played back: a recorded gap longer than this is cut to it.
        public var webSocketMaxGap: Double

        public init(host: String = "127.0.0.1", port: Int = 8080, onMiss: MissPolicy = .notFound, tls: TLSContexts? = nil, maxConnections: Int = 1024, maxBodyBytes: Int = 64 << 20, keepsArrivals: Bool = true, webSocketMaxGap: Double = 10) {
            self.keepsArrivals = keepsArrivals
            self.webSocketMaxGap = webSocketMaxGap
            self.host = host
            self.port = port
            self.onMiss = onMiss
            self.tls = tls
            self.maxConnections = maxConnections
            self.maxBodyBytes = maxBodyBytes
        }
    }

    let state: NIOLockedValueBox<State>
    let configuration: Configuration
    let group: MultiThreadedEventLoopGroup
    let channel: NIOLockedValueBox<Channel?>
    /// Called after each arrival, off the event loop's critical path (a log line).
    let onArrival: (@Sendable (Arrival) -> Void)?
    /// Called with a line for each connection-level fault (a TLS handshake refused, a
    /// client speaking HTTP/2, a connection over the limit).
    let onFault: (@Sendable (String) -> Void)?
    let connections: ConnectionLimit

    struct State {
        var origin: ReplayOrigin
        var arrivals: [Arrival] = []
    }

    /// A recorded response ready to write: head fields and body, for a client on this
    /// origin and for one using it as a proxy. Built once per exchange, not per request.
    struct Prepared: Sendable {
        var status: HTTPResponseStatus
        var headers: HTTPHeaders
        var proxiedHeaders: HTTPHeaders
        var body: ByteBuffer
        /// A recorded WebSocket handshake (a 101): its messages, played back after it.
        var webSocket: [WebSocketMessage]?
        /// A recorded `text/event-stream` body, event by event.
        var events: [ByteBuffer]?
    }

    let prepared: [ReplayOrigin.Ref: Prepared]
    /// 304s whose entry kept the cached body, as the 200 a client without a validator gets.
    let freshFrom304: [ReplayOrigin.Ref: Prepared]

    public init(origin: ReplayOrigin, configuration: Configuration = Configuration(), threads: Int = System.coreCount, onArrival: (@Sendable (Arrival) -> Void)? = nil, onFault: (@Sendable (String) -> Void)? = nil) {
        self.state = NIOLockedValueBox(State(origin: origin))
        var prepared: [ReplayOrigin.Ref: Prepared] = [:]
        var freshFrom304: [ReplayOrigin.Ref: Prepared] = [:]
        let allocator = ByteBufferAllocator()
        for (r, recording) in origin.recordings.enumerated() {
            for e in recording.exchanges {
                let response = e.response
                let ref = ReplayOrigin.Ref(recording: r, sequence: e.sequence)
                let ready = Prepared(
                    status: HTTPResponseStatus(statusCode: response.status == 0 ? 502 : response.status, reasonPhrase: response.statusText),
                    headers: Self.responseHeaders(response, hosts: origin.hosts, proxied: false),
                    proxiedHeaders: Self.responseHeaders(response, hosts: origin.hosts, proxied: true),
                    body: allocator.buffer(bytes: response.body),
                    webSocket: response.status == 101 ? e.webSocketMessages : nil,
                    events: EventStream.isEventStream(response) ? EventStream.events(response.body, allocator: allocator) : nil)
                prepared[ref] = ready
                if response.status == 304, !response.body.isEmpty {
                    var fresh = ready
                    fresh.status = .ok
                    freshFrom304[ref] = fresh
                }
            }
        }
        self.prepared = prepared
        self.freshFrom304 = freshFrom304
        self.configuration = configuration
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
        self.channel = NIOLockedValueBox(nil)
        self.onArrival = onArrival
        self.onFault = onFault
        self.connections = ConnectionLimit(maximum: configuration.maxConnections)
    }

    /// Binds and starts serving; returns the bound port (useful with port 0).
    public func start() throws -> Int {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                guard self.admit(channel) else { return channel.close() }
                // The HTTP handlers as a layer a WebSocket's 101 can take away.
                guard let tls = self.configuration.tls else { return self.addHTTP(to: channel, tunnelHost: nil) }
                let fallback = self.configuration.host == "0.0.0.0" || self.configuration.host == "::" ? "localhost" : self.configuration.host
                return channel.pipeline.addHandler(ProtocolSniffer(
                    tls: { channel in
                        // Without SNI (a client given an address) the Host header decides.
                        tls.addServer(to: channel, fallbackHost: fallback, onError: { self.onFault?($0) },
                                      then: { channel, host, sentSNI in self.addHTTP(to: channel, tunnelHost: sentSNI ? host : nil) },
                                      stream: { stream, host, sentSNI in self.addStream(stream, tunnelHost: sentSNI ? host : nil) })
                    },
                    plain: { channel in self.addHTTP(to: channel, tunnelHost: nil) }))
            }
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(ChannelOptions.maxMessagesPerRead, value: 16)
        let bound = try bootstrap.bind(host: configuration.host, port: configuration.port).wait()
        channel.withLockedValue { $0 = bound }
        return bound.localAddress?.port ?? configuration.port
    }

    /// Counts the connection against the limit; false (and a line) when it is over.
    func admit(_ channel: Channel) -> Bool {
        guard connections.admit(channel) else {
            onFault?("connection from \(channel.remoteAddress?.description ?? "a client") refused: \(configuration.maxConnections) already open")
            return false
        }
        return true
    }

    /// Whether a recording holds requests to `host` (as a Host header names it).
    func servesHost(_ host: String) -> Bool {
        state.withLockedValue { $0.origin.hosts.contains(host.lowercased()) }
    }

    /// The HTTP/1.1 server handlers and the replay above them. Decoding stops at a CONNECT
    /// so that the bytes after it reach the TLS server that replaces these handlers.
    func addHTTP(to channel: Channel, tunnelHost: String?, tunnelPort: Int? = nil) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            let replay = ReplayHandler(server: self, tunnelHost: tunnelHost, tunnelPort: tunnelPort)
            replay.layer = try HTTPServerLayer.add(to: channel, top: replay)
        }
    }

    /// One HTTP/2 stream of a TLS connection whose client chose h2: the replay above the
    /// stream's codec, as for an HTTP/1.1 connection (no CONNECT or WebSocket in a stream).
    func addStream(_ stream: Channel, tunnelHost: String?, tunnelPort: Int? = nil) -> EventLoopFuture<Void> {
        stream.eventLoop.makeCompletedFuture {
            try stream.pipeline.syncOperations.addHandler(ReplayHandler(server: self, tunnelHost: tunnelHost, tunnelPort: tunnelPort))
        }
    }

    /// Stops accepting, closes the listening socket and the event loops.
    public func stop() {
        if let bound = channel.withLockedValue({ $0 }) { try? bound.close().wait() }
        try? group.syncShutdownGracefully()
    }

    /// Every arrival so far, in order.
    public var arrivals: [Arrival] { state.withLockedValue { $0.arrivals } }

    public var recordings: [Recording] { state.withLockedValue { $0.origin.recordings } }

    /// Answers one request: the matched exchange's prepared response, or nil for the miss
    /// policy.
    /// `asRecordedHost` overrides what the target's form says: whether the client believes
    /// it talks to the recorded host itself (responses unrewritten) or to this origin.
    func respond(method: String, target: String, headers: HTTPHeaders, body: Data, asRecordedHost: Bool? = nil) -> (Arrival, Prepared?, proxied: Bool) {
        let host = headers.first(name: "Host")
        let proxied = asRecordedHost ?? (RequestTarget(target) != nil)
        let fields = HeaderList(headers.lazy.map { HeaderField($0.name, $0.value) })
        let time = Date().timeIntervalSince1970
        // A client without a validator holds no cached copy: a 304 would leave it empty.
        let conditional = headers.contains(name: "If-None-Match") || headers.contains(name: "If-Modified-Since")
        let (arrival, ref) = state.withLockedValue { state -> (Arrival, ReplayOrigin.Ref?) in
            let ref = state.origin.match(method: method, target: target, host: host, body: body, conditional: conditional)
            let fresh = !conditional && ref.map { freshFrom304[$0] != nil } == true
            let status = fresh ? 200 : ref.map { state.origin.exchange($0).response.status } ?? (configuration.onMiss == .badGateway ? 502 : 404)
            let arrival = Arrival(time: time, method: method, target: target, headers: fields, body: body, matched: ref, status: status)
            if configuration.keepsArrivals { state.arrivals.append(arrival) }
            return (arrival, ref)
        }
        onArrival?(arrival)
        let answer = ref.flatMap { (conditional ? nil : freshFrom304[$0]) ?? prepared[$0] }
        return (arrival, answer, proxied)
    }

    /// Keeps an arrival made outside `respond` (a WebSocket's client message) and reports it.
    func record(_ arrival: Arrival) {
        if configuration.keepsArrivals { state.withLockedValue { $0.arrivals.append(arrival) } }
        onArrival?(arrival)
    }

    /// The recorded response as a client on this origin must see it: hop-by-hop and
    /// framing headers recomputed (the body is stored decoded), and, unless the client
    /// uses us as a proxy, recorded hosts' absolute Locations turned into paths and
    /// Set-Cookie without Domain and Secure, so that the browser stays on this origin and
    /// keeps the cookies.
    static func responseHeaders(_ response: RecordedResponse, hosts: Set<String>, proxied: Bool) -> HTTPHeaders {
        var out = HTTPHeaders()
        let dropped: Set<String> = ["content-length", "transfer-encoding", "content-encoding", "connection", "keep-alive", "proxy-connection", "upgrade", "trailer", "te"]
        for h in response.headers {
            let name = h.name.lowercased()
            if dropped.contains(name) || name.hasPrefix(":") { continue }
            var value = h.value
            if !proxied {
                if name == "location", let t = RequestTarget(value), hosts.contains(ReplayOrigin.hostKey(t)) {
                    value = t.pathAndQuery
                } else if name == "set-cookie" {
                    value = value.split(separator: ";", omittingEmptySubsequences: false).filter { part in
                        let attribute = part.trimmingCharacters(in: .whitespaces).lowercased()
                        return !(attribute.hasPrefix("domain=") || attribute == "secure" || attribute.hasPrefix("samesite=none"))
                    }.joined(separator: ";")
                }
            }
            out.add(name: h.name, value: value)
        }
        out.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
        return out
    }
}

/// One connection's requests: collects head and body, answers at the end of each.
final class ReplayHandler: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let server: ReplayServer
    /// Inside a CONNECT tunnel or on TLS whose client sent SNI: the host every request here
    /// is for. Its requests are stored and matched as `https://HOST/...`; when a recording
    /// holds that host they are answered as that host (recorded hosts left in Location and
    /// Set-Cookie), otherwise as this origin.
    let tunnelHost: String?
    /// A CONNECT tunnel's port when it is not 443: kept in the stored URL, as the
    /// recording has it (`https://localhost:45043/...`).
    let tunnelPort: Int?
    let tunnelIsRecorded: Bool
    var collector: RequestCollector
    /// The HTTP handlers below this one, removed with it when a CONNECT turns the
    /// connection into a tunnel (set by `ReplayServer.addHTTP`; nil on plain `serve`).
    var layer: HTTPServerLayer?

    init(server: ReplayServer, tunnelHost: String?, tunnelPort: Int? = nil) {
        self.server = server
        self.tunnelHost = tunnelHost
        self.tunnelPort = tunnelPort == 443 ? nil : tunnelPort
        self.tunnelIsRecorded = tunnelHost.map(server.servesHost) ?? false
        self.collector = RequestCollector(maxBodyBytes: server.configuration.maxBodyBytes)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // HTTPServerProtocolErrorHandler below has answered a parse error with 400.
        if let why = connectionFault(error) {
            server.onFault?("connection from \(context.remoteAddress?.description ?? "a client") dropped: \(why)")
        }
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let request = collector.add(unwrapInboundIn(data)) else { return }
        handle(context: context, head: request.head, body: request.body, tooLarge: request.tooLarge)
    }

    func handle(context: ChannelHandlerContext, head: HTTPRequestHead, body: ByteBuffer, tooLarge: Bool) {
        if head.method == .CONNECT {
            connect(context: context, head: head)
            return
        }
        if tooLarge {
            server.onFault?("\(head.method.rawValue) \(head.uri): body over \(server.configuration.maxBodyBytes) bytes; answered 413")
            let headers = HTTPHeaders([("Content-Length", "0"), ("Connection", "close")])
            write(context, HTTPResponseHead(version: head.version, status: .payloadTooLarge, headers: headers), ByteBuffer(), keepAlive: false, isHead: false)
            return
        }
        let bytes = Data(body.readableBytesView)
        let port = tunnelPort.map { ":\($0)" } ?? ""
        let target = tunnelHost.map { "https://\($0)\(port)\(head.uri.hasPrefix("/") ? head.uri : "/" + head.uri)" } ?? head.uri
        let (arrival, response, proxied) = server.respond(method: head.method.rawValue, target: target, headers: head.headers, body: bytes,
                                                    asRecordedHost: tunnelHost == nil ? nil : tunnelIsRecorded)
        // An HTTP/2 stream ends with its response; the connection stays.
        let keepAlive = head.isKeepAlive || HTTP2Serving.isHTTP2(head.version)
        guard let response else {
            if server.configuration.onMiss == .close {
                context.close(promise: nil)
                return
            }
            let status: HTTPResponseStatus = server.configuration.onMiss == .badGateway ? .badGateway : .notFound
            let text = "h5replay serve: no recorded exchange for \(head.method.rawValue) \(head.uri)\n"
            var headers = HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", String(text.utf8.count))])
            if !keepAlive { headers.add(name: "Connection", value: "close") }
            write(context, HTTPResponseHead(version: head.version, status: status, headers: headers), ByteBuffer(string: text), keepAlive: keepAlive, isHead: head.method == .HEAD)
            return
        }
        var headers = proxied ? response.proxiedHeaders : response.headers
        if let messages = response.webSocket, let ref = arrival.matched {
            startWebSocket(context: context, head: head, recorded: headers, messages: messages, ref: ref, target: target)
            return
        }
        if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        if let events = response.events, head.method != .HEAD {
            writeEvents(context, HTTPResponseHead(version: head.version, status: response.status, headers: headers), events, keepAlive: keepAlive)
            return
        }
        write(context, HTTPResponseHead(version: head.version, status: response.status, headers: headers), response.body, keepAlive: keepAlive, isHead: head.method == .HEAD)
    }

    /// `CONNECT host:port`: with TLS on, answers 200 and hands the connection to a TLS
    /// server presenting a certificate for `host`, with a replay for that host above it;
    /// without TLS, or for a port the recordings never used over TLS, answers 405.
    func connect(context: ChannelHandlerContext, head: HTTPRequestHead) {
        let authority = head.uri
        let host = HTTPServerLayer.host(ofAuthority: authority)
        let port = authority.lastIndex(of: ":").flatMap { Int(authority[authority.index(after: $0)...]) }
        guard let tls = server.configuration.tls, let layer, !host.isEmpty, tunnelHost == nil else {
            server.onFault?("CONNECT \(authority) refused: start `serve --tls` to serve HTTPS through the proxy")
            let text = "h5replay serve: CONNECT needs serve --tls\n"
            let headers = HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", String(text.utf8.count)), ("Connection", "close")])
            write(context, HTTPResponseHead(version: head.version, status: .methodNotAllowed, headers: headers), ByteBuffer(string: text), keepAlive: false, isHead: false)
            return
        }
        let server = self.server
        let channel = context.channel
        let established = HTTPResponseHead(version: head.version, status: .ok, headers: HTTPHeaders([("Content-Length", "0")]))
        context.write(wrapOutboundOut(.head(established)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        layer.switchToTunnel(channel) {
            tls.addServer(to: channel, fallbackHost: host, onError: { server.onFault?($0) },
                          then: { channel, name, _ in server.addHTTP(to: channel, tunnelHost: name, tunnelPort: port) },
                          stream: { stream, name, _ in server.addStream(stream, tunnelHost: name, tunnelPort: port) })
        }.whenFailure { error in
            server.onFault?("CONNECT \(authority): the tunnel could not start: \(error)")
            channel.close(promise: nil)
        }
    }

    func write(_ context: ChannelHandlerContext, _ head: HTTPResponseHead, _ body: ByteBuffer, keepAlive: Bool, isHead: Bool) {
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !isHead, body.readableBytes > 0 { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        guard !keepAlive else {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        let done = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: done)
        let channel = context.channel
        done.futureResult.whenComplete { _ in channel.close(promise: nil) }
    }
}
