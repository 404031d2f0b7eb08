import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing
import TrafficModel
@testable import ReplayServer

/// A client on loopback speaking raw bytes, keeping what arrived and when.
final class LoopbackClient: @unchecked Sendable {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let channel: Channel
    let keeper = Keeper()

    init(port: Int) throws {
        let keeper = self.keeper
        channel = try ClientBootstrap(group: group)
            .channelInitializer { channel in channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(keeper) } }
            .connect(host: "127.0.0.1", port: port).wait()
    }

    func send(_ text: String) { send(Array(text.utf8)) }
    func send(_ bytes: [UInt8]) { channel.writeAndFlush(ByteBuffer(bytes: bytes), promise: nil) }

    var received: [UInt8] { keeper.state.withLockedValue { $0.bytes } }
    var text: String { String(decoding: received, as: UTF8.self) }
    var closed: Bool { keeper.state.withLockedValue { $0.closed } }

    @discardableResult
    func wait(_ timeout: Double = 5, until done: (LoopbackClient) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !done(self) {
            if Date() > deadline { return false }
            usleep(2_000)
        }
        return true
    }

    /// When the bytes up to the end of `marker` had arrived (seconds since 1970).
    func arrival(of marker: String) -> Double? {
        let needle = Array(marker.utf8), bytes = received
        guard bytes.count >= needle.count,
              let at = (0...(bytes.count - needle.count)).first(where: { Array(bytes[$0..<($0 + needle.count)]) == needle }) else { return nil }
        let end = at + needle.count
        return keeper.state.withLockedValue { state in state.arrivals.first { $0.total >= end }?.time }
    }

    func stop() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    final class Keeper: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        struct State {
            var bytes: [UInt8] = []
            var arrivals: [(time: Double, total: Int)] = []
            var closed = false
        }
        let state = NIOLockedValueBox(State())

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = Array(unwrapInboundIn(data).readableBytesView)
            let now = Date().timeIntervalSince1970
            state.withLockedValue { state in
                state.bytes += bytes
                state.arrivals.append((now, state.bytes.count))
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            state.withLockedValue { $0.closed = true }
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: Error) { context.close(promise: nil) }
    }
}

/// WebSocket frames as a client writes them (masked) and a server's read back (small, unmasked).
enum Frames {
    static func masked(opcode: UInt8, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
        precondition(payload.count < 126)
        let key: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        return [(fin ? 0x80 : 0) | opcode, 0x80 | UInt8(payload.count)] + key + payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
    }

    static func read(_ bytes: ArraySlice<UInt8>) -> [(opcode: UInt8, payload: [UInt8])] {
        var frames: [(UInt8, [UInt8])] = []
        var i = bytes.startIndex
        while i + 2 <= bytes.endIndex {
            let length = Int(bytes[i + 1] & 0x7F)
            guard length < 126, i + 2 + length <= bytes.endIndex else { break }
            frames.append((bytes[i] & 0x0F, Array(bytes[(i + 2)..<(i + 2 + length)])))
            i += 2 + length
        }
        return frames
    }

    /// The frames after the response head.
    static func afterHead(_ bytes: [UInt8]) -> [(opcode: UInt8, payload: [UInt8])] {
        let marker: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = (0...max(0, bytes.count - 4)).first(where: { Array(bytes[$0..<min($0 + 4, bytes.count)]) == marker }) else { return [] }
        return read(bytes[(end + 4)...])
    }
}

@Suite("serve plays back WebSockets and event streams")
struct PlaybackTests {
    static let start = 1_700_000_000.0
    /// A chat: the server greets 0.1 s after the handshake began, the client says hi, the
    /// server ticks 0.4 s after the greeting, sends three bytes 0.3 s later, and a last
    /// message 100 s after that (cut to the maximum gap).
    static let messages = [
        WebSocketMessage(direction: .receive, time: start + 0.1, opcode: 1, data: Data("welcome".utf8)),
        WebSocketMessage(direction: .send, time: start + 0.3, opcode: 1, data: Data("hi".utf8)),
        WebSocketMessage(direction: .receive, time: start + 0.5, opcode: 1, data: Data("tick-1".utf8)),
        WebSocketMessage(direction: .receive, time: start + 0.8, opcode: 2, data: Data([0, 1, 0xFF])),
        WebSocketMessage(direction: .receive, time: start + 100.8, opcode: 1, data: Data("late".utf8)),
    ]

    static var recording: Recording {
        let socket = Exchange(sequence: 0, startedAt: start, request: RecordedRequest(method: "GET", url: "http://chat.example/chat", headers: [HeaderField("Upgrade", "websocket")]),
                              response: RecordedResponse(status: 101, statusText: "Switching Protocols", headers: [HeaderField("Upgrade", "websocket"), HeaderField("Sec-WebSocket-Accept", "recorded-key"), HeaderField("Sec-WebSocket-Extensions", "permessage-deflate")]),
                              webSocketMessages: messages)
        let events = Exchange(sequence: 1, startedAt: start + 1, request: RecordedRequest(method: "GET", url: "http://chat.example/events"),
                              response: RecordedResponse(status: 200, headers: [HeaderField("Content-Type", "text/event-stream")], body: Data("data: one\n\ndata: two\r\n\r\nid: 3\ndata: three\n\n".utf8)))
        return Recording(name: "chat", sourceFormat: "har", exchanges: [socket, events])
    }

    static func serve(maxGap: Double = 0.5) throws -> (ReplayServer, Int) {
        let server = ReplayServer(origin: ReplayOrigin(recordings: [recording]), configuration: .init(port: 0, webSocketMaxGap: maxGap), threads: 1)
        return (server, try server.start())
    }

    static let handshake = "GET /chat HTTP/1.1\r\nHost: chat.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n"

