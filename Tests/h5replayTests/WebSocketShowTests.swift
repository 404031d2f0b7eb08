import Foundation
import Testing

/// A Chrome HAR holding a WebSocket imported through the CLI: its messages are stored and
/// `show` lists them, secrets in them hidden unless asked for.
@Suite("show lists a WebSocket's messages")
struct WebSocketShowTests {
    static let token = "PLANTED-ws-token-3c9d"

    /// Chrome's shape: the handshake entry (101, `_resourceType` websocket) with
    /// `_webSocketMessages`, binary payloads in base64.
    static let har = #"""
        {"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"}, "pages": [], "entries": [
          {"startedDateTime": "2024-05-01T10:00:00.000Z", "time": 12, "_resourceType": "websocket",
           "request": {"method": "GET", "url": "wss://chat.example/socket", "httpVersion": "HTTP/1.1", "headers": [{"name": "Upgrade", "value": "websocket"}, {"name": "Connection", "value": "Upgrade"}], "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
           "response": {"status": 101, "statusText": "Switching Protocols", "httpVersion": "HTTP/1.1", "headers": [{"name": "Upgrade", "value": "websocket"}], "cookies": [], "content": {"size": 0, "mimeType": "x-unknown"}, "redirectURL": "", "headersSize": -1, "bodySize": 0},
           "cache": {}, "timings": {"send": 0, "wait": 12, "receive": 0},
           "_webSocketMessages": [
             {"type": "send", "time": 1714557600.5, "opcode": 1, "data": "{\"type\":\"auth\",\"token\":\"TOKEN\"}"},
             {"type": "receive", "time": 1714557600.75, "opcode": 2, "data": "AAH/"},
             {"type": "receive", "time": 1714557601.25, "opcode": 1, "data": "price 1.25 at https://chat.example/q?token=TOKEN now"}
           ]}
        ]}}
        """#

    static func imported() throws -> URL {
        let dir = try CLITests.workspace()
        try har.replacingOccurrences(of: "TOKEN", with: token).write(to: dir.appendingPathComponent("chat.har"), atomically: true, encoding: .utf8)
        let r = try CLITests.h5replay(["import", "chat.har", "--db", "s.sqlite"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        return dir
    }

    @Test("each message is a line under its handshake: direction, offset, opcode, size and a preview with secrets hidden")
    func table() throws {
        let dir = try Self.imported()
        defer { try? FileManager.default.removeItem(at: dir) }
        let shown = try CLITests.h5replay(["show", "chat", "--db", "s.sqlite"], in: dir)
        #expect(shown.status == 0, "\(shown.stderr)")
        let lines = shown.stdout.split(separator: "\n").map { String($0) }.filter { $0.contains(" ws ") }
        #expect(lines.count == 3, "\(shown.stdout)")
        guard lines.count == 3 else { return }
        #expect(lines[0].contains("ws send") && lines[0].contains("+0.500s") && lines[0].contains("text") && lines[0].contains("47 B"))
        #expect(lines[0].contains(#""token":"redacted-21-"#))
        #expect(lines[1].contains("ws receive") && lines[1].contains("+0.750s") && lines[1].contains("binary") && lines[1].contains("3 B") && lines[1].hasSuffix("00 01 ff"))
        #expect(lines[2].contains("+1.250s") && lines[2].contains("q?token=<redacted>"))
        #expect(!shown.stdout.contains(Self.token))
        // The test can fail: --show-secrets prints the token.
        let secrets = try CLITests.h5replay(["show", "chat", "--show-secrets", "--db", "s.sqlite"], in: dir)
        #expect(secrets.stdout.contains(#""token":"\#(Self.token)""#))
    }

    @Test("a sanitized export replaces the secrets in WebSocket messages as in request bodies; --include-secrets keeps them")
    func export() throws {
        let dir = try Self.imported()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try CLITests.h5replay(["export", "chat", "--har", "-o", "clean.har", "--db", "s.sqlite"], in: dir).status == 0)
        let clean = try String(contentsOf: dir.appendingPathComponent("clean.har"), encoding: .utf8)
        #expect(clean.contains("_webSocketMessages") && clean.contains("redacted-21-"))
        #expect(!clean.contains(Self.token))
        #expect(try CLITests.h5replay(["export", "chat", "--har", "-o", "exact.har", "--include-secrets", "--db", "s.sqlite"], in: dir).status == 0)
        #expect(try String(contentsOf: dir.appendingPathComponent("exact.har"), encoding: .utf8).contains(Self.token))
    }

    @Test("show --format json gives each message's direction, time, offset, opcode, length, hash and preview")
    func json() throws {
        let dir = try Self.imported()
        defer { try? FileManager.default.removeItem(at: dir) }
        let shown = try CLITests.h5replay(["show", "chat", "--format", "json", "--db", "s.sqlite"], in: dir)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(!shown.stdout.contains(Self.token))
        let object = try CLITests.json(shown.stdout)
        let exchange = try #require((object["exchanges"] as? [[String: Any]])?.first)
        let messages = try #require(exchange["webSocketMessages"] as? [[String: Any]])
        #expect(messages.map { $0["direction"] as? String } == ["send", "receive", "receive"])
        #expect(messages.map { $0["opcode"] as? Int } == [1, 2, 1])
        #expect(messages.map { $0["length"] as? Int } == [47, 3, 68])
        #expect(messages.map { $0["offset"] as? Double } == [0.5, 0.75, 1.25])
        #expect((messages[1]["sha256"] as? String)?.count == 64)
        #expect(messages[0]["time"] as? String == "2024-05-01T10:00:00.500Z")
    }
}
