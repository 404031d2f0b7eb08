import Foundation
import GRDB
import Testing

/// `serve` killed outright (SIGKILL) while it streams a large response and plays a
/// WebSocket back, with real clients on loopback: the database opens whole, the recording
/// is as it was, and the next `serve` stores what had arrived as the observed run.
@Suite("serve killed mid-stream and mid-WebSocket")
struct ServeKillTests {
    static let bigBytes = 16_000_000

    /// A download of `bigBytes` (more than the kernel's socket buffers hold, so that a
    /// client taking it slowly leaves most of it unsent) and a WebSocket whose last server message comes 8 s after
    /// the handshake, so that a kill a moment in finds both still going.
    static var har: String {
        let big = String(repeating: "x", count: bigBytes)
        return #"""
            {"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": [
              {"startedDateTime": "2026-12-06T10:00:00.000Z", "time": 5,
               "request": {"method": "GET", "url": "http://big.example/big", "httpVersion": "HTTP/1.1", "headers": [], "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
               "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "headers": [{"name": "Content-Type", "value": "application/octet-stream"}], "cookies": [],
                            "content": {"size": \#(bigBytes), "mimeType": "application/octet-stream", "text": "\#(big)"}, "redirectURL": "", "headersSize": -1, "bodySize": \#(bigBytes)},
               "cache": {}, "timings": {"send": 0, "wait": 5, "receive": 0}},
              {"startedDateTime": "2026-12-06T10:00:01.000Z", "time": 5, "_resourceType": "websocket",
               "request": {"method": "GET", "url": "ws://chat.example/socket", "httpVersion": "HTTP/1.1", "headers": [{"name": "Upgrade", "value": "websocket"}, {"name": "Connection", "value": "Upgrade"}], "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
               "response": {"status": 101, "statusText": "Switching Protocols", "httpVersion": "HTTP/1.1", "headers": [{"name": "Upgrade", "value": "websocket"}], "cookies": [], "content": {"size": 0, "mimeType": "x-unknown"}, "redirectURL": "", "headersSize": -1, "bodySize": 0},
               "cache": {}, "timings": {"send": 0, "wait": 5, "receive": 0},
               "_webSocketMessages": [
                 {"type": "receive", "time": 1796551201.1, "opcode": 1, "data": "first"},
                 {"type": "send", "time": 1796551201.5, "opcode": 1, "data": "hello"},
                 {"type": "receive", "time": 1796551209.0, "opcode": 1, "data": "late"}
               ]}
            ]}}
            """#
    }

    /// Opens /socket on the serve at argv[1], reads the first server message, sends "hello",
    /// says "sent" and waits for the rest.
    static let webSocketClient = #"""
import os, socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /socket HTTP/1.1\r\nHost: chat.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
head = b""
while b"\r\n\r\n" not in head: head += s.recv(1)
first = s.recv(7, socket.MSG_WAITALL)
key = os.urandom(4)
s.sendall(bytes([0x81, 0x85]) + key + bytes(b ^ key[i % 4] for i, b in enumerate(b"hello")))
print("sent" if head.startswith(b"HTTP/1.1 101") and first == b"\x81\x05first" else "failed", flush=True)
time.sleep(60)
"""#

    @Test("SIGKILL while a download streams and a WebSocket plays: the database is whole, the recording unchanged, the next serve stores the arrivals as the observed run",
          .enabled(if: ServeTests.which("curl") != nil && ServeTests.which("python3") != nil, "curl or python3 is missing (Tools/test installs them)"))
    func killedMidStream() throws {
        let dir = try CLITests.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.har.write(to: dir.appendingPathComponent("cut.har"), atomically: true, encoding: .utf8)
        #expect(try CLITests.h5replay(["import", "cut.har", "--db", "s.sqlite"], in: dir).status == 0)
        let before = try CLITests.h5replay(["show", "cut", "--format", "json", "--db", "s.sqlite"], in: dir).stdout
        let db = dir.appendingPathComponent("s.sqlite").path

        let (server, port, out) = try ServeTests.serve(["cut", "--db", "s.sqlite"], in: dir)
        let (download, go, said) = try Self.slowDownload(port: port)
        #expect(eventually(10) { Self.pending(db) == 1 })
        let socket = try ProxyKillTests.startUntil(ServeTests.which("python3")!, ["-c", Self.webSocketClient, String(port)], printed: "sent")
        defer {
            kill(socket.processIdentifier, SIGKILL)
            socket.waitUntilExit()
        }
        // The handshake and the client's message are stored as they come, off the event loop.
        #expect(eventually(10) { Self.pending(db) == 3 })
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
        _ = out.fileHandleForReading.readDataToEndOfFile()
        // The client takes the rest at full speed: what had been sent, then the close.
        go.fileHandleForWriting.write(Data("\n".utf8))
        let result = String(decoding: said.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        download.waitUntilExit()
        let got = result.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").last.flatMap { Int($0) } ?? -1
        print("serve killed mid-download: the client got \(got) of \(Self.bigBytes) bytes, then the close")
        #expect(got >= 1_000_000 && got < Self.bigBytes, "the download client said: \(result)")

        let check = try DatabaseQueue(path: db).read { try String.fetchAll($0, sql: "PRAGMA integrity_check") }
        #expect(check == ["ok"])
        #expect(try CLITests.h5replay(["show", "cut", "--format", "json", "--db", "s.sqlite"], in: dir).stdout == before)

        let (again, againOut, _, startup) = try RecordProxyTests.start(CLITests.binary, ["serve", "--port", "0", "cut", "--db", "s.sqlite"], in: dir, until: "open http://")
        let log = startup + ServeTests.stop(again, againOut)
        #expect(log.contains("was cut off"), "\(log)")
        let arrivals = try DatabaseQueue(path: db).read { db in
            try String.fetchAll(db, sql: "SELECT method || ' ' || target FROM arrival WHERE run_id = (SELECT MIN(id) FROM run) ORDER BY position")
        }
        #expect(arrivals == ["GET http://big.example/big", "GET /socket", "WEBSOCKET /socket"], "\(log)")
        #expect(Self.pending(db) == 0)
    }

    /// Takes the first megabyte of /big with a small receive buffer, says "reading", waits
    /// for a line on its input, then reads to the end and says how much came.
    static let downloadClient = #"""
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
s.connect(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET http://big.example/big HTTP/1.1\r\nHost: big.example\r\n\r\n")
data = b""
while b"\r\n\r\n" not in data: data += s.recv(65536)
head, body = data.split(b"\r\n\r\n", 1)
got = len(body)
while got < 1000000: got += len(s.recv(65536))
print("reading", flush=True)
sys.stdin.readline()
while chunk := s.recv(1 << 20): got += len(chunk)
print("got", got, flush=True)
"""#

    /// Starts `downloadClient` and returns once it has taken its first megabyte, with the
    /// pipe that lets it go on and the one it answers on.
    static func slowDownload(port: Int) throws -> (Process, go: Pipe, said: Pipe) {
        let client = Process()
        client.executableURL = URL(fileURLWithPath: ServeTests.which("python3")!)
        client.arguments = ["-c", downloadClient, String(port)]
        let (go, said) = (Pipe(), Pipe())
        client.standardInput = go
        client.standardOutput = said
        try client.run()
        var seen = ""
        while !seen.contains("reading"), case let chunk = said.fileHandleForReading.availableData, !chunk.isEmpty {
            seen += String(decoding: chunk, as: UTF8.self)
        }
        #expect(seen.contains("reading"), "\(seen)")
        return (client, go, said)
    }

    /// Arrivals a running (or cut-off) serve session has stored.
    static func pending(_ db: String) -> Int {
        (try? DatabaseQueue(path: db).read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM pending_arrival") }) ?? 0
    }
}
