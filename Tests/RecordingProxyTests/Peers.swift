import Foundation
import LocalCA
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import RecordingProxy
import Testing

// The peers the proxy tests put around the proxy, all on loopback in this process: a
// scripted origin that writes raw bytes with pauses (to stream, to cut a response short),
// a WebSocket echo origin (NIOWebSocket), and a raw client that notes when each byte came.

/// The proxy under test, with a CA of its own in a temporary folder, and what it reported.
final class ProxyUnderTest: @unchecked Sendable {
    let folder: URL
    let ca: LocalCA
    let contexts: TLSContexts
    let proxy: RecordingProxy
    let port: Int
    let reported = NIOLockedValueBox<[RecordingProxy.Proxied]>([])
    let faults = NIOLockedValueBox<[String]>([])

    init(maxBodyBytes: Int = 64 << 20, trust: RecordingProxy.UpstreamTrust = .none, connectTimeout: TimeAmount = .seconds(10), responseTimeout: TimeAmount = .seconds(5)) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("proxy-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        ca = try LocalCA.create(LocalCA.Files(directory: folder.path))
        contexts = TLSContexts(ca: ca)
        let reported = self.reported
        let faults = self.faults
        proxy = try RecordingProxy(configuration: .init(port: 0, tls: contexts, upstreamTrust: trust, maxBodyBytes: maxBodyBytes,
                                                        connectTimeout: connectTimeout, responseTimeout: responseTimeout, spoolDirectory: folder.path),
                                   threads: 1, onExchange: { item in reported.withLockedValue { $0.append(item) } },
                                   onFault: { line in faults.withLockedValue { $0.append(line) } })
        port = try proxy.start()
    }

    /// The exchanges reported, once `count` are (within `timeout` seconds).
    func exchanges(_ count: Int, timeout: Double = 5) -> [RecordingProxy.Proxied] {
        let deadline = Date().addingTimeInterval(timeout)
        while reported.withLockedValue({ $0.count }) < count, Date() < deadline { usleep(5_000) }
        return reported.withLockedValue { $0 }
    }

    func stop() {
        proxy.stop()
        try? FileManager.default.removeItem(at: folder)
    }
}

/// An origin that, once a request's head has arrived, plays a script: bytes written as
/// they are, pauses, and a close (each request on a connection plays it anew); over TLS
/// when given a context. It counts the connections accepted and closed, and the requests.
final class ScriptedOrigin: @unchecked Sendable {
    enum Step: Sendable {
        case send(String)
        /// This many megabytes of "x", written as fast as the peer takes them.
        case megabytes(Int)
        case pause(Double)
        case close
    }

    /// Bytes of `.megabytes` the peer has taken (written to the socket).
    let written = NIOLockedValueBox(0)
    let requests = NIOLockedValueBox(0)
    let closed = NIOLockedValueBox(0)
    let accepted = NIOLockedValueBox(0)

    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    var channel: Channel!
    var port: Int { channel.localAddress!.port! }

    init(_ script: [Step], tls: NIOSSLContext? = nil) throws {
        channel = try ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [written, requests, closed, accepted] channel in
                accepted.withLockedValue { $0 += 1 }
                return channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let tls { try sync.addHandler(NIOSSLServerHandler(context: tls)) }
                    try sync.addHandler(Player(script, written: written, requests: requests, closed: closed))
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
    }

    func stop() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    final class Player: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        var request: [UInt8] = []
        var playing = false
        let script: [Step]
        let written, requests, closed: NIOLockedValueBox<Int>

        init(_ script: [Step], written: NIOLockedValueBox<Int>, requests: NIOLockedValueBox<Int>, closed: NIOLockedValueBox<Int>) {
            self.script = script
            self.written = written
            self.requests = requests
            self.closed = closed
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            request += unwrapInboundIn(data).readableBytesView
            startIfAsked(context.channel)
        }

