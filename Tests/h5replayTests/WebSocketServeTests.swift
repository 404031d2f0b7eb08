import Foundation
import GRDB
import Testing

/// `serve` plays a recorded WebSocket back to a real client (Python, raw sockets): the
/// recorded server messages in order, the client's stored as arrivals of the observed run.
@Suite("serve plays back a recorded WebSocket")
struct WebSocketServeTests {
    /// Handshake to /socket, reads the two recorded server messages, sends the recorded
    /// client message and one more, then closes; prints each server frame as `op:hex`.
    static let client = #"""
import os, socket, struct, sys
def read_frame(sock):
    h = sock.recv(2, socket.MSG_WAITALL)
    if len(h) < 2: return None
    op = h[0] & 15; n = h[1] & 127
    if n == 126: n = struct.unpack("!H", sock.recv(2, socket.MSG_WAITALL))[0]
    return op, (sock.recv(n, socket.MSG_WAITALL) if n else b"")
def frame(op, data):
    key = os.urandom(4)
    return bytes([128 | op, 128 | len(data)]) + key + bytes(b ^ key[i % 4] for i, b in enumerate(data))
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /socket HTTP/1.1\r\nHost: chat.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
resp = b""
while b"\r\n\r\n" not in resp: resp += s.recv(1)
if not resp.startswith(b"HTTP/1.1 101"): sys.exit(2)
for _ in range(2):
    op, data = read_frame(s); print(f"{op}:{data.hex()}", flush=True)
s.sendall(frame(1, sys.argv[2].encode())); s.sendall(frame(1, b"one more"))
s.sendall(frame(8, b"\x03\xe8"))
op, _ = read_frame(s); print(f"close {op}")
"""#

    @Test("a Chrome HAR's WebSocket served: the server messages reach the client in order; the client's are printed and kept as arrivals, the recorded one said to be the same",
          .enabled(if: ServeTests.which("python3") != nil, "python3 is missing (Tools/test installs it)"))
    func playback() throws {
        let dir = try WebSocketShowTests.imported()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (server, port, out) = try ServeTests.serve(["chat", "--db", "s.sqlite"], in: dir)
        let auth = #"{"type":"auth","token":"\#(WebSocketShowTests.token)"}"#
        let script = dir.appendingPathComponent("client.py")
        try Self.client.write(to: script, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ServeTests.which("python3")!)
        process.arguments = [script.path, String(port), auth]
        let printed = Pipe()
        process.standardOutput = printed
        try process.run()
        let frames = String(decoding: printed.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let log = ServeTests.stop(server, out)
        #expect(process.terminationStatus == 0, "\(frames)")
        let price = Data("price 1.25 at https://chat.example/q?token=\(WebSocketShowTests.token) now".utf8).map { String(format: "%02x", $0) }.joined()
        #expect(frames.split(separator: "\n") == ["2:0001ff", "1:\(price)", "close 8"])
        #expect(log.contains("WEBSOCKET /socket  47 B  → #0 101, message 0 same"), "\(log)")
        #expect(log.contains("WEBSOCKET /socket  8 B  → #0 101, message 1 extra"), "\(log)")
        let queue = try DatabaseQueue(path: dir.appendingPathComponent("s.sqlite").path)
        let kept = try queue.read { db in
            try String.fetchAll(db, sql: "SELECT method FROM arrival WHERE run_id = (SELECT MAX(id) FROM run) ORDER BY position")
        }
        #expect(kept == ["GET", "WEBSOCKET", "WEBSOCKET"])
        #expect(try ServeTests.observedFindings(dir.appendingPathComponent("s.sqlite")).isEmpty)
    }
}