    @Test("a recorded handshake is answered with a 101 and the server's messages come in order, with their recorded gaps, the longest cut to the maximum")
    func serverMessages() throws {
        let (server, port) = try Self.serve()
        defer { server.stop() }
        let client = try LoopbackClient(port: port)
        defer { client.stop() }
        let sent = Date().timeIntervalSince1970
        client.send(Self.handshake)
        #expect(client.wait(5) { $0.text.contains("late") }, "\(client.text)")
        let head = client.text.components(separatedBy: "\r\n\r\n")[0]
        #expect(head.hasPrefix("HTTP/1.1 101"))
        // RFC 6455's example key and its accept value; no compression promised.
        #expect(head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="))
        #expect(!head.contains("recorded-key") && !head.lowercased().contains("extensions"))
        let frames = Frames.afterHead(client.received)
        #expect(frames.map(\.opcode) == [1, 1, 2, 1])
        #expect(frames.map(\.payload) == [Array("welcome".utf8), Array("tick-1".utf8), [0, 1, 0xFF], Array("late".utf8)])
        let welcome = try #require(client.arrival(of: "welcome")), tick = try #require(client.arrival(of: "tick-1")), late = try #require(client.arrival(of: "late"))
        #expect(welcome - sent >= 0.09 && welcome - sent < 0.6, "greeting after \(welcome - sent) s")
        #expect(tick - welcome >= 0.38 && tick - welcome < 0.9, "tick \(tick - welcome) s after the greeting, recorded 0.4 s")
        // 0.3 s to the binary message, then 100 s cut to 0.5 s.
        #expect(late - tick >= 0.78 && late - tick < 1.6, "last message \(late - tick) s after the tick")
    }

    @Test("the client's messages are stored as arrivals under the handshake, each said to be the recorded one or not; a ping gets its pong, a close its close")
    func clientMessages() throws {
        let (server, port) = try Self.serve()
        defer { server.stop() }
        let client = try LoopbackClient(port: port)
        defer { client.stop() }
        client.send(Self.handshake)
        #expect(client.wait { $0.text.contains("welcome") })
        client.send(Frames.masked(opcode: 1, Array("h".utf8), fin: false) + Frames.masked(opcode: 0, Array("i".utf8)))
        client.send(Frames.masked(opcode: 2, [9, 9]))
        client.send(Frames.masked(opcode: 9, Array("are you there".utf8)))
        #expect(client.wait { Frames.afterHead($0.received).contains { $0.opcode == 10 } })
        #expect(Frames.afterHead(client.received).first { $0.opcode == 10 }?.payload == Array("are you there".utf8))
        let messages = { server.arrivals.filter { $0.method == "WEBSOCKET" } }
        #expect(client.wait { _ in messages().count == 2 })
        let arrivals = server.arrivals
        #expect(arrivals.first?.method == "GET" && arrivals.first?.status == 101)
        #expect(messages().map { String(decoding: $0.body, as: UTF8.self) } == ["hi", "\u{9}\u{9}"])
        #expect(messages().map { $0.headers.first(":recorded") } == ["same", "extra"])
        #expect(messages().map { $0.headers.first(":opcode") } == ["1", "2"])
        #expect(messages().allSatisfy { $0.matched == ReplayOrigin.Ref(recording: 0, sequence: 0) && $0.target == "/chat" })
        client.send(Frames.masked(opcode: 8, [0x03, 0xE8]))
        #expect(client.wait { $0.closed })
        #expect(Frames.afterHead(client.received).last.map { $0.opcode } == 8)
    }

    @Test("a request for a recorded handshake that asks for no WebSocket gets a 400 saying so")
    func notAWebSocket() throws {
        let (server, port) = try Self.serve()
        defer { server.stop() }
        let client = try LoopbackClient(port: port)
        defer { client.stop() }
        client.send("GET /chat HTTP/1.1\r\nHost: chat.example\r\n\r\n")
        #expect(client.wait { $0.closed })
        #expect(client.text.hasPrefix("HTTP/1.1 400"))
        #expect(client.text.contains("recorded as a WebSocket handshake"))
    }

    @Test("a recorded event stream is sent event by event: one chunk per event, as recorded")
    func eventStream() throws {
        let (server, port) = try Self.serve()
        defer { server.stop() }
        let client = try LoopbackClient(port: port)
        defer { client.stop() }
        client.send("GET /events HTTP/1.1\r\nHost: chat.example\r\nAccept: text/event-stream\r\n\r\n")
        #expect(client.wait { $0.text.hasSuffix("0\r\n\r\n") }, "\(client.text)")
        let parts = client.text.components(separatedBy: "\r\n\r\n")
        let head = parts[0].lowercased()
        #expect(head.hasPrefix("http/1.1 200") && head.contains("transfer-encoding: chunked") && !head.contains("content-length"))
        #expect(Self.chunks(String(client.text.utf8.dropFirst(parts[0].utf8.count + 4))!) == ["data: one\n\n", "data: two\r\n\r\n", "id: 3\ndata: three\n\n"])
    }

    /// The chunks of a chunked body, up to the last (empty) one.
    static func chunks(_ body: String) -> [String] {
        var bytes = Array(body.utf8)[...]
        // A chunk's size line and its end are CRLF; the events hold CRLFs of their own.
        var out: [String] = []
        while let lineEnd = bytes.indices.first(where: { bytes[$0] == 13 }) {
            guard let size = Int(String(decoding: bytes[bytes.startIndex..<lineEnd], as: UTF8.self), radix: 16), size > 0 else { break }
            let start = lineEnd + 2
            out.append(String(decoding: bytes[start..<(start + size)], as: UTF8.self))
            bytes = bytes[(start + size + 2)...]
        }
        return out
    }
}