        /// Plays the script once a request's head is there (and not already playing); the
        /// next request on the connection plays it again.
        func startIfAsked(_ channel: Channel) {
            guard !playing, let end = String(decoding: request, as: UTF8.self).range(of: "\r\n\r\n") else { return }
            request.removeFirst(String(decoding: request, as: UTF8.self)[..<end.upperBound].utf8.count)
            playing = true
            requests.withLockedValue { $0 += 1 }
            play(ArraySlice(script), channel: channel)
        }

        func channelInactive(context: ChannelHandlerContext) {
            closed.withLockedValue { $0 += 1 }
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: Error) {
            context.close(promise: nil)
        }

        func play(_ steps: ArraySlice<Step>, channel: Channel) {
            guard let step = steps.first else {
                playing = false
                startIfAsked(channel)
                return
            }
            let rest = steps.dropFirst()
            switch step {
            case .send(let text):
                channel.writeAndFlush(ByteBuffer(string: text)).whenComplete { _ in self.play(rest, channel: channel) }
            case .megabytes(let count):
                let megabyte = ByteBuffer(repeating: UInt8(ascii: "x"), count: 1 << 20)
                for n in 0..<count {
                    channel.write(megabyte).whenSuccess { self.written.withLockedValue { $0 += 1 << 20 } }
                    if n % 8 == 7 { channel.flush() }
                }
                channel.writeAndFlush(ByteBuffer()).whenComplete { _ in self.play(rest, channel: channel) }
            case .pause(let seconds):
                channel.eventLoop.scheduleTask(in: .milliseconds(Int64(seconds * 1000))) { self.play(rest, channel: channel) }
            case .close:
                channel.close(promise: nil)
            }
        }
    }
}

/// A WebSocket origin that echoes each text and binary message, over TLS when given a
/// context (a leaf of the test's CA).
final class EchoWebSocketOrigin: @unchecked Sendable {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    var channel: Channel!
    var port: Int { channel.localAddress!.port! }

    init(tls: NIOSSLContext? = nil) throws {
        channel = try ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let tls { try sync.addHandler(NIOSSLServerHandler(context: tls)) }
                    let upgrader = NIOWebSocketServerUpgrader(
                        shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Echo()) }
                        })
                    try sync.configureHTTPServerPipeline(withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
    }

    func stop() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    final class Echo: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = WebSocketFrame
        typealias OutboundOut = WebSocketFrame

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            switch frame.opcode {
            case .text, .binary:
                context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: frame.opcode, data: frame.unmaskedData)), promise: nil)
            case .connectionClose:
                let closed = context.channel
                context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: frame.unmaskedData))).whenComplete { _ in
                    closed.close(promise: nil)
                }
            default:
                break
            }
        }
    }
}

/// A client speaking raw bytes, that keeps what arrived, when, and whether the connection
/// closed; it can start TLS in the middle (after a CONNECT's 200).
final class RawClient: @unchecked Sendable {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let channel: Channel
    let keeper = Keeper()

