import Foundation
import LocalCA
import NIOCore
import NIOHTTP1
import NIOWebSocket
import TrafficModel

// A WebSocket through the proxy: once the upstream answers the handshake with a 101, the
// client is sent that 101, the HTTP handlers on both connections give way to WebSocket
// frame codecs (NIOWebSocket), and frames are relayed both ways as they come, each data
// message recorded with its direction, time and opcode, as Chrome's HAR holds them in
// `_webSocketMessages`. The handshake exchange, carrying the messages, is reported when
// either side closes.

extension ProxyHandler {
    struct NotWebSocket: Error, CustomStringConvertible {
        var description: String { "the upstream switched to a protocol other than WebSocket, which the proxy does not relay" }
    }

    /// The 101 is complete: answer the client with it and turn both connections into a
    /// relay of frames. This handler leaves the client's pipeline with the HTTP handlers.
    func startWebSocket(_ flight: InFlight) {
        guard let context, let layer, let upstream, let encoder = upstream.encoder, let decoder = upstream.decoder, let response = flight.response,
              response.headers.first(name: "Upgrade")?.lowercased() == "websocket" else {
            upstreamFailed(NotWebSocket(), afterHead: false)
            return
        }
        inFlight = nil
        self.upstream = nil
        let session = WebSocketSession(flight: flight, connectionID: connectionID, serverAddress: upstream.address, proxy: proxy)
        proxy.begin(flight, connectionID: connectionID, serverAddress: session.serverAddress,
                    incomplete: "the recording proxy stopped (killed) during this WebSocket: the messages listed are those relayed until then")
        var headers = response.headers
        for name in ["Keep-Alive", "Proxy-Connection"] { headers.remove(name: name) }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: flight.head.version, status: .switchingProtocols, headers: headers))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        // The largest frame either side may send (a frame is relayed once whole): 16 MB, or
        // the recording's cap when larger, within what the decoder takes. A larger frame
        // ends the WebSocket, with a line saying so.
        let frameLimit = min(max(proxy.configuration.maxBodyBytes, 16 << 20), Int(UInt32.max))
        let (clientSide, upstreamSide) = WebSocketRelayHandler.pair(session)
        do {
            try context.pipeline.syncOperations.addHandlers([ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: frameLimit)), WebSocketFrameEncoder(), clientSide])
            try upstream.channel.pipeline.syncOperations.addHandlers([ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: frameLimit)), WebSocketFrameEncoder(), upstreamSide])
        } catch {
            proxy.onFault("WebSocket \(flight.url): the relay could not start: \(error)")
            context.close(promise: nil)
            upstream.channel.close(promise: nil)
            return
        }
        let loop = context.eventLoop
        layer.remove(from: context.channel)
        let sync = upstream.channel.pipeline.syncOperations
        let removed = [sync.removeHandler(upstream.reader), sync.removeHandler(encoder), sync.removeHandler(decoder)]
        // The HTTP decoders leave on the loop's next turn (handing on the bytes after the
        // handshake); frames are held until then, so none goes through an HTTP handler.
        EventLoopFuture.andAllComplete(removed, on: loop).whenComplete { _ in
            loop.execute { session.markReady() }
        }
    }
}

/// What one relayed WebSocket has carried, and its report once it closes. Unchecked:
/// touched only on the event loop both connections share.
final class WebSocketSession: @unchecked Sendable {
    let flight: InFlight
    let connectionID: String
    let serverAddress: String?
    let proxy: RecordingProxy
    /// Message data recorded so far, against the proxy's `maxBodyBytes`.
    var recordedBytes = 0
    var messages: [WebSocketMessage] = []
    /// Messages relayed but left out of the recording (past the cap).
    var unrecorded = 0
    /// A message sent in several frames, per direction, until its last frame.
    var partial: [WebSocketMessage.Direction: (opcode: Int, data: ByteBuffer)] = [:]
    var ready = false
    var reported = false
    var sides: [WebSocketRelayHandler] = []

    init(flight: InFlight, connectionID: String, serverAddress: String?, proxy: RecordingProxy) {
        self.flight = flight
        self.connectionID = connectionID
        self.serverAddress = serverAddress
        self.proxy = proxy
    }

    /// Both pipelines hold only the relay now: frames read before are sent on.
    func markReady() {
        ready = true
        for side in sides { side.sendHeld() }
    }

