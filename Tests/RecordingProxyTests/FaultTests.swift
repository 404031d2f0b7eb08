import Foundation
import NIOCore
import NIOSSL
import RecordingProxy
import Testing

/// Faults as the client meets them through the recording proxy, each on real sockets: an
/// upstream that refuses, does not answer in time, or presents a certificate the proxy
/// does not trust gets the client a 502 or 504 naming the upstream and the cause; a client
/// that leaves closes its upstream, and the exchange is journaled as aborted.
@Suite("Recording proxy: faults reach the client and the recording", .serialized)
struct FaultTests {
    static func get(_ port: Int, _ target: String) -> String {
        "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n"
    }

    @Test("an upstream that refuses the connection: a 502 naming the upstream and the refusal, recorded without response")
    func refused() throws {
        let proxy = try ProxyUnderTest()
        defer { proxy.stop() }
        // A port that was just free: nothing listens there now.
        let gone = try ScriptedOrigin([])
        let port = gone.port
        gone.stop()
        let client = try RawClient(port: proxy.port)
        defer { client.stop() }
        client.send(Self.get(port, "http://127.0.0.1:\(port)/x"))
        #expect(client.wait { $0.text.contains("refused") })
        #expect(client.text.hasPrefix("HTTP/1.1 502"), "\(client.text)")
        #expect(client.text.contains("the upstream 127.0.0.1:\(port) refused the connection"), "\(client.text)")
        let item = try #require(proxy.exchanges(1).first)
        #expect(item.failure?.contains("refused") == true)
        #expect(item.exchange.response.status == 0)
    }

    @Test("an upstream that sends no response head within the timeout: a 504 naming the upstream and the wait")
    func silentUpstream() throws {
        let proxy = try ProxyUnderTest(responseTimeout: .seconds(1))
        defer { proxy.stop() }
        let origin = try ScriptedOrigin([.pause(30)])
        defer { origin.stop() }
        let client = try RawClient(port: proxy.port)
        defer { client.stop() }
        client.send(Self.get(origin.port, "http://127.0.0.1:\(origin.port)/slow"))
        #expect(client.wait(8) { $0.text.contains("\r\n\r\n") && $0.text.hasSuffix("\n") })
        #expect(client.text.hasPrefix("HTTP/1.1 504"), "\(client.text)")
        #expect(client.text.contains("the upstream 127.0.0.1:\(origin.port) sent no response head in 1 s"), "\(client.text)")
        let item = try #require(proxy.exchanges(1).first)
        #expect(item.failure?.contains("no response head") == true)
    }

    @Test("an upstream that does not accept the connection in time: a 504 naming it")
    func connectTimeout() throws {
        let proxy = try ProxyUnderTest(connectTimeout: .milliseconds(500))
        defer { proxy.stop() }
        let listener = try FullListener()
        defer { listener.stop() }
        let client = try RawClient(port: proxy.port)
        defer { client.stop() }
        client.send(Self.get(listener.port, "http://127.0.0.1:\(listener.port)/x"))
        #expect(client.wait(5) { $0.text.contains("in time") })
        #expect(client.text.hasPrefix("HTTP/1.1 504"), "\(client.text)")
        #expect(client.text.contains("the upstream 127.0.0.1:\(listener.port) did not accept a connection in time"), "\(client.text)")
        #expect(try #require(proxy.exchanges(1).first).failure?.contains("in time") == true)
    }

    @Test("a client that leaves before the upstream answers: the upstream connection is closed and the exchange journaled as aborted")
    func clientLeavesBeforeHead() throws {
        let proxy = try ProxyUnderTest()
        defer { proxy.stop() }
        let origin = try ScriptedOrigin([.pause(30)])
        defer { origin.stop() }
        let client = try RawClient(port: proxy.port)
        client.send(Self.get(origin.port, "http://127.0.0.1:\(origin.port)/slow"))
        #expect(eventually { origin.requests.withLockedValue { $0 } == 1 }, "the request never reached the upstream")
        client.stop()
        #expect(eventually { origin.closed.withLockedValue { $0 } == 1 }, "the proxy kept the upstream connection open")
        let item = try #require(proxy.exchanges(1).first)
        #expect(item.failure?.hasPrefix("aborted: the client closed the connection") == true, "\(item.failure ?? "no failure")")
    }

    @Test("an upstream certificate the proxy does not trust: a 502 naming the problem and --upstream-ca / --insecure-upstream; with --upstream-ca it passes")
    func untrustedUpstream() throws {
        let refusing = try ProxyUnderTest(trust: .system)
        defer { refusing.stop() }
        // The origin's leaf is from the proxy's CA, which the system store does not hold.
        let origin = try ScriptedOrigin([.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")], tls: try http1Context(refusing.ca, for: "localhost"))
        defer { origin.stop() }
        let root = try #require(NIOSSLCertificate.fromPEMFile(refusing.ca.files.certificate).first)
        let refused = try Self.throughTunnel(refusing, root: root, to: origin.port)
        defer { refused.stop() }
        #expect(refused.text.hasPrefix("HTTP/1.1 502"), "\(refused.text)")
        for words in ["localhost:\(origin.port)'s certificate is not trusted", "--upstream-ca", "--insecure-upstream"] {
            #expect(refused.text.contains(words), "\(refused.text)")
        }
        #expect(try #require(refusing.exchanges(1).first).failure?.contains("certificate") == true)

        let trusting = try ProxyUnderTest(trust: .adding([root]))
        defer { trusting.stop() }
        let passed = try Self.throughTunnel(trusting, root: try #require(NIOSSLCertificate.fromPEMFile(trusting.ca.files.certificate).first), to: origin.port)
        defer { passed.stop() }
        #expect(passed.text.hasPrefix("HTTP/1.1 200") && passed.text.hasSuffix("ok"), "\(passed.text)")
    }

    /// A client that opens a CONNECT tunnel to localhost:`port`, starts TLS trusting
    /// `root`, sends a GET and has read the whole answer.
    static func throughTunnel(_ proxy: ProxyUnderTest, root: NIOSSLCertificate, to port: Int) throws -> RawClient {
        let client = try RawClient(port: proxy.port)
        client.send("CONNECT localhost:\(port) HTTP/1.1\r\nHost: localhost:\(port)\r\n\r\n")
        #expect(client.wait { $0.text.contains("\r\n\r\n") })
        try client.startTLS(serverName: "localhost", root: root)
        client.send("GET /page HTTP/1.1\r\nHost: localhost:\(port)\r\n\r\n")
        // Both answers end their body with "ok" or a line's end.
        #expect(client.wait { client in
            let body = client.text.components(separatedBy: "\r\n\r\n").dropFirst().joined()
            return body.hasSuffix("ok") || body.hasSuffix("\n")
        })
        return client
    }
}