    /// `reading: false` reads nothing until `startReading` (a client slower than the
    /// proxy); `keeping: false` counts the bytes without keeping them (a large body).
    init(port: Int, reading: Bool = true, keeping: Bool = true) throws {
        let keeper = self.keeper
        keeper.keeping = keeping
        channel = try ClientBootstrap(group: group)
            .channelOption(ChannelOptions.autoRead, value: reading)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(keeper) }
            }
            .connect(host: "127.0.0.1", port: port).wait()
    }

    func send(_ text: String) { send(Array(text.utf8)) }
    func send(_ bytes: [UInt8]) { channel.writeAndFlush(ByteBuffer(bytes: bytes), promise: nil) }

    func startReading() {
        channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in self.channel.read() }
    }

    var count: Int { keeper.state.withLockedValue { $0.count } }
    var received: [UInt8] { keeper.state.withLockedValue { $0.bytes } }
    var text: String { String(decoding: received, as: UTF8.self) }
    var closed: Bool { keeper.state.withLockedValue { $0.closed } }

    /// Waits up to `timeout` seconds for `done` to hold of what arrived; whether it did.
    @discardableResult
    func wait(_ timeout: Double = 5, until done: (RawClient) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !done(self) {
            if Date() > deadline { return false }
            usleep(2_000)
        }
        return true
    }

    /// When the bytes up to the end of the first `marker` had arrived (seconds since 1970).
    func arrival(of marker: String) -> Double? {
        guard let range = text.range(of: marker) else { return nil }
        let end = text.utf8.distance(from: text.startIndex, to: range.upperBound)
        return keeper.state.withLockedValue { state in state.arrivals.first { $0.total >= end }?.time }
    }

    /// Starts TLS to `serverName`, trusting `root`, and forgets what arrived before.
    func startTLS(serverName: String, root: NIOSSLCertificate) throws {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates([root])
        let context = try NIOSSLContext(configuration: configuration)
        keeper.state.withLockedValue { $0 = Keeper.State() }
        try channel.eventLoop.submit {
            try self.channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: context, serverHostname: serverName), position: .first)
        }.wait()
    }

    func stop() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    final class Keeper: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        struct State {
            var bytes: [UInt8] = []
            var count = 0
            var arrivals: [(time: Double, total: Int)] = []
            var closed = false
        }
        let state = NIOLockedValueBox(State())
        /// Set before the connection opens.
        var keeping = true

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            let now = Date().timeIntervalSince1970
            guard keeping else {
                state.withLockedValue { $0.count += buffer.readableBytes }
                return
            }
            let bytes = Array(buffer.readableBytesView)
            state.withLockedValue { state in
                state.bytes += bytes
                state.count = state.bytes.count
                state.arrivals.append((now, state.bytes.count))
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            state.withLockedValue { $0.closed = true }
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: Error) {
            context.close(promise: nil)
        }
    }
}

/// WebSocket frames as a client writes them (masked) and as a server's are read (small,
/// unmasked), for the raw client.
enum Frames {
    static func masked(opcode: UInt8, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
        precondition(payload.count < 126)
        let key: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        return [(fin ? 0x80 : 0) | opcode, 0x80 | UInt8(payload.count)] + key + payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
    }

    /// The frames in `bytes`, read from the start; stops at an incomplete one.
    static func read(_ bytes: ArraySlice<UInt8>) -> [(opcode: UInt8, payload: [UInt8])] {
        var frames: [(UInt8, [UInt8])] = []
        var i = bytes.startIndex
        while i + 2 <= bytes.endIndex {
            let opcode = bytes[i] & 0x0F
            let length = Int(bytes[i + 1] & 0x7F)
            guard length < 126, i + 2 + length <= bytes.endIndex else { break }
            frames.append((opcode, Array(bytes[(i + 2)..<(i + 2 + length)])))
            i += 2 + length
        }
        return frames
    }
}

/// Whether `condition` came to hold within `timeout` seconds (checked every 2 ms).
func eventually(_ timeout: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        if Date() > deadline { return false }
        usleep(2_000)
    }
    return true
}

/// A listening socket that never accepts, its queue filled by connections of its own: a
/// further connection's SYN is dropped, and its connect times out (an upstream that does
/// not answer at the TCP level).
final class FullListener {
    let listener: Int32
    var fillers: [Int32] = []
    let port: Int

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && listen(listener, 0) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        guard bound else { throw POSIXError(.EADDRNOTAVAIL) }
        port = Int(UInt16(bigEndian: address.sin_port))
        for _ in 0..<3 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            _ = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            fillers.append(filler)
        }
    }

    func stop() {
        for fd in fillers + [listener] { close(fd) }
    }
}

/// A TLS server context for `host`, its certificate from `ca`, offering HTTP/1.1 alone by
/// ALPN: for an origin that writes raw HTTP/1.1 bytes. One offering h2 as well would be
/// taken at its word by the proxy, which speaks h2 to an upstream that offers it.
func http1Context(_ ca: LocalCA, for host: String) throws -> NIOSSLContext {
    try TLSContexts(ca: ca, protocols: ["http/1.1"]).context(for: host)
}
