import Foundation
import LocalCA
import NIOCore
import NIOHTTP1
import TrafficModel

/// The client connection's side of a streamed response: each part of the upstream's
/// response is written to the client as it comes, and the exchange is reported once the
/// response ends, is cut, or never came.
extension ProxyHandler {
    func upstreamHead(_ head: HTTPResponseHead) {
        guard let flight = inFlight else { return }
        flight.response = head
        flight.responseAt = Date().timeIntervalSince1970
        // A protocol switch is answered with the switch itself, once the 101 is complete.
        if head.status == .switchingProtocols { return }
        let (clientHead, close) = Self.clientHead(head, for: flight.head)
        flight.closeClient = close
        flight.headRelayed = true
        context?.writeAndFlush(wrapOutboundOut(.head(clientHead)), promise: nil)
        proxy.begin(flight, connectionID: connectionID, serverAddress: upstream?.address,
                    incomplete: "the recording proxy stopped (killed) while this response streamed: the client had its head and part of its body, which is not kept")
    }

    func upstreamBody(_ chunk: ByteBuffer) {
        guard let flight = inFlight else { return }
        flight.body.append(chunk)
        guard let context, flight.headRelayed, flight.head.method != .HEAD else { return }
        // Written now, sent once the upstream's read ends (upstreamReadComplete), to an
        // HTTP/1.x client and an HTTP/2 client's stream alike. An h2 upstream's body comes in
        // frames of 8 or 16 KB, and a write to the client per frame cost more than the frame
        // (1 GB through CONNECT with curl, three rounds: 0.42-0.44x of straight before,
        // 0.50-0.63x after). On the client's TLS connection the writes of one read are packed
        // into full records (TLSRecordPacker): flushed a frame at a time, an HTTP/2 client got
        // a 9-byte record and an 8 KB one per frame, and the proxy spent 2.0-2.2 CPU-seconds
        // per GB against 1.7-1.8 with one flush per read.
        let written = context.eventLoop.makePromise(of: Void.self)
        context.write(wrapOutboundOut(.body(.byteBuffer(chunk))), promise: written)
        flight.lastWrite = written.futureResult
        // The client is slower than the upstream: stop reading the upstream until the
        // client has taken what is queued (channelWritabilityChanged reads again).
        // Reading stops before the flush: a flush the socket takes whole makes the channel
        // writable again at once, and that turns reading back on.
        if !context.channel.isWritable {
            upstream?.channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
            context.flush()
        }
    }

    func upstreamReadComplete() {
        guard inFlight?.headRelayed == true else { return }
        context?.flush()
    }

    func upstreamEnd() {
        guard let flight = inFlight else { return }
        if flight.response?.status == .switchingProtocols {
            startWebSocket(flight)
            return
        }
        // The client left and the proxy closed the upstream, which ends a response
        // delimited by the close: not a complete response, a cut.
        if clientGone, flight.headRelayed {
            upstreamFailed(ClientClosed(), afterHead: true)
            return
        }
        inFlight = nil
        let address = upstream?.address
        // The upstream is let go before the end is written: writing it may hand this
        // handler the client's next pipelined request, which must not get this connection.
        if let kept = upstream, kept.multiplexer != nil {
            // An h2 stream ends with its response; its connection carries the next one
            // (this connection's, or on an HTTP/2 client, the next stream's from the pool).
            if let pool {
                pool.put(kept)
                upstream = nil
            }
        } else if !(flight.response?.isKeepAlive ?? false) {
            upstream?.channel.close(promise: nil)
            upstream = nil
        } else if let pool, let kept = upstream {
            // A stream ends with its response: its connection goes to the next stream.
            pool.put(kept)
            upstream = nil
        }
        report(flight.proxied(connectionID: connectionID, serverAddress: address, now: Date().timeIntervalSince1970))
        guard let context else { return }
        let done = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: done)
        if flight.closeClient {
            let channel = context.channel
            done.futureResult.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    /// The upstream failed. Before the client has the head: a 504 for a timeout, else a
    /// 502, naming the upstream and the cause (no answer to pass on). After: the cut is passed on as it happened, the bytes that came
    /// then a close, and the exchange is reported as incomplete.
    func upstreamFailed(_ error: Error, afterHead: Bool) {
        guard let flight = inFlight else { return }
        inFlight = nil
        let address = upstream?.address
        upstream?.close()
        upstream = nil
        let now = Date().timeIntervalSince1970
        if flight.headRelayed {
            if let context {
                let channel = context.channel
                context.flush()
                (flight.lastWrite ?? context.eventLoop.makeSucceededVoidFuture()).whenComplete { _ in channel.close(promise: nil) }
            }
            report(flight.proxied(connectionID: connectionID, serverAddress: address, now: now, incomplete: flight.cutReason(error, clientGone: clientGone)))
            return
        }
        let cause: Error = clientGone ? ClientClosed() : error
        let why = Self.explain(cause, origin: flight.origin)
        if !clientGone, let context {
            proxy.onFault("\(flight.head.method.rawValue) \(flight.url): \(why)")
            answer(context, flight.head, Self.isTimeout(cause) ? .gatewayTimeout : .badGateway, "h5replay record --proxy: \(why)\n")
        }
        flight.response = nil
        report(RecordingProxy.Proxied(exchange: flight.exchange(connectionID: connectionID, serverAddress: address, now: now), failure: why))
    }

    /// The upstream's head as the client gets it: hop-by-hop fields dropped, the framing
    /// left to the client-side encoder (a length kept; otherwise chunked for HTTP/1.1, or
    /// delimited by the close for HTTP/1.0); and whether to close the client connection
    /// once it is written.
    static func clientHead(_ head: HTTPResponseHead, for request: HTTPRequestHead) -> (HTTPResponseHead, close: Bool) {
        var headers = head.headers
        for name in ["Keep-Alive", "Proxy-Connection"] { headers.remove(name: name) }
        if HTTP2Serving.isHTTP2(request.version) {
            // A stream ends with its response, framed by HTTP/2 itself: no connection fields.
            for name in ["Connection", "Transfer-Encoding", "Upgrade"] { headers.remove(name: name) }
            return (HTTPResponseHead(version: request.version, status: head.status, headers: headers), false)
        }
        let hasLength = headers.contains(name: "Content-Length")
        let code = head.status.code
        let mayHaveBody = !(100..<200).contains(code) && code != 204 && code != 304
        if request.method == .HEAD, !hasLength, mayHaveBody {
            // The encoder does not know this answers a HEAD: without a length it would
            // chunk, and end the empty body with a terminator the client does not expect.
            headers.remove(name: "Transfer-Encoding")
            headers.add(name: "Content-Length", value: "0")
        }
        let closeDelimited = !hasLength && request.version.major == 1 && request.version.minor == 0 && request.method != .HEAD && mayHaveBody
        // An upstream that says it closes is passed on as such: the client connection closes too.
        // An HTTP/2 upstream's stream ends with its response: the connection goes on.
        let close = !request.isKeepAlive || closeDelimited || !(head.isKeepAlive || HTTP2Serving.isHTTP2(head.version))
        if close { headers.replaceOrAdd(name: "Connection", value: "close") }
        return (HTTPResponseHead(version: request.version, status: head.status, headers: headers), close)
    }
}
