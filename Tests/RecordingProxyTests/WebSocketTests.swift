import Foundation
import LocalCA
import NIOSSL
import RecordingProxy
import Testing
import TrafficModel

/// WebSockets through the recording proxy: after the 101, frames go both ways, and the
/// handshake exchange carries each message as Chrome's HAR does.
@Suite("Recording proxy: WebSockets relayed and recorded", .serialized)
struct WebSocketTests {
    static let handshake = "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n"

    /// Over `client`, already past its CONNECT when there is one: the handshake for
    /// `target`, a text and a binary message each echoed, then a close.
    static func chat(_ client: RawClient, target: String, host: String) throws {
        client.send("GET \(target) HTTP/1.1\r\nHost: \(host)\r\n" + handshake)
        #expect(client.wait { $0.text.contains("\r\n\r\n") })
        let head = client.text.components(separatedBy: "\r\n\r\n")[0]
        #expect(head.hasPrefix("HTTP/1.1 101"), "\(head)")
        #expect(head.lowercased().contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo="), "\(head)")
        let start = head.utf8.count + 4
        func frames() -> [(opcode: UInt8, payload: [UInt8])] { Frames.read(client.received[start...]) }

        client.send(Frames.masked(opcode: 1, Array("hello through the proxy".utf8)))
        #expect(client.wait { _ in frames().count >= 1 }, "no echo of the text message")
        client.send(Frames.masked(opcode: 2, [0, 1, 2, 0xFF, 0xFE]))
        #expect(client.wait { _ in frames().count >= 2 }, "no echo of the binary message")
        let echoed = frames()
        #expect(echoed.first?.opcode == 1 && echoed.first?.payload == Array("hello through the proxy".utf8))
        #expect(echoed.count > 1 && echoed[1].opcode == 2 && echoed[1].payload == [0, 1, 2, 0xFF, 0xFE])
        client.send(Frames.masked(opcode: 8, [0x03, 0xE8]))
        #expect(client.wait { $0.closed }, "the close was not passed on")
    }

    /// The recorded handshake carries the four messages, in order, with their directions
    /// and opcodes.
    static func checkRecorded(_ proxy: ProxyUnderTest, url: String) throws {
        let item = try #require(proxy.exchanges(1).first)
        let exchange = item.exchange
        #expect(exchange.request.url == url)
        #expect(exchange.response.status == 101)
        let messages = exchange.webSocketMessages
        #expect(messages.map(\.direction) == [.send, .receive, .send, .receive])
        #expect(messages.map(\.opcode) == [1, 1, 2, 2])
        #expect(messages.first?.data == Data("hello through the proxy".utf8))
        #expect(messages.last?.data == Data([0, 1, 2, 0xFF, 0xFE]))
        #expect(zip(messages, messages.dropFirst()).allSatisfy { $0.time <= $1.time })
        #expect(messages.allSatisfy { abs($0.time - Date().timeIntervalSince1970) < 30 })
    }

    @Test("over plain HTTP: a text and a binary message are echoed through the proxy and recorded on the handshake")
    func plain() throws {
        let proxy = try ProxyUnderTest()
        defer { proxy.stop() }
        let origin = try EchoWebSocketOrigin()
        defer { origin.stop() }
        let client = try RawClient(port: proxy.port)
        defer { client.stop() }
        let url = "http://127.0.0.1:\(origin.port)/chat"
        try Self.chat(client, target: url, host: "127.0.0.1:\(origin.port)")
        try Self.checkRecorded(proxy, url: url)
    }

    @Test("a message sent in two frames is relayed frame by frame and recorded as one message")
    func fragmented() throws {
        let proxy = try ProxyUnderTest()
        defer { proxy.stop() }
        let origin = try EchoWebSocketOrigin()
        defer { origin.stop() }
        let client = try RawClient(port: proxy.port)
        defer { client.stop() }
        client.send("GET http://127.0.0.1:\(origin.port)/chat HTTP/1.1\r\nHost: 127.0.0.1\r\n" + Self.handshake)
        #expect(client.wait { $0.text.contains("\r\n\r\n") })
        let start = client.text.components(separatedBy: "\r\n\r\n")[0].utf8.count + 4
        // The echo origin answers each data frame it reads as a whole message: the first
        // fragment comes back alone, which shows the proxy relayed it before the last.
        client.send(Frames.masked(opcode: 1, Array("frag".utf8), fin: false))
        #expect(client.wait { Frames.read($0.received[start...]).count == 1 })
        client.send(Frames.masked(opcode: 0, Array("mented".utf8)))
        client.send(Frames.masked(opcode: 8, [0x03, 0xE8]))
        #expect(client.wait { $0.closed })
        let messages = try #require(proxy.exchanges(1).first).exchange.webSocketMessages
        // A message is listed when its last frame crosses: the echo of the first fragment
        // came back before the client finished its message.
        #expect(messages.map(\.direction) == [.receive, .send])
        #expect(messages.first { $0.direction == .send }?.data == Data("fragmented".utf8))
        #expect(messages.first { $0.direction == .receive }?.data == Data("frag".utf8))
        #expect(messages.allSatisfy { $0.opcode == 1 })
    }

    @Test("over CONNECT with TLS intercepted: the same messages, echoed and recorded")
    func throughConnect() throws {
        let proxy = try ProxyUnderTest()
        // The stop takes NIOSSL's 5 s: the proxy's TLS close waits for the raw client's
        // close_notify, which it does not send.
        defer { proxy.stop() }
        let origin = try EchoWebSocketOrigin(tls: try proxy.contexts.context(for: "localhost"))
        defer { origin.stop() }
        let client = try RawClient(port: proxy.port)
        defer { client.stop() }
        client.send("CONNECT localhost:\(origin.port) HTTP/1.1\r\nHost: localhost:\(origin.port)\r\n\r\n")
        #expect(client.wait { $0.text.contains("\r\n\r\n") })
        #expect(client.text.hasPrefix("HTTP/1.1 200"), "\(client.text)")
        try client.startTLS(serverName: "localhost", root: try NIOSSLCertificate(file: proxy.ca.files.certificate, format: .pem))
        try Self.chat(client, target: "/chat", host: "localhost:\(origin.port)")
        try Self.checkRecorded(proxy, url: "https://localhost:\(origin.port)/chat")
    }
}
