import Foundation
import GRDB
import Testing

/// curl through `record --proxy` to a Python origin on loopback whose event stream sends
/// three events 0.4 s apart (Tools/testing/origin.py): each reaches curl as it is sent,
/// over plain HTTP and through an intercepted CONNECT, and the recording holds all three.
@Suite("curl reads an event stream through record --proxy as it comes", .serialized)
struct ProxyCurlStreamTests {
    @Test("each event reaches curl as the origin sends it, the first 0.8 s before the last; plain HTTP and HTTPS through CONNECT with the CA",
          .enabled(if: RecordProxyTests.available, "curl, openssl or python3 is missing (Tools/test installs them)"), arguments: [false, true])
    func eventStream(https: Bool) throws {
        let dir = try CLITests.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (origin, up) = try https ? RecordProxyTests.origin(in: dir) : Self.plainOrigin(in: dir)
        defer {
            kill(origin.processIdentifier, SIGKILL)
            origin.waitUntilExit()
        }
        let (proxy, out, line, _) = try RecordProxyTests.start(
            CLITests.binary, ["record", "--proxy", "--port", "0", "--db", "p.sqlite", "--name", "events"] + (https ? ["--upstream-ca", "up-cert.pem"] : []),
            in: dir, until: "recording through the proxy")
        let url = https ? "https://localhost:\(up)/events" : "http://127.0.0.1:\(up)/events"
        let tls = https ? ["--cacert", dir.appendingPathComponent("h5replay-ca.pem").path] : []
        let arrived = try Self.eventTimes(["-sSN", "--max-time", "20", "-x", "http://127.0.0.1:\(RecordProxyTests.proxyPort(line))"] + tls + [url])
        kill(proxy.processIdentifier, SIGINT)
        let tail = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        proxy.waitUntilExit()

        #expect(arrived.count == 3, "curl saw \(arrived)")
        if let first = arrived["one"], let last = arrived["three"] {
            print("event stream through the proxy (\(https ? "CONNECT, TLS" : "plain HTTP")): the last event \(Int((last - first) * 1000)) ms after the first")
            // Sent 0.8 s apart; a proxy holding the response until its end would hand both over at once.
            #expect(last - first > 0.6, "the first event came \(last - first) s before the last")
        }
        let db = try DatabaseQueue(path: dir.appendingPathComponent("p.sqlite").path)
        let body = try db.read { db in
            try Data.fetchOne(db, sql: """
                SELECT b.content FROM exchange e JOIN recording r ON r.id = e.recording_id JOIN body b ON b.sha256 = e.response_body_sha256 WHERE r.name = 'events'
                """)
        }
        #expect(body.map { String(decoding: $0, as: UTF8.self) } == "retry: 60000\ndata: one\n\ndata: two\n\ndata: three\n\n", "\(tail)")
    }

    /// origin.py over plain HTTP.
    static func plainOrigin(in dir: URL) throws -> (Process, Int) {
        let script = CLITests.root.appendingPathComponent("Tools/testing/origin.py").path
        let (process, _, line, _) = try RecordProxyTests.start(URL(fileURLWithPath: ServeTests.which("python3")!), [script], in: dir, until: "port ")
        return (process, try #require(Int(line.dropFirst(5))))
    }

    /// Runs curl and returns when each event's data first reached its output, by event.
    static func eventTimes(_ arguments: [String]) throws -> [String: TimeInterval] {
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: ServeTests.which("curl")!)
        curl.arguments = arguments
        let out = Pipe()
        curl.standardOutput = out
        curl.standardError = FileHandle.nullDevice
        try curl.run()
        var text = ""
        var times: [String: TimeInterval] = [:]
        while case let chunk = out.fileHandleForReading.availableData, !chunk.isEmpty {
            text += String(decoding: chunk, as: UTF8.self)
            let now = Date().timeIntervalSince1970
            for word in ["one", "two", "three"] where times[word] == nil && text.contains("data: \(word)\n") { times[word] = now }
        }
        curl.waitUntilExit()
        return times
    }
}
