import Foundation
import NIOConcurrencyHelpers
import NIOCore
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
    public var headers: [HeaderField]
    public var body: Data
    /// The recorded exchange that answered it; nil when nothing matched.
    public var matched: ReplayOrigin.Ref?
    public var status: Int
}

/// What `serve` does when no recorded exchange matches a request.
public enum MissPolicy: String, Sendable, CaseIterable {
    case notFound = "404"
    case badGateway = "502"
    case close
}

/// The replay origin over real HTTP/1.1 (SwiftNIO, DESIGN.md section 4): serves the
/// recorded responses and logs every arrival.
public final class ReplayServer: Sendable {
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        public var onMiss: MissPolicy

        public init(host: String = "127.0.0.1", port: Int = 8080, onMiss: MissPolicy = .notFound) {
            self.host = host
            self.port = port
            self.onMiss = onMiss
        }
    }

    let state: NIOLockedValueBox<State>
    let configuration: Configuration
    let group: MultiThreadedEventLoopGroup
    let channel: NIOLockedValueBox<Channel?>
    /// Called after each arrival, off the event loop's critical path (a log line).
    let onArrival: (@Sendable (Arrival) -> Void)?

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
    }

    let prepared: [ReplayOrigin.Ref: Prepared]

    public init(origin: ReplayOrigin, configuration: Configuration = Configuration(), threads: Int = System.coreCount, onArrival: (@Sendable (Arrival) -> Void)? = nil) {
        self.state = NIOLockedValueBox(State(origin: origin))
        var prepared: [ReplayOrigin.Ref: Prepared] = [:]
        let allocator = ByteBufferAllocator()
        for (r, recording) in origin.recordings.enumerated() {
            for e in recording.exchanges {
                let response = e.response
                prepared[ReplayOrigin.Ref(recording: r, sequence: e.sequence)] = Prepared(
                    status: HTTPResponseStatus(statusCode: response.status == 0 ? 502 : response.status, reasonPhrase: response.statusText),
                    headers: Self.responseHeaders(response, hosts: origin.hosts, proxied: false),
                    proxiedHeaders: Self.responseHeaders(response, hosts: origin.hosts, proxied: true),
                    body: allocator.buffer(bytes: response.body))
            }
        }
        self.prepared = prepared
        self.configuration = configuration
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
        self.channel = NIOLockedValueBox(nil)
        self.onArrival = onArrival
    }

    /// Binds and starts serving; returns the bound port (useful with port 0).
    public func start() throws -> Int {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline(withErrorHandling: true).flatMap {
                    channel.pipeline.addHandler(ReplayHandler(server: self))
                }
            }
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(ChannelOptions.maxMessagesPerRead, value: 16)
        let bound = try bootstrap.bind(host: configuration.host, port: configuration.port).wait()
        channel.withLockedValue { $0 = bound }
        return bound.localAddress?.port ?? configuration.port
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
    func respond(method: String, target: String, headers: HTTPHeaders, body: Data) -> (Arrival, Prepared?, proxied: Bool) {
        let host = headers.first(name: "Host")
        let proxied = RequestTarget(target) != nil
        let fields = headers.map { HeaderField($0.name, $0.value) }
        let time = Date().timeIntervalSince1970
        let (arrival, ref) = state.withLockedValue { state -> (Arrival, ReplayOrigin.Ref?) in
            let ref = state.origin.match(method: method, target: target, host: host, body: body)
            let status = ref.map { state.origin.exchange($0).response.status } ?? (configuration.onMiss == .badGateway ? 502 : 404)
            let arrival = Arrival(time: time, method: method, target: target, headers: fields, body: body, matched: ref, status: status)
            state.arrivals.append(arrival)
            return (arrival, ref)
        }
        onArrival?(arrival)
        return (arrival, ref.flatMap { prepared[$0] }, proxied)
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
final class ReplayHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let server: ReplayServer
    var head: HTTPRequestHead?
    var body = ByteBuffer()

    init(server: ReplayServer) { self.server = server }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            head = h
            body.clear()
        case .body(var chunk):
            body.writeBuffer(&chunk)
        case .end:
            guard let head else { return }
            self.head = nil
            let bytes = Data(body.readableBytesView)
            let (_, response, proxied) = server.respond(method: head.method.rawValue, target: head.uri, headers: head.headers, body: bytes)
            let keepAlive = head.isKeepAlive
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
            if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
            write(context, HTTPResponseHead(version: head.version, status: response.status, headers: headers), response.body, keepAlive: keepAlive, isHead: head.method == .HEAD)
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
