import Foundation
import GRDB
import Testing

/// `record --proxy` with real peers on loopback: curl as the client, Python's `ssl`
/// server as the HTTPS upstream (a certificate made with openssl for the test).
@Suite("record --proxy: recording HTTP and HTTPS through a forward proxy", .serialized)
struct RecordProxyTests {
    static var available: Bool {
        ServeTests.which("curl") != nil && ServeTests.which("openssl") != nil && ServeTests.which("python3") != nil
    }

    /// A running process, the first line it printed that starts with `prefix`, and all it
    /// printed up to that line.
    static func start(_ executable: URL, _ arguments: [String], in dir: URL, until prefix: String, stderr: URL? = nil) throws -> (Process, Pipe, String, printed: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = dir
        let out = Pipe()
        process.standardOutput = out
        if let stderr {
            _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
            process.standardError = try FileHandle(forWritingTo: stderr)
        } else {
            process.standardError = FileHandle.nullDevice
        }
        try process.run()
        // Whole lines only: a line may come in two reads.
        var text = ""
        func lines() -> [Substring] { text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() }
        while !lines().contains(where: { $0.hasPrefix(prefix) }) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let line = lines().first { $0.hasPrefix(prefix) }.map(String.init)
        return (process, out, try #require(line, "printed: \(text)"), text)
    }

    /// An HTTPS origin on loopback with a certificate for localhost and 127.0.0.1;
    /// `extra` are more of origin.py's options.
    static func origin(in dir: URL, slow: Int = 0, extra: [String] = []) throws -> (Process, Int) {
        let made = try RobustnessTests.run(ServeTests.which("openssl")!, [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", dir.appendingPathComponent("up-key.pem").path, "-out", dir.appendingPathComponent("up-cert.pem").path,
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-days", "2"])
        #expect(made == 0)
        let script = CLITests.root.appendingPathComponent("Tools/testing/origin.py").path
        let (process, _, line, _) = try start(URL(fileURLWithPath: ServeTests.which("python3")!), [script, "--cert", "up-cert.pem", "--key", "up-key.pem", "--slow", String(slow)] + extra, in: dir, until: "port ")
        return (process, try #require(Int(line.dropFirst(5))))
    }

    static func proxyPort(_ line: String) throws -> Int {
        // "recording through the proxy http://127.0.0.1:PORT (...)"
        let url = try #require(line.split(separator: " ").first { $0.hasPrefix("http://") })
        return try #require(Int(url.split(separator: ":").last ?? ""))
    }

    @Test("curl records through the proxy: HTTPS intercepted with the CA, plain HTTP, a pass-through host, faults as diagnostics; the recording replays",
          .enabled(if: available, "curl, openssl or python3 is missing (Tools/test installs them)"))
    func recordAndReplay() throws {
        let dir = try CLITests.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (origin, up) = try Self.origin(in: dir, slow: 3)
        defer {
            kill(origin.processIdentifier, SIGKILL)
            origin.waitUntilExit()
        }
        let errors = dir.appendingPathComponent("record.err")
        let (proxy, out, line, _) = try Self.start(CLITests.binary, ["record", "--proxy", "--port", "0", "--db", "p.sqlite", "--name", "through-proxy",
                                                                 "--upstream-ca", "up-cert.pem", "--no-intercept", "127.0.0.1", "--upstream-timeout", "1"],
                                                in: dir, until: "recording through the proxy", stderr: errors)
        let port = try Self.proxyPort(line)
        let via = ["-x", "http://127.0.0.1:\(port)"]
        let ca = ["--cacert", dir.appendingPathComponent("h5replay-ca.pem").path]

        let page = try TLSServeTests.curl(via + ca + ["https://localhost:\(up)/page"])
        #expect(page.status == 0 && page.output.contains("hello"), "\(page.output)")
        let echo = try TLSServeTests.curl(via + ca + ["--compressed", "-X", "POST", "-d", "user=alice&pin=1234", "https://localhost:\(up)/api/echo"])
        #expect(echo.output == "echo:user=alice&pin=1234", "\(echo.output)")
        let redirect = try TLSServeTests.curl(via + ca + ["-o", "/dev/null", "-w", "%{http_code}", "https://localhost:\(up)/redirect"])
        #expect(redirect.output == "302")
        // Passed through: the client sees the upstream's own certificate, and nothing is recorded.
        let pinned = try TLSServeTests.curl(via + ["--cacert", dir.appendingPathComponent("up-cert.pem").path, "https://127.0.0.1:\(up)/page"])
        #expect(pinned.status == 0 && pinned.output.contains("hello"), "\(pinned.output)")
        // A pass-through tunnel the client half-closes is closed whole, and the proxy goes on.
        let halfClose = """
            import socket, sys
            s = socket.create_connection(("127.0.0.1", \(port)))
            s.sendall(b"CONNECT 127.0.0.1:\(up) HTTP/1.1\\r\\nHost: 127.0.0.1:\(up)\\r\\n\\r\\n")
            head = s.recv(1024)
            s.shutdown(socket.SHUT_WR)
            s.settimeout(5)
            rest = s.recv(1024)
            sys.exit(0 if head.startswith(b"HTTP/1.1 200") and rest == b"" else 1)
            """
        #expect(try RobustnessTests.run(ServeTests.which("python3")!, ["-c", halfClose]) == 0)
        // Faults: an upstream that refuses, a client that does not trust the CA, HTTP/2.
        let refused = try TLSServeTests.curl(via + ["-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:1/gone"])
        #expect(refused.output == "502")
        let late = try TLSServeTests.curl(via + ca + ["-o", "/dev/null", "-w", "%{http_code}", "https://localhost:\(up)/slow"])
        #expect(late.output == "504")
        #expect(try TLSServeTests.curl(via + ["https://localhost:\(up)/page"]).status == 60)
        #expect(try TLSServeTests.curl(["--http2-prior-knowledge", "http://127.0.0.1:\(port)/x"]).status != 0)

        kill(proxy.processIdentifier, SIGINT)
        let tail = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        proxy.waitUntilExit()
        #expect(proxy.terminationStatus == 0, "\(tail)")
        #expect(tail.contains("stored through-proxy: 5 exchange(s)"), "\(tail)")
        #expect(tail.contains("sent no response head in 1 s"), "\(tail)")
        #expect(tail.contains("got no response: the upstream 127.0.0.1:1 refused the connection"), "\(tail)")
        let faults = try String(contentsOf: errors, encoding: .utf8)
        #expect(faults.contains("h5replay CA") && faults.contains("HTTP/2"), "\(faults)")

        let db = try DatabaseQueue(path: dir.appendingPathComponent("p.sqlite").path)
        let rows = try db.read { db in
            try Row.fetchAll(db, sql: """
                SELECT e.method, e.url, e.status, rb.content AS request_body, sb.content AS response_body, e.response_headers
                FROM exchange e JOIN recording r ON r.id = e.recording_id
                LEFT JOIN body rb ON rb.sha256 = e.request_body_sha256 LEFT JOIN body sb ON sb.sha256 = e.response_body_sha256
                WHERE r.name = 'through-proxy' ORDER BY e.sequence
                """)
        }
        #expect(rows.map { "\($0["method"] as String) \($0["url"] as String) \($0["status"] as Int)" } == [
            "GET https://localhost:\(up)/page 200", "POST https://localhost:\(up)/api/echo 200",
            "GET https://localhost:\(up)/redirect 302", "GET http://127.0.0.1:1/gone 0", "GET https://localhost:\(up)/slow 0",
        ])
        #expect((rows[0]["response_headers"] as String).contains("session=abc123"))
        #expect(rows[1]["request_body"] as Data? == Data("user=alice&pin=1234".utf8))
        // Stored decoded, as a capture stores it; the header keeps the coding.
        #expect(rows[1]["response_body"] as Data? == Data("echo:user=alice&pin=1234".utf8))
        #expect((rows[1]["response_headers"] as String).contains("gzip"))
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("h5replay-proxy-through-proxy.journal.har").path))

        let replay = try CLITests.h5replay(["replay", "through-proxy", "--db", "p.sqlite", "--quiet"], in: dir)
        #expect(replay.status == 0, "\(replay.stderr)")
    }

