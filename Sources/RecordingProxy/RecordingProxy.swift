// RecordingProxy: `record --proxy`. A forward proxy for HTTP and HTTPS on SwiftNIO (CONNECT
// tunnels intercepted with a leaf from LocalCA, HTTP/2 inside them where the client
// offers it and to the upstream where it offers it, or passed through) that streams each response to the client as it arrives,
// relays WebSockets after their 101, passes faults on as a 502, a 504 or the same cut, and
// hands each completed exchange to its caller, which stores it.

import Foundation
import HTTPWire
// LocalCA is re-exported: a caller builds the `TLSContexts` the configuration takes from it.
@_exported import LocalCA
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
/// connection kept per client connection; its response reaches the client chunk by chunk
/// as the upstream sends it (an event stream or a large download is not held back), while
/// the first `maxBodyBytes` of its body are kept for the recording. Once the response ends
/// (or is cut), the exchange is handed to `onExchange` as the client saw it (bodies decoded
/// of their content coding, as a capture import stores them). A WebSocket's 101 turns the
/// connection into a relay of frames (WebSocketRelay.swift), reported when it closes.
/// A client that picks h2 inside an intercepted tunnel gets HTTP/2 (LocalCA's
/// HTTP2Serving): each stream has a handler and an upstream connection of its own
/// while it lasts, kept alive for the connection's next stream (UpstreamPool.swift).
/// Upstream, the proxy speaks what the upstream offers by ALPN: h2 or HTTP/1.1
/// (UpstreamHTTP2.swift).
///
/// Files: this one (configuration, listening), ProxyHandler.swift (a client connection:
/// requests, CONNECT), ResponseStream.swift (an upstream response read as it comes, and
/// the recording's copy of it), ResponseRelay.swift (the response written to the client),
/// WebSocketRelay.swift, Tunnel.swift (pass-through CONNECT), UpstreamPool.swift,
/// UpstreamHTTP2.swift (a new upstream connection, h2 or HTTP/1.1), BodySpool.swift (the
/// kept body past a megabyte, in a file).
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
        /// The largest request body taken (a larger one is answered 413), and the most of a
        /// response body, or of a WebSocket's message data, the recording keeps: the client
        /// still gets every byte.
        public var maxBodyBytes: Int
        public var connectTimeout: TimeAmount
        /// How long an upstream has to send its response's head; the body then takes as
        /// long as it takes (an event stream, a long download).
        public var responseTimeout: TimeAmount
        /// Where a kept body past its first megabyte is written while its response lasts
        /// (a file unlinked at once; see `SpoolFile`).
        public var spoolDirectory: String

        public init(host: String = "127.0.0.1", port: Int = 8080, tls: TLSContexts, noIntercept: [String] = [], upstreamTrust: UpstreamTrust = .system,
                    maxConnections: Int = 1024, maxBodyBytes: Int = 64 << 20, connectTimeout: TimeAmount = .seconds(10), responseTimeout: TimeAmount = .seconds(60),
                    spoolDirectory: String = NSTemporaryDirectory()) {
            self.host = host
            self.port = port
            self.tls = tls
            self.noIntercept = noIntercept
            self.upstreamTrust = upstreamTrust
            self.maxConnections = maxConnections
            self.maxBodyBytes = maxBodyBytes
            self.connectTimeout = connectTimeout
            self.responseTimeout = responseTimeout
            self.spoolDirectory = spoolDirectory
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

    /// One exchange as it crossed the proxy.
    public struct Proxied: Sendable {
        /// The request and the response as the client got them; a WebSocket handshake's
        /// carries the messages relayed after its 101.
        public var exchange: Exchange
        /// Why there is no response: the client got a 502 of the proxy's own.
        public var failure: String?
        /// Why the response stopped short (the upstream or the client closed mid-body): the
        /// client got the bytes that came, then a close, as it would have without the proxy.
        public var incomplete: String?
        /// The body's whole length when it was longer than `maxBodyBytes`: the client got
        /// every byte, the exchange keeps the first `maxBodyBytes`.
        public var receivedBodyBytes: Int?
        /// The file holding the exchange's response body when it is past a megabyte: the
        /// same bytes as `exchange.response.body` (mapped from it), to be read from here
        /// by a writer that must not bring the whole body into memory.
        public var keptBodyFile: SpoolFile?
        /// The number its `Progress.begun` carried, when its beginning was reported.
        public var begun: Int?

        public init(exchange: Exchange, failure: String? = nil, incomplete: String? = nil, receivedBodyBytes: Int? = nil, keptBodyFile: SpoolFile? = nil,
                    begun: Int? = nil) {
            self.exchange = exchange
            self.begun = begun
            self.keptBodyFile = keptBodyFile
            self.failure = failure
            self.incomplete = incomplete
            self.receivedBodyBytes = receivedBodyBytes
        }
    }

    /// What an exchange still going has done so far, for a caller that keeps a record a
    /// killed process leaves behind (the journal's side file).
    public enum Progress: Sendable {
        /// The exchange, numbered `id`, goes on: its response head reached the client and
        /// its body streams, or it became a WebSocket. `incomplete` is the reason to record
        /// if it never ends (the process stopped).
        case begun(id: Int, exchange: Exchange, incomplete: String)
        /// A message of the WebSocket begun as `id`.
        case message(id: Int, WebSocketMessage)
    }

    let configuration: Configuration
    let group: MultiThreadedEventLoopGroup
    let channel = NIOLockedValueBox<Channel?>(nil)
    let onExchange: @Sendable (Proxied) -> Void
    let onFault: @Sendable (String) -> Void
    let onProgress: (@Sendable (Progress) -> Void)?
    let begunCount = NIOLockedValueBox(0)
    /// Upstream TLS offering h2 and http/1.1 by ALPN; and http/1.1 alone, for a WebSocket
    /// handshake (its 101 must take the connection, not a stream).
    let upstreamContext: NIOSSLContext
    let upstreamContextHTTP1: NIOSSLContext
    let connections: ConnectionLimit
    let connectionCount = NIOLockedValueBox(0)

    public init(configuration: Configuration, threads: Int = System.coreCount, onExchange: @escaping @Sendable (Proxied) -> Void, onFault: @escaping @Sendable (String) -> Void,
                onProgress: (@Sendable (Progress) -> Void)? = nil) throws {
        self.configuration = configuration
        self.onProgress = onProgress
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
        self.onExchange = onExchange
        self.onFault = onFault
        self.connections = ConnectionLimit(maximum: configuration.maxConnections)
        var client = TLSConfiguration.makeClientConfiguration()
        switch configuration.upstreamTrust {
        case .system: break
        case .adding(let roots): client.additionalTrustRoots = [.certificates(roots)]
        case .none: client.certificateVerification = .none
        }
        client.applicationProtocols = ["h2", "http/1.1"]
        self.upstreamContext = try NIOSSLContext(configuration: client)
        client.applicationProtocols = ["http/1.1"]
        self.upstreamContextHTTP1 = try NIOSSLContext(configuration: client)
    }

    /// The buffer each read of a socket fills. It grows while reads fill it: up to 1 MB on a
    /// plain connection, so that a long body moves in few large reads and writes (each write
    /// to a loopback client wakes it; 1 MB took a download from 0.4x to 0.8x of straight,
    /// Tools/bench), and stays small on a connection that carries small messages. Over TLS
    /// NIO's default (64 KB): records are 16 KB and the cipher is the cost, so larger reads
    /// gave no speed and only held more memory.
    static func readBuffers(tls: Bool) -> AdaptiveRecvByteBufferAllocator {
        tls ? AdaptiveRecvByteBufferAllocator() : AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 1 << 20)
    }

    /// Binds and starts; returns the bound port.
    public func start() throws -> Int {
        FreedMemory.keepBriefly()
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .childChannelOption(ChannelOptions.recvAllocator, value: Self.readBuffers(tls: false))
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

    /// Reports `flight` as begun, numbering it, when a caller listens.
    func begin(_ flight: InFlight, connectionID: String, serverAddress: String?, incomplete: String) {
        guard let onProgress else { return }
        let id = begunCount.withLockedValue { n in defer { n += 1 }; return n }
        flight.begun = id
        onProgress(.begun(id: id, exchange: flight.exchange(connectionID: connectionID, serverAddress: serverAddress, now: Date().timeIntervalSince1970),
                          incomplete: incomplete))
    }

    func nextConnectionID() -> String {
        "proxy-" + String(connectionCount.withLockedValue { n in defer { n += 1 }; return n })
    }

    /// The HTTP/1.1 server handlers and the proxy above them; `tunnel` is the origin a
    /// CONNECT opened (its requests are origin-form), nil on the proxy's own port.
    func addHTTP(to channel: Channel, tunnel: ProxyHandler.Origin?, connectionID: String? = nil) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            let proxy = ProxyHandler(proxy: self, tunnel: tunnel, connectionID: connectionID ?? self.nextConnectionID())
            proxy.layer = try HTTPServerLayer.add(to: channel, top: proxy)
        }
    }

    /// One HTTP/2 stream of an intercepted tunnel whose client chose h2: a proxy handler of
    /// its own above the stream's codec, forwarding over an HTTP/1.1 upstream connection
    /// of its own while its response lasts (taken from and given back to `pool`).
    func addStream(_ stream: Channel, tunnel: ProxyHandler.Origin, connectionID: String, pool: UpstreamPool) -> EventLoopFuture<Void> {
        stream.eventLoop.makeCompletedFuture {
            try stream.pipeline.syncOperations.addHandler(ProxyHandler(proxy: self, tunnel: tunnel, connectionID: connectionID, pool: pool))
        }
    }
}
