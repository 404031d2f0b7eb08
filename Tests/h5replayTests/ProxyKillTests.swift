import Foundation
import GRDB
import Testing

/// `record --proxy` killed outright (SIGKILL) while a response streams and while a
/// WebSocket is open, with real clients and a real origin on loopback: the next session
/// stores what the journal and its side file held, each exchange that was still going
/// marked as cut.
@Suite("record --proxy killed mid-stream and mid-WebSocket", .serialized)
struct ProxyKillTests {
    /// A WebSocket client through the proxy at argv[1] to the origin at argv[2]: sends
    /// "hello", waits for its echo, says "echoed" and stays open.
    static let webSocketClient = #"""
import os, socket, sys, time
proxy, origin = int(sys.argv[1]), int(sys.argv[2])
s = socket.create_connection(("127.0.0.1", proxy))
s.sendall(f"GET http://127.0.0.1:{origin}/ws HTTP/1.1\r\nHost: 127.0.0.1:{origin}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
head = b""
while b"\r\n\r\n" not in head: head += s.recv(1)
key = os.urandom(4)
s.sendall(bytes([0x81, 0x85]) + key + bytes(b ^ key[i % 4] for i, b in enumerate(b"hello")))
echo = s.recv(7, socket.MSG_WAITALL)
print("echoed" if head.startswith(b"HTTP/1.1 101") and echo == b"\x81\x05hello" else "failed", flush=True)
time.sleep(60)
"""#

    /// Starts `executable`, and returns it once its standard output holds `text`.
    static func startUntil(_ executable: String, _ arguments: [String], printed text: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var seen = ""
        while !seen.contains(text) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
        }
        #expect(seen.contains(text), "printed: \(seen)")
        return process
    }

    @Test("SIGKILL while an event stream is streaming and a WebSocket is open: the next session stores both, marked as cut by the stop, the WebSocket with its messages",
          .enabled(if: RecordProxyTests.available, "curl, openssl or python3 is missing (Tools/test installs them)"))
    func killedWhileStreaming() throws {
        let dir = try CLITests.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let python = ServeTests.which("python3")!
        let script = CLITests.root.appendingPathComponent("Tools/testing/origin.py").path
        let (origin, _, portLine, _) = try RecordProxyTests.start(URL(fileURLWithPath: python), [script], in: dir, until: "port ")
        let up = try #require(Int(portLine.dropFirst(5)))
        let (proxy, _, line, _) = try RecordProxyTests.start(CLITests.binary, ["record", "--proxy", "--port", "0", "--db", "p.sqlite", "--name", "cut"],
                                                             in: dir, until: "recording through the proxy")
        let port = try RecordProxyTests.proxyPort(line)
        let stream = try Self.startUntil(ServeTests.which("curl")!, ["-sSN", "-x", "http://127.0.0.1:\(port)", "http://127.0.0.1:\(up)/stream"], printed: "data: one")
        let socket = try Self.startUntil(python, ["-c", Self.webSocketClient, String(port), String(up)], printed: "echoed")
        defer {
            for process in [origin, stream, socket] {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
        // The side file is written off the event loop: wait until it has both and the messages.
        let side = dir.appendingPathComponent("h5replay-proxy-cut.journal.har.inflight")
        #expect(eventually(10) {
            let text = (try? String(contentsOf: side, encoding: .utf8)) ?? ""
            return text.components(separatedBy: "\"begun\"").count == 3 && text.components(separatedBy: "\"message\"").count == 3
        })
        kill(proxy.processIdentifier, SIGKILL)
        proxy.waitUntilExit()

        let (again, againOut, _, _) = try RecordProxyTests.start(CLITests.binary, ["record", "--proxy", "--port", "0", "--db", "p.sqlite", "--name", "next"],
                                                                 in: dir, until: "recording through the proxy")
        kill(again.processIdentifier, SIGINT)
        let tail = String(decoding: againOut.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        again.waitUntilExit()
        #expect(tail.contains("storing its 2 exchange(s)"), "\(tail)")
        #expect(!FileManager.default.fileExists(atPath: side.path))
        let db = try DatabaseQueue(path: dir.appendingPathComponent("p.sqlite").path)
        let (exchanges, cuts, messages) = try db.read { db in
            let exchanges = try String.fetchAll(db, sql: """
                SELECT e.method || ' ' || e.url || ' ' || e.status FROM exchange e JOIN recording r ON r.id = e.recording_id
                WHERE r.name = 'cut' ORDER BY e.sequence
                """)
            let cuts = try String.fetchAll(db, sql: """
                SELECT d.message FROM diagnostic d JOIN recording r ON r.id = d.recording_id WHERE r.name = 'cut' AND d.code = 'response-incomplete'
                """)
            let messages = try String.fetchAll(db, sql: """
                SELECT m.direction || ' ' || m.length FROM websocket_message m JOIN recording r ON r.id = m.recording_id WHERE r.name = 'cut' ORDER BY m.position
                """)
            return (exchanges, cuts, messages)
        }
        #expect(Set(exchanges) == ["GET http://127.0.0.1:\(up)/stream 200", "GET http://127.0.0.1:\(up)/ws 101"], "\(exchanges)")
        #expect(cuts.count == 2 && cuts.allSatisfy { $0.contains("the recording proxy stopped (killed)") }, "\(cuts)")
        #expect(messages == ["send 5", "receive 5"], "\(messages)")
    }
}

/// Whether `condition` holds within `timeout` seconds, checked every 50 ms.
func eventually(_ timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(50_000)
    }
    return condition()
}
