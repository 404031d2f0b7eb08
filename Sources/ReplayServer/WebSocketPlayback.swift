import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOWebSocket
import TrafficModel

// A recorded WebSocket played back. A request matching a recorded handshake (a 101) that
// asks for a WebSocket is answered with a 101 of its own (the accept key computed from the
// client's), the HTTP handlers give way to frame codecs (NIOWebSocket), and the recorded
// server messages ("receive") are sent in order: each its recorded gap after the one
// before (the first, after its recorded offset from the handshake's start), no gap longer
// than `Configuration.webSocketMaxGap`. The client's messages do not steer the timeline:
// each is stored as an arrival (method WEBSOCKET) saying whether it is the recorded client
// message of the same place. The socket stays open after the last message until the client
// closes it; pings are answered.

enum WebSocketHandshake {
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// `Sec-WebSocket-Accept` for the client's key (RFC 6455, 4.2.2).
    static func accept(key: String) -> String {
        Data(Insecure.SHA1.hash(data: Data((key.trimmingCharacters(in: .whitespaces) + guid).utf8))).base64EncodedString()
    }

    /// The 101: the recorded headers that still hold (a chosen subprotocol, cookies), none
    /// that would promise what playback does not do (a compression extension), and the
    /// handshake's own.
    static func headers(recorded: HTTPHeaders, key: String) -> HTTPHeaders {
        var out = HTTPHeaders()
        let dropped: Set<String> = ["sec-websocket-accept", "sec-websocket-extensions", "content-length", "upgrade", "connection"]
        for (name, value) in recorded where !dropped.contains(name.lowercased()) { out.add(name: name, value: value) }
        out.add(name: "Upgrade", value: "websocket")
        out.add(name: "Connection", value: "Upgrade")
        out.add(name: "Sec-WebSocket-Accept", value: accept(key: key))
        return out
    }

    /// The server messages with the wait before each, from the 101.
    static func schedule(_ messages: [WebSocketMessage], start: Double, maxGap: Double) -> [(wait: Double, message: WebSocketMessage)] {
        var previous = start
        return messages.filter { $0.direction == .receive }.map { m in
            let wait = min(max(0, m.time - previous), maxGap)
            previous = max(previous, m.time)
            return (wait, m)
        }
    }
}

extension ReplayHandler {
    /// Answers a request matching a recorded handshake: a WebSocket request gets the 101 and
    /// the playback; any other request a 400 saying why.
    func startWebSocket(context: ChannelHandlerContext, head: HTTPRequestHead, recorded: HTTPHeaders, messages: [WebSocketMessage], ref: ReplayOrigin.Ref, target: String) {
        guard head.headers.first(name: "Upgrade")?.lowercased() == "websocket", let key = head.headers.first(name: "Sec-WebSocket-Key"), let layer else {
            let text = "h5replay serve: \(head.uri) was recorded as a WebSocket handshake; this request asks for no WebSocket\n"
            let headers = HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", String(text.utf8.count)), ("Connection", "close")])
            write(context, HTTPResponseHead(version: head.version, status: .badRequest, headers: headers), ByteBuffer(string: text), keepAlive: false, isHead: false)
            return
        }
        let exchange = server.recordings[ref.recording].exchanges[ref.sequence]
        let playback = WebSocketPlayback(
            server: server, ref: ref, target: target,
            schedule: WebSocketHandshake.schedule(messages, start: exchange.startedAt, maxGap: server.configuration.webSocketMaxGap),
            recordedSends: messages.filter { $0.direction == .send })
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .switchingProtocols, headers: WebSocketHandshake.headers(recorded: recorded, key: key)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        let frameLimit = min(max(server.configuration.maxBodyBytes, 16 << 20), Int(UInt32.max))
        do {
            try context.pipeline.syncOperations.addHandlers([ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: frameLimit)), WebSocketFrameEncoder(), playback])
        } catch {
            server.onFault?("WebSocket \(target): the playback could not start: \(error)")
            context.close(promise: nil)
            return
        }
        // The HTTP handlers leave (the decoder last, handing on the bytes after the
        // handshake); the first message goes out on the loop's next turn.
        layer.remove(from: context.channel)
        context.eventLoop.execute { playback.sendNext() }
    }
}

/// One WebSocket's playback on its connection: the recorded server messages on their
/// timeline, the client's messages stored as arrivals.
final class WebSocketPlayback: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    let server: ReplayServer
    let ref: ReplayOrigin.Ref
    let target: String
    let schedule: [(wait: Double, message: WebSocketMessage)]
    let recordedSends: [WebSocketMessage]
    var context: ChannelHandlerContext?
    var next = 0
    var timer: Scheduled<Void>?
    /// The client's messages so far, and the one being put together from fragments.
    var clientMessages = 0
    var partial: (opcode: WebSocketOpcode, data: ByteBuffer)?

    init(server: ReplayServer, ref: ReplayOrigin.Ref, target: String, schedule: [(wait: Double, message: WebSocketMessage)], recordedSends: [WebSocketMessage]) {
        self.server = server
        self.ref = ref
        self.target = target
        self.schedule = schedule
        self.recordedSends = recordedSends
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        self.context = nil
    }

    /// Waits the next message's gap, sends it, and goes on to the one after.
    func sendNext() {
        guard let context, next < schedule.count else { return }
        let (wait, message) = schedule[next]
        timer = context.eventLoop.scheduleTask(in: .microseconds(Int64(wait * 1_000_000))) { [self] in
            guard let context = self.context else { return }
            let opcode: WebSocketOpcode = message.opcode == 2 ? .binary : .text
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: opcode, data: context.channel.allocator.buffer(bytes: message.data))), promise: nil)
            next += 1
            sendNext()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text, .binary:
            partial = (frame.opcode, frame.unmaskedData)
        case .continuation:
            var more = frame.unmaskedData
            partial?.data.writeBuffer(&more)
        case .ping:
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
            return
        case .connectionClose:
            // Echo the close, then end the connection.
            let close = WebSocketFrame(fin: true, opcode: .connectionClose, data: frame.unmaskedData)
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(close)).whenComplete { _ in channel.close(promise: nil) }
            return
        default:
            return
        }
        guard frame.fin, let message = partial else { return }
        partial = nil
        arrived(opcode: message.opcode == .binary ? 2 : 1, data: Data(message.data.readableBytesView))
    }

    /// Stores a client message as an arrival: the handshake's target, method WEBSOCKET,
    /// the payload as its body, and in `:recorded` whether it is the recorded client
    /// message of the same place (`same`), another (`differs`), or one past them (`extra`).
    func arrived(opcode: Int, data: Data) {
        let position = clientMessages
        clientMessages += 1
        let verdict: String
        if position < recordedSends.count {
            let recorded = recordedSends[position]
            verdict = recorded.opcode == opcode && recorded.data == data ? "same" : "differs"
        } else {
            verdict = "extra"
        }
        let headers: HeaderList = [HeaderField(":opcode", String(opcode)), HeaderField(":message", String(position)), HeaderField(":recorded", verdict)]
        server.record(Arrival(time: Date().timeIntervalSince1970, method: Arrival.webSocketMethod, target: target, headers: headers, body: data, matched: ref, status: 101))
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        server.onFault?("WebSocket \(target): \(error)")
        context.close(promise: nil)
    }
}
