import Foundation
import HTTPWire
import LocalCA
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import TrafficModel

/// Where an upstream response goes as it arrives: the client connection's handler, which
/// relays each part at once and records the exchange when the response ends. Called on
/// the event loop both connections share.
protocol ResponseSink: AnyObject {
    func upstreamHead(_ head: HTTPResponseHead)
    func upstreamBody(_ chunk: ByteBuffer)
    /// The upstream has no more to read for now: what was written to the client goes out.
    func upstreamReadComplete()
    func upstreamEnd()
    /// The upstream failed or closed before the response ended; `afterHead` says whether
    /// the client already has the head (then the cut is passed on, not answered with a 502).
    func upstreamFailed(_ error: Error, afterHead: Bool)
}

/// Reads one upstream response at a time and hands its parts to the sink as they come.
/// The timeout covers the wait for the head only: once the upstream answers, a response
/// may last as long as it likes (an event stream, a long download).
final class UpstreamReader: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = HTTPClientResponsePart

    struct Closed: Error {}
    struct Timeout: Error { var seconds: Int64 }

    var sink: ResponseSink?
    var headSeen = false
    var timer: Scheduled<Void>?

    func expect(_ sink: ResponseSink, timeout: TimeAmount, on loop: EventLoop) {
        self.sink = sink
        headSeen = false
        timer = loop.scheduleTask(in: timeout) { [self] in
            self.fail(Timeout(seconds: timeout.nanoseconds / 1_000_000_000))
        }
    }

    func fail(_ error: Error) {
        timer?.cancel()
        let sink = self.sink
        self.sink = nil
        sink?.upstreamFailed(error, afterHead: headSeen)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            // 1xx informational responses are not the answer (101 is: a protocol switch).
            if head.status.code >= 100, head.status.code < 200, head.status.code != 101 { return }
            timer?.cancel()
            headSeen = true
            sink?.upstreamHead(head)
        case .body(let chunk):
            sink?.upstreamBody(chunk)
        case .end:
            guard headSeen else { return }
            let sink = self.sink
            self.sink = nil
            sink?.upstreamEnd()
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        sink?.upstreamReadComplete()
        context.fireChannelReadComplete()
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

/// The exchange being forwarded on a client connection, from its request to the end (or
/// the cut) of its response. A class: the body record grows in place, chunk by chunk.
final class InFlight {
    let head: HTTPRequestHead
    let recorded: RecordedRequest
    let origin: ProxyHandler.Origin
    let url: String
    let started: Double
    var body: BodyRecord
    /// The upstream's head, once it came, and when (seconds since 1970).
    var response: HTTPResponseHead?
    var responseAt: Double?
    /// The client has the head: a failure now is a cut, not a 502.
    var headRelayed = false
    /// Close the client connection once the response is written (the client asked, or the
    /// body is delimited by the close).
    var closeClient = false
    /// The last write to the client, for a close that must not drop it.
    var lastWrite: EventLoopFuture<Void>?

    /// The kept body was decoded of its content coding: the recording's body is not the
    /// spool file's bytes.
    private(set) var bodyDecoded = false
    /// The number the proxy's `Progress.begun` gave it, once reported.
    var begun: Int?

    init(head: HTTPRequestHead, recorded: RecordedRequest, origin: ProxyHandler.Origin, url: String, started: Double, bodyLimit: Int, spoolDirectory: String) {
        self.head = head
        self.recorded = recorded
        self.origin = origin
        self.url = url
        self.started = started
        self.body = BodyRecord(limit: bodyLimit, spoolDirectory: spoolDirectory)
    }

    /// The recorded response: status, headers, and the body kept, decoded of its content
    /// coding where it decodes (a body cut at the cap or mid-stream may not: it is kept as
    /// sent, the headers still naming the coding); `encodedLength` is every byte received.
    func recordedResponse() -> RecordedResponse {
        guard let response else { return RecordedResponse(status: 0, bodyMissing: true) }
        let headers = HeaderList(response.headers.lazy.map { HeaderField($0.name, $0.value) })
        // The kept bytes shared or mapped, not copied: a body at the cap would be held twice.
        var bytes = body.data()
        bodyDecoded = false
        if let coding = response.headers.first(name: "Content-Encoding"),
           let decoded = try? ContentDecoder().decodeIfEncoded([UInt8](bytes), contentEncoding: coding) {
            bytes = Data(decoded.bytes)
            bodyDecoded = true
        }
        return RecordedResponse(status: Int(response.status.code), statusText: response.status.reasonPhrase, httpVersion: ProxyHandler.version(response.version),
                                headers: headers, body: bytes, encodedLength: body.received)
    }

    /// The exchange as the recording holds it, at `now`.
    func exchange(connectionID: String, serverAddress: String?, now: Double, messages: [WebSocketMessage] = []) -> Exchange {
        Exchange(sequence: 0, startedAt: started, duration: now - started, connectionID: connectionID, serverAddress: serverAddress,
                 request: recorded, response: recordedResponse(), responseStart: responseAt.map { $0 - started }, webSocketMessages: messages)
    }

    /// The exchange reported at its end or cut: the recording's copy of the body, and the
    /// spool file holding it when it is that file's bytes (the journal reads it from there).
    func proxied(connectionID: String, serverAddress: String?, now: Double, incomplete: String? = nil) -> RecordingProxy.Proxied {
        let exchange = exchange(connectionID: connectionID, serverAddress: serverAddress, now: now)
        return RecordingProxy.Proxied(exchange: exchange, incomplete: incomplete, receivedBodyBytes: body.isCut ? body.received : nil,
                                      keptBodyFile: bodyDecoded ? nil : body.spool, begun: begun)
    }

    /// Why the response stopped short, in a line for the journal: how much of the body came.
    func cutReason(_ error: Error, clientGone: Bool) -> String {
        let expected = response?.headers.first(name: "Content-Length").flatMap { Int($0) }
        let amount = expected.map { "\(body.received) of \($0) body bytes" } ?? "\(body.received) body bytes"
        if clientGone { return "aborted: the client closed the connection after \(amount), before the response ended" }
        if error is UpstreamReader.Closed || error is HTTPParserError {
            return "the upstream \(origin.authority) closed the connection after \(amount), before the response ended; the client got the same"
        }
        return "the upstream \(origin.authority) failed after \(amount) (\(error)); the client got what came, then a close"
    }
}
