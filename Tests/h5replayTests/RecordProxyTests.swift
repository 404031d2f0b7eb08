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

    /// An HTTPS origin on loopback with a certificate for localhost and 127.0.0.1.
    static func origin(in dir: URL, slow: Int = 0) throws -> (Process, Int) {
        let made = try RobustnessTests.run(ServeTests.which("openssl")!, [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", dir.appendingPathComponent("up-key.pem").path, "-out", dir.appendingPathComponent("up-cert.pem").path,
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-days", "2"])
        #expect(made == 0)
        let script = CLITests.root.appendingPathComponent("Tools/testing/origin.py").path
        let (process, _, line, _) = try start(URL(fileURLWithPath: ServeTests.which("python3")!), [script, "--cert", "up-cert.pem", "--key", "up-key.pem", "--slow", String(slow)], in: dir, until: "port ")
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
        #expect(late.output == "502")
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
}