    /// Records a data message once its last frame is read; control frames (ping, pong,
    /// close) are relayed but not listed, as in Chrome's HAR.
    func observe(_ frame: WebSocketFrame, going direction: WebSocketMessage.Direction) {
        switch frame.opcode {
        case .text, .binary:
            let opcode = frame.opcode == .text ? 1 : 2
            if frame.fin { record(direction, opcode, frame.unmaskedData) } else { partial[direction] = (opcode, frame.unmaskedData) }
        case .continuation:
            guard var part = partial[direction] else { return }
            var data = frame.unmaskedData
            if part.data.readableBytes <= flight.body.limit { part.data.writeBuffer(&data) }
            if frame.fin {
                partial[direction] = nil
                record(direction, part.opcode, part.data)
            } else {
                partial[direction] = part
            }
        default:
            return
        }
    }

    func record(_ direction: WebSocketMessage.Direction, _ opcode: Int, _ data: ByteBuffer) {
        guard recordedBytes + data.readableBytes <= flight.body.limit else {
            unrecorded += 1
            return
        }
        recordedBytes += data.readableBytes
        let message = WebSocketMessage(direction: direction, time: Date().timeIntervalSince1970, opcode: opcode, data: Data(data.readableBytesView))
        messages.append(message)
        if let id = flight.begun { proxy.onProgress?(.message(id: id, message)) }
    }

    /// Reports the handshake exchange with its messages, once.
    func finish() {
        guard !reported else { return }
        reported = true
        sides = []
        if unrecorded > 0 {
            proxy.onFault("WebSocket \(flight.url): \(unrecorded) message(s) past --max-body-bytes of message data were relayed but not recorded")
        }
        let exchange = flight.exchange(connectionID: connectionID, serverAddress: serverAddress, now: Date().timeIntervalSince1970, messages: messages)
        proxy.onExchange(RecordingProxy.Proxied(exchange: exchange, begun: flight.begun))
    }
}

/// One end of the relay: frames read on its connection go to its partner's, unchanged (a
/// client's frame keeps its mask, which the encoder applies again to the unmasked data).
final class WebSocketRelayHandler: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// The direction of the frames this end reads: the client's are sent, the upstream's
    /// received.
    let direction: WebSocketMessage.Direction
    let session: WebSocketSession
    var partner: WebSocketRelayHandler?
    var context: ChannelHandlerContext?
    var held: [WebSocketFrame] = []
    var lastWrite: EventLoopFuture<Void>?

    init(direction: WebSocketMessage.Direction, session: WebSocketSession) {
        self.direction = direction
        self.session = session
    }

    /// The client's end and the upstream's, partners of each other.
    static func pair(_ session: WebSocketSession) -> (client: WebSocketRelayHandler, upstream: WebSocketRelayHandler) {
        let client = WebSocketRelayHandler(direction: .send, session: session)
        let upstream = WebSocketRelayHandler(direction: .receive, session: session)
        client.partner = upstream
        upstream.partner = client
        session.sides = [client, upstream]
        return (client, upstream)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        session.observe(frame, going: direction)
        if session.ready { partner?.write(frame) } else { held.append(frame) }
    }

    func sendHeld() {
        for frame in held { partner?.write(frame) }
        held = []
    }

    /// Writes a frame read on the other end.
    func write(_ frame: WebSocketFrame) {
        guard let context else { return }
        let out = WebSocketFrame(fin: frame.fin, rsv1: frame.rsv1, rsv2: frame.rsv2, rsv3: frame.rsv3, opcode: frame.opcode, maskKey: frame.maskKey,
                                 data: frame.unmaskedData, extensionData: frame.unmaskedExtensionData)
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(out), promise: written)
        lastWrite = written.futureResult
    }

    /// One side closed: the other closes once what it was sent is written, and the
    /// exchange is reported.
    func channelInactive(context: ChannelHandlerContext) {
        session.finish()
        partner?.closeAfterWrites()
        partner = nil
        context.fireChannelInactive()
    }

    /// The client's connection allows a half-close: a side that stops sending ends the
    /// WebSocket, as a close does (a relay has nothing more to carry from it).
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, case .inputClosed = event {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func closeAfterWrites() {
        guard let context else { return }
        let channel = context.channel
        (lastWrite ?? context.eventLoop.makeSucceededVoidFuture()).whenComplete { _ in channel.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if connectionFault(error) != nil {
            session.proxy.onFault("WebSocket \(session.flight.url): the \(direction == .send ? "client" : "upstream")'s side failed, both closed: \(error)")
        }
        context.close(promise: nil)
    }
}
