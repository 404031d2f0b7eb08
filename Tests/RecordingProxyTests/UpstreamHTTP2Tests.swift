import Foundation
import LocalCA
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import RecordingProxy
import Testing

/// HTTP/2 to the upstream where it offers it: a real TLS origin on loopback that offers h2
/// and http/1.1 by ALPN (LocalCA's server, as `serve --tls` runs it) and answers with the
/// protocol each request came on. The recording says which protocol each side spoke.
@Suite("Recording proxy: HTTP/2 to an upstream that offers it", .serialized)
struct UpstreamHTTP2Tests {
    /// Answers every request with the HTTP version it came on and its path.
    final class ProtocolEcho: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        var head: HTTPRequestHead?

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): self.head = head
            case .body: break
            case .end:
                guard let head else { return }
                if head.uri == "/big" { return sendBig(context, version: head.version) }
                let text = "HTTP/\(head.version.major).\(head.version.minor) \(head.uri)"
                let headers = HTTPHeaders([("Content-Type", "text/plain"), ("Content-Length", String(text.utf8.count))])
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: text)))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }

        /// `/big`: `bigBytes` of zeros, a megabyte a write.
        func sendBig(_ context: ChannelHandlerContext, version: HTTPVersion) {
            let headers = HTTPHeaders([("Content-Type", "application/octet-stream"), ("Content-Length", String(UpstreamHTTP2Tests.bigBytes))])
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: version, status: .ok, headers: headers))), promise: nil)
            let chunk = ByteBuffer(repeating: 0, count: 1 << 20)
            for _ in 0..<(UpstreamHTTP2Tests.bigBytes >> 20) { context.write(wrapOutboundOut(.body(.byteBuffer(chunk))), promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }

    static let bigBytes = 48 << 20

    /// A TLS origin offering h2 and http/1.1, its certificate from `contexts`' CA; counts
    /// its connections.
    final class H2Origin: Sendable {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let channel: Channel
        let accepted = NIOLockedValueBox(0)
        var port: Int { channel.localAddress?.port ?? 0 }

        init(contexts: TLSContexts) throws {
            let accepted = self.accepted
            channel = try ServerBootstrap(group: group)
                .childChannelInitializer { channel in
                    accepted.withLockedValue { $0 += 1 }
                    return contexts.addServer(to: channel, fallbackHost: "localhost", onError: { _ in },
                                              then: { channel, _, _ in channel.eventLoop.makeCompletedFuture { _ = try HTTPServerLayer.add(to: channel, top: ProtocolEcho()) } },
                                              stream: { stream, _, _ in stream.eventLoop.makeCompletedFuture { try stream.pipeline.syncOperations.addHandler(ProtocolEcho()) } })
                }
                .bind(host: "127.0.0.1", port: 0).wait()
        }

        func stop() {
            try? channel.close().wait()
            try? group.syncShutdownGracefully()
        }
    }

    @Test("an HTTP/1.1 client through CONNECT to an upstream offering h2: the proxy speaks h2 upstream, two requests share one upstream connection, and the recording says HTTP/1.1 from the client, HTTP/2 upstream",
          .enabled(if: HTTP2Tests.curl != nil, "curl is not installed"))
    func h2Upstream() throws {
        let proxy = try ProxyUnderTest()
        defer { proxy.stop() }
        let origin = try H2Origin(contexts: proxy.contexts)
        defer { origin.stop() }
        let base = "https://localhost:\(origin.port)"
        let result = try HTTP2Tests.run(["--http1.1", "--cacert", proxy.ca.files.certificate, "-x", "http://127.0.0.1:\(proxy.port)",
                                         "-w", " %{http_version}\n", "\(base)/one", "\(base)/two"])
        #expect(result.status == 0)
        // What the origin saw: HTTP/2. What the client got: HTTP/1.1.
        #expect(result.output == "HTTP/2.0 /one 1.1\nHTTP/2.0 /two 1.1\n", "\(result.output)")
        let reported = proxy.exchanges(2)
        #expect(reported.map { "\($0.exchange.request.httpVersion) \($0.exchange.response.httpVersion)" } == ["HTTP/1.1 HTTP/2", "HTTP/1.1 HTTP/2"])
        #expect(reported.map { String(decoding: $0.exchange.response.body, as: UTF8.self) } == ["HTTP/2.0 /one", "HTTP/2.0 /two"])
        #expect(origin.accepted.withLockedValue { $0 } == 1, "\(origin.accepted.withLockedValue { $0 }) upstream connections for two requests")
    }

    @Test("an h2 client to an h2 upstream: HTTP/2 on both sides, recorded so", .enabled(if: HTTP2Tests.curl != nil, "curl is not installed"))
    func h2BothSides() throws {
        let proxy = try ProxyUnderTest()
        defer { proxy.stop() }
        let origin = try H2Origin(contexts: proxy.contexts)
        defer { origin.stop() }
        let result = try HTTP2Tests.run(["--http2", "--cacert", proxy.ca.files.certificate, "-x", "http://127.0.0.1:\(proxy.port)",
                                         "-w", " %{http_version}", "https://localhost:\(origin.port)/both"])
        #expect(result.output == "HTTP/2.0 /both 2", "\(result.output)")
        let item = try #require(proxy.exchanges(1).first)
        #expect(item.exchange.request.httpVersion == "HTTP/2" && item.exchange.response.httpVersion == "HTTP/2")
    }

    @Test("a download from an h2 upstream to a client slower than the upstream arrives whole: reading resumes whenever the client catches up",
          .enabled(if: HTTP2Tests.curl != nil, "curl is not installed"))
    func h2UpstreamSlowClient() throws {
        let proxy = try ProxyUnderTest()
        defer { proxy.stop() }
        let origin = try H2Origin(contexts: proxy.contexts)
        defer { origin.stop() }
        // The rate limit keeps the client behind, so the proxy stops and resumes reading the
        // upstream stream many times; a resume that read nothing stalled the download.
        let result = try HTTP2Tests.run(["--http1.1", "--cacert", proxy.ca.files.certificate, "-x", "http://127.0.0.1:\(proxy.port)", "--limit-rate", "40M",
                                         "-o", "/dev/null", "-w", "%{size_download} %{http_version}", "https://localhost:\(origin.port)/big"])
        #expect(result.status == 0 && result.output == "\(Self.bigBytes) 1.1", "curl exited \(result.status): \(result.output)")
    }
}