    @Test("a proxy session killed outright loses no completed exchange: the next record --proxy stores them",
          .enabled(if: available, "curl, openssl or python3 is missing (Tools/test installs them)"))
    func killedSession() throws {
        let dir = try CLITests.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (origin, up) = try Self.origin(in: dir)
        defer {
            kill(origin.processIdentifier, SIGKILL)
            origin.waitUntilExit()
        }
        let (proxy, out, line, _) = try Self.start(CLITests.binary, ["record", "--proxy", "--port", "0", "--db", "p.sqlite", "--name", "cut", "--insecure-upstream"],
                                                in: dir, until: "recording through the proxy")
        let port = try Self.proxyPort(line)
        let via = ["-x", "http://127.0.0.1:\(port)", "--cacert", dir.appendingPathComponent("h5replay-ca.pem").path]
        #expect(try TLSServeTests.curl(via + ["https://localhost:\(up)/page"]).status == 0)
        #expect(try TLSServeTests.curl(via + ["-X", "POST", "-d", "x=1", "https://localhost:\(up)/api/echo"]).status == 0)
        // The live line comes after the journal write: two lines, two entries on disk.
        var seen = ""
        while seen.split(separator: "\n").filter({ $0.hasPrefix("#") }).count < 2 {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
        }
        kill(proxy.processIdentifier, SIGKILL)
        proxy.waitUntilExit()

        let (again, againOut, _, _) = try Self.start(CLITests.binary, ["record", "--proxy", "--port", "0", "--db", "p.sqlite", "--name", "next"],
                                                  in: dir, until: "recording through the proxy")
        kill(again.processIdentifier, SIGINT)
        let tail = String(decoding: againOut.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        again.waitUntilExit()
        let db = try DatabaseQueue(path: dir.appendingPathComponent("p.sqlite").path)
        let count = try db.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM exchange e JOIN recording r ON r.id = e.recording_id WHERE r.name = 'cut'") }
        #expect(count == 2, "\(tail)")
    }

    @Test("a response over --max-body-bytes reaches the client whole; the recording keeps the first --max-body-bytes and says so",
          .enabled(if: available, "curl, openssl or python3 is missing (Tools/test installs them)"))
    func responseOverLimit() throws {
        let dir = try CLITests.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (origin, up) = try Self.origin(in: dir)
        defer {
            kill(origin.processIdentifier, SIGKILL)
            origin.waitUntilExit()
        }
        let (proxy, out, line, _) = try Self.start(CLITests.binary, ["record", "--proxy", "--port", "0", "--db", "p.sqlite", "--name", "big", "--insecure-upstream", "--max-body-bytes", "20"],
                                                   in: dir, until: "recording through the proxy")
        let port = try Self.proxyPort(line)
        // The page's body is 42 bytes.
        let page = try TLSServeTests.curl(["-x", "http://127.0.0.1:\(port)", "--cacert", dir.appendingPathComponent("h5replay-ca.pem").path,
                                           "-w", " %{http_code}", "https://localhost:\(up)/page"])
        #expect(page.output == "<!doctype html><title>page</title><p>hello 200", "\(page.output)")
        kill(proxy.processIdentifier, SIGINT)
        let tail = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        proxy.waitUntilExit()
        #expect(tail.contains("200, 20 B (kept of 42 B received: --max-body-bytes)"), "\(tail)")
        let db = try DatabaseQueue(path: dir.appendingPathComponent("p.sqlite").path)
        let stored = try db.read { db in
            try Data.fetchOne(db, sql: "SELECT sb.content FROM exchange e JOIN recording r ON r.id = e.recording_id JOIN body sb ON sb.sha256 = e.response_body_sha256 WHERE r.name = 'big'")
        }
        #expect(stored == Data("<!doctype html><titl".utf8))
    }

    /// A WebSocket origin that greets in the same write as its 101, then echoes, and a
    /// client through the proxy given as its argument (Python, raw sockets).
    static let webSocketChat = #"""
import base64, hashlib, socket, struct, sys, threading, os
GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
def read_frame(sock):
    h = sock.recv(2, socket.MSG_WAITALL)
    if len(h) < 2: return None
    op = h[0] & 15; masked = h[1] & 128; n = h[1] & 127
    if n == 126: n = struct.unpack("!H", sock.recv(2, socket.MSG_WAITALL))[0]
    key = sock.recv(4, socket.MSG_WAITALL) if masked else None
    data = sock.recv(n, socket.MSG_WAITALL) if n else b""
    if key: data = bytes(b ^ key[i % 4] for i, b in enumerate(data))
    return op, data
def frame(op, data, mask):
    head = bytes([128 | op, (128 if mask else 0) | len(data)])
    if not mask: return head + data
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(data))
def serve(srv):
    c, _ = srv.accept()
    req = b""
    while b"\r\n\r\n" not in req: req += c.recv(1024)
    key = [l.split(b":", 1)[1].strip() for l in req.split(b"\r\n") if l.lower().startswith(b"sec-websocket-key")][0]
    acc = base64.b64encode(hashlib.sha1(key + GUID).digest())
    c.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + acc + b"\r\n\r\n" + frame(1, b"welcome", False))
    while True:
        f = read_frame(c)
        if f is None: break
        op, data = f
        if op == 8: c.sendall(frame(8, data, False)); break
        c.sendall(frame(op, data, False))
    c.close()
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
threading.Thread(target=serve, args=(srv,), daemon=True).start()
oport = srv.getsockname()[1]; pport = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", pport))
s.sendall(f"GET http://127.0.0.1:{oport}/chat HTTP/1.1\r\nHost: 127.0.0.1:{oport}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
resp = b""
while b"\r\n\r\n" not in resp: resp += s.recv(1)
ok = resp.startswith(b"HTTP/1.1 101") and read_frame(s) == (1, b"welcome")
s.sendall(frame(1, b"hi there", True)); ok = ok and read_frame(s) == (1, b"hi there")
s.sendall(frame(2, b"\x00\x01\xff", True)); ok = ok and read_frame(s) == (2, b"\x00\x01\xff")
s.sendall(frame(8, b"\x03\xe8", True)); ok = ok and read_frame(s) == (8, b"\x03\xe8")
sys.exit(0 if ok else 1)
"""#

    @Test("a WebSocket through record --proxy: a greeting sent with the 101 and the echoes reach the client; the journal holds the messages as Chrome's HAR does",
          .enabled(if: available, "curl, openssl or python3 is missing (Tools/test installs them)"))
    func webSocket() throws {
        let dir = try CLITests.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (proxy, out, line, _) = try Self.start(CLITests.binary, ["record", "--proxy", "--port", "0", "--db", "p.sqlite", "--name", "ws", "--write-har", "ws.har"],
                                                   in: dir, until: "recording through the proxy")
        let port = try Self.proxyPort(line)
        #expect(try RobustnessTests.run(ServeTests.which("python3")!, ["-c", Self.webSocketChat, String(port)]) == 0)
        // The handshake is reported when the socket closes: wait for its line.
        var seen = ""
        while !seen.contains("WebSocket message(s)") {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
        }
        kill(proxy.processIdentifier, SIGINT)
        let tail = seen + String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        proxy.waitUntilExit()
        #expect(tail.contains("→ 101, 0 B, 5 WebSocket message(s)"), "\(tail)")
        #expect(tail.contains("stored ws: 1 exchange(s)"), "\(tail)")
        let har = try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("ws.har"))) as? [String: Any]
        let entry = try #require(((har?["log"] as? [String: Any])?["entries"] as? [[String: Any]])?.first)
        let messages = try #require(entry["_webSocketMessages"] as? [[String: Any]])
        #expect(messages.map { "\($0["type"]!) \($0["opcode"]!) \($0["data"]!)" } == [
            "receive 1 welcome", "send 1 hi there", "receive 1 hi there", "send 2 AAH/", "receive 2 AAH/",
        ])
        #expect(messages.allSatisfy { ($0["time"] as? Double).map { abs($0 - Date().timeIntervalSince1970) < 60 } == true })
        // The store keeps them too: `show` lists each under the handshake.
        let shown = try CLITests.h5replay(["show", "ws", "--db", "p.sqlite"], in: dir)
        let lines = shown.stdout.split(separator: "\n").filter { $0.contains(" ws ") }
        #expect(lines.map { $0.split(separator: " ")[1] } == ["receive", "send", "receive", "send", "receive"], "\(shown.stdout)")
        #expect(lines.last?.hasSuffix("00 01 ff") == true)
    }
}
