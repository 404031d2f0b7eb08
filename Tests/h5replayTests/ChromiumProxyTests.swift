import Foundation
import GRDB
import Testing

/// Headless Chromium, trusting h5replay's CA through an NSS database made with certutil (as
/// `ca show` tells a user), loads a page from an HTTPS origin on loopback through
/// `record --proxy`; the page's script uses an EventSource, a WebSocket and a large
/// download, then posts what it saw. The recording is then served to Chromium again by
/// `serve --tls`, the origin gone.
@Suite("Chromium through record --proxy, then the recording through serve", .serialized)
struct ChromiumProxyTests {
    /// 64 MB: enough that the proxy streams it and keeps it in a file past its first
    /// megabyte, under the 64 MiB default cap so that the recording holds it whole and
    /// `serve` plays it back whole. A gigabyte goes through in `gigabyteDownload`.
    static let downloadBytes = 64_000_000
    static let message = "hello from the page"

    static var available: Bool {
        ServeTests.which("chromium") != nil && FileManager.default.isExecutableFile(atPath: "/usr/bin/certutil") && RecordProxyTests.available
    }

    /// What the page posts to /result once its three parts are done (Tools/testing/origin.py).
    struct PageResult: Decodable {
        var events: [String]
        var eventTimes: [Double]
        var echo: String?
        var downloaded: Int
        var downloadError: String?
        var downloadMs: Double?

        /// When the first event came, how long after it the last, and the download's time.
        var figures: String {
            let spread = (eventTimes.last ?? 0) - (eventTimes.first ?? 0)
            return "first event at \(Int(eventTimes.first ?? -1)) ms, the last \(Int(spread)) ms after it, \(downloaded / 1_000_000) MB in \(Int(downloadMs ?? -1)) ms"
        }
    }

    @Test("an EventSource, a WebSocket and a 64 MB download work in Chromium through record --proxy with the CA trusted, are recorded, and replay under serve --tls",
          .enabled(if: available, "chromium, certutil (libnss3-tools), curl, openssl or python3 is not installed; Tools/test installs them"))
    func recordThenServe() throws {
        let workspace = try Workspace(downloadBytes: Self.downloadBytes)
        defer { workspace.end() }
        let (dir, home, origin, up) = (workspace.dir, workspace.home, workspace.origin, workspace.port)
        let straight = try #require(try Self.straight(in: dir, home: home, origin: up), "the page posted nothing straight to the origin")
        #expect(straight.events == ["one", "two", "three"] && straight.echo == Self.message && straight.downloaded == Self.downloadBytes, "\(straight)")
        let recordLog = try Self.record(in: dir, home: home, origin: up)
        // Gone for serve: what the page gets then comes from the recording.
        kill(origin.processIdentifier, SIGKILL)
        origin.waitUntilExit()

        let db = try DatabaseQueue(path: dir.appendingPathComponent("p.sqlite").path)
        let page = try Self.posted(db, sql: """
            SELECT b.content FROM exchange e JOIN recording r ON r.id = e.recording_id JOIN body b ON b.sha256 = e.request_body_sha256
            WHERE r.name = 'chromium' AND e.method = 'POST' AND e.url LIKE '%/result'
            """)
        let recorded = try #require(page, "the page posted nothing through the proxy:\n\(recordLog)")
        #expect(recorded.events == ["one", "two", "three"], "\(recorded)")
        // The origin spaces the events 0.4 s apart: held until the stream ended, they
        // would reach the page together.
        let spread = (recorded.eventTimes.last ?? 0) - (recorded.eventTimes.first ?? 0)
        #expect(spread > 600, "the events reached the page within \(spread) ms of each other")
        #expect(recorded.echo == Self.message && recorded.downloaded == Self.downloadBytes && recorded.downloadError == nil, "\(recorded)")
        try Self.checkRecording(db, origin: up)

        let served = try Self.serve(in: dir, home: home, origin: up)
        // The page's message is the recorded one: stored as an arrival of the WebSocket, said to be the same.
        #expect(Self.line(in: served.log) { $0.hasPrefix("WEBSOCKET https://localhost") && $0.contains("/ws  19 B") && $0.hasSuffix("message 0 same") }, "\(served.log)")
        let replayed = try #require(served.page, "the page posted nothing to serve:\n\(served.log)")
        #expect(replayed.events == ["one", "two", "three"], "\(replayed)")
        #expect(replayed.echo == Self.message && replayed.downloaded == Self.downloadBytes && replayed.downloadError == nil, "\(replayed)")
        print("Chromium straight: \(straight.figures); through record --proxy: \(recorded.figures); through serve --tls: \(replayed.figures)")
    }

    /// A gigabyte: a long download, far past the 64 MiB the recording keeps by default.
    static let gigabyte = 1_000_000_000

    @Test("a 1 GB download works in Chromium and in curl through record --proxy as it does straight, the proxy's memory stays under 100 MB and the recording keeps the cap with a note",
          .enabled(if: available, "chromium, certutil (libnss3-tools), curl, openssl or python3 is not installed; Tools/test installs them"))
    func gigabyteDownload() throws {
        let workspace = try Workspace(downloadBytes: Self.gigabyte)
        defer { workspace.end() }
        let (dir, home, up) = (workspace.dir, workspace.home, workspace.port)
        let straight = try #require(try Self.straight(in: dir, home: home, origin: up), "the page posted nothing straight to the origin")
        #expect(straight.downloaded == Self.gigabyte && straight.downloadError == nil, "\(straight)")

        let (proxy, out, line, printed) = try RecordProxyTests.start(
            CLITests.binary, ["record", "--proxy", "--port", "0", "--db", "p.sqlite", "--name", "gigabyte", "--upstream-ca", "up-cert.pem"],
            in: dir, until: "recording through the proxy")
        let port = try RecordProxyTests.proxyPort(line)
        let output = LiveOutput(out, printed: printed)
        let browser = try Self.chromium("https://localhost:\(up)/app", proxy: port, home: home, profile: dir.appendingPathComponent("record-profile"))
        let posted = output.wait(300) { $0.contains("POST https://localhost:\(up)/result  ") }
        Self.end(browser)
        let curl = try Self.curl(["--cacert", dir.appendingPathComponent("h5replay-ca.pem").path, "-x", "http://127.0.0.1:\(port)",
                                       "-o", "/dev/null", "-w", "%{size_download}", "https://localhost:\(up)/download"])
        let peak = Self.peakResidentBytes(of: proxy.processIdentifier)
        kill(proxy.processIdentifier, SIGINT)
        proxy.waitUntilExit()
        let log = output.finished()
        #expect(posted && proxy.terminationStatus == 0, "\(log)")
        let db = try DatabaseQueue(path: dir.appendingPathComponent("p.sqlite").path)
        let page = try #require(try Self.posted(db, sql: """
            SELECT b.content FROM exchange e JOIN recording r ON r.id = e.recording_id JOIN body b ON b.sha256 = e.request_body_sha256
            WHERE r.name = 'gigabyte' AND e.method = 'POST' AND e.url LIKE '%/result'
            """), "the page posted nothing through the proxy:\n\(log)")
        #expect(page.downloaded == Self.gigabyte && page.downloadError == nil && page.events == ["one", "two", "three"], "\(page)")
        #expect(curl.status == 0 && curl.output == String(Self.gigabyte), "curl exited \(curl.status): \(curl.output)")
        let limit = 100 * 1024 * 1024
        #expect(peak.map { $0 > 0 && $0 < limit } ?? false, "the proxy's peak resident memory was \(peak.map { "\($0 / 1_048_576) MiB" } ?? "unreadable") after 2 GB through it")
        // Each download is kept to the default cap (64 MiB), with a note saying so.
        let kept = try db.read { db in
            try Row.fetchAll(db, sql: """
                SELECT b.length, (SELECT COUNT(*) FROM diagnostic d WHERE d.recording_id = r.id AND d.sequence = e.sequence AND d.code = 'response-body-limit') AS notes
                FROM exchange e JOIN recording r ON r.id = e.recording_id JOIN body b ON b.sha256 = e.response_body_sha256
                WHERE r.name = 'gigabyte' AND e.url LIKE '%/download'
                """).map { row -> String in
                    let length: Int = row["length"], notes: Int = row["notes"]
                    return "\(length) \(notes)"
                }
        }
        #expect(kept == ["67108864 1", "67108864 1"], "\(kept)")
        print("Chromium straight: \(straight.figures); through record --proxy: \(page.figures); proxy peak \((peak ?? 0) / 1_048_576) MiB")
    }

    /// A workspace with h5replay's CA, a Chromium home whose NSS database trusts it, and the
    /// origin serving the page with a download of `downloadBytes`; `end` stops the origin
    /// if it still runs and removes the workspace.
    struct Workspace {
        let dir: URL, home: URL, origin: Process, port: Int

        init(downloadBytes: Int) throws {
            dir = try CLITests.workspace()
            _ = try CLITests.h5replay(["ca", "init", "--db", "p.sqlite"], in: dir)
            home = try TLSServeTests.trustingHome(dir, ca: dir.appendingPathComponent("h5replay-ca.pem").path)
            (origin, port) = try RecordProxyTests.origin(in: dir, extra: ["--download-bytes", String(downloadBytes), "--result-file", "straight.json"])
        }

        func end() {
            if origin.isRunning {
                kill(origin.processIdentifier, SIGKILL)
                origin.waitUntilExit()
            }
            try? FileManager.default.removeItem(at: dir)
        }
    }

    /// curl's exit status and standard output.
    static func curl(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(ServeTests.which("curl")))
        process.arguments = ["-sS", "--max-time", "120"] + arguments
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    /// A running process's peak resident memory in bytes (`VmHWM`), nil when unreadable.
    static func peakResidentBytes(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }.map { $0 * 1024 }
    }

    /// The recording holds each exchange whole: the event stream's three events, the
    /// WebSocket's message each way, the download's every byte; none marked cut.
    static func checkRecording(_ db: DatabaseQueue, origin up: Int) throws {
        let base = "https://localhost:\(up)"
        let (rows, messages, cuts) = try db.read { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT e.method || ' ' || e.url || ' ' || e.status AS exchange, b.length, CASE WHEN b.length < 1000 THEN b.content END AS content
                FROM exchange e JOIN recording r ON r.id = e.recording_id LEFT JOIN body b ON b.sha256 = e.response_body_sha256
                WHERE r.name = 'chromium' ORDER BY e.sequence
                """)
            let messages = try String.fetchAll(db, sql: """
                SELECT m.direction || ' ' || CAST(b.content AS TEXT) FROM websocket_message m JOIN recording r ON r.id = m.recording_id
                JOIN body b ON b.sha256 = m.data_sha256 WHERE r.name = 'chromium' ORDER BY m.position
                """)
            let cuts = try String.fetchAll(db, sql: """
                SELECT d.message FROM diagnostic d JOIN recording r ON r.id = d.recording_id WHERE r.name = 'chromium' AND d.code = 'response-incomplete'
                """)
            return (rows, messages, cuts)
        }
        let byExchange = Dictionary(rows.map { ($0["exchange"] as String, $0) }) { first, _ in first }
        for expected in ["GET \(base)/app 200", "GET \(base)/events 200", "GET \(base)/ws 101", "GET \(base)/download 200", "POST \(base)/result 200"] {
            #expect(byExchange[expected] != nil, "\(expected) is not recorded: \(byExchange.keys.sorted())")
        }
        let events = (byExchange["GET \(base)/events 200"]?["content"] as Data?).map { String(decoding: $0, as: UTF8.self) }
        #expect(events == "retry: 60000\ndata: one\n\ndata: two\n\ndata: three\n\n")
        #expect(byExchange["GET \(base)/download 200"]?["length"] as Int? == Self.downloadBytes)
        #expect(messages == ["send \(Self.message)", "receive \(Self.message)"])
        #expect(cuts.isEmpty, "\(cuts)")
    }

    /// Chromium loads the page from the origin itself, its certificate trusted as well: what
    /// the page sees without the proxy.
    static func straight(in dir: URL, home: URL, origin up: Int) throws -> PageResult? {
        let nss = home.appendingPathComponent(".pki/nssdb").path
        #expect(try RobustnessTests.run("/usr/bin/certutil", ["-d", "sql:\(nss)", "-A", "-t", "C,,", "-n", "origin", "-i", dir.appendingPathComponent("up-cert.pem").path]) == 0)
        let file = dir.appendingPathComponent("straight.json")
        let browser = try Self.chromium("https://localhost:\(up)/app", proxy: nil, home: home, profile: dir.appendingPathComponent("straight-profile"))
        _ = eventually(120) { FileManager.default.fileExists(atPath: file.path) }
        end(browser)
        return try? JSONDecoder().decode(PageResult.self, from: Data(contentsOf: file))
    }

    /// Chromium loads the page through `record --proxy` until every exchange is journaled;
    /// returns the proxy's output, the recording stored.
    static func record(in dir: URL, home: URL, origin up: Int) throws -> String {
        let (proxy, out, line, printed) = try RecordProxyTests.start(
            CLITests.binary, ["record", "--proxy", "--port", "0", "--db", "p.sqlite", "--name", "chromium", "--upstream-ca", "up-cert.pem"],
            in: dir, until: "recording through the proxy")
        let output = LiveOutput(out, printed: printed)
        let browser = try Self.chromium("https://localhost:\(up)/app", proxy: RecordProxyTests.proxyPort(line), home: home, profile: dir.appendingPathComponent("record-profile"))
        // A line per exchange once it is journaled; the WebSocket's when it closes.
        let marks = ["/events  ", "/download  ", "WebSocket message(s)", "POST https://localhost:\(up)/result  "]
        let journaled = output.wait(300) { text in marks.allSatisfy(text.contains) }
        end(browser)
        kill(proxy.processIdentifier, SIGINT)
        proxy.waitUntilExit()
        let log = output.finished()
        #expect(journaled, "not every exchange was journaled:\n\(log)")
        #expect(proxy.terminationStatus == 0 && log.contains("stored chromium"), "\(log)")
        return log
    }

    /// Chromium loads the page from the recording through `serve --tls` (as its proxy)
    /// until the page has posted; returns what it posted and serve's output.
    static func serve(in dir: URL, home: URL, origin up: Int) throws -> (page: PageResult?, log: String) {
        let (server, port, out, _, startup) = try TLSServeTests.serveTLS(["chromium", "--db", "p.sqlite"], in: dir)
        let output = LiveOutput(out, printed: startup)
        let browser = try Self.chromium("https://localhost:\(up)/app", proxy: port, home: home, profile: dir.appendingPathComponent("serve-profile"))
        // A tunnel's arrivals are shown as the recording has them, with the CONNECT's port.
        let posted = output.wait(300) { text in Self.line(in: text) { $0.hasPrefix("POST https://localhost:\(up)/result  ") } }
        end(browser)
        kill(server.processIdentifier, SIGINT)
        server.waitUntilExit()
        let log = output.finished()
        #expect(posted, "the page never posted its result to serve:\n\(log)")
        let db = try DatabaseQueue(path: dir.appendingPathComponent("p.sqlite").path)
        let page = try Self.posted(db, sql: """
            SELECT b.content FROM arrival a JOIN body b ON b.sha256 = a.body_sha256
            WHERE a.run_id = (SELECT MAX(id) FROM run) AND a.method = 'POST' AND a.target LIKE '%/result'
            """)
        return (page, log)
    }

    /// Whether a line of `text` satisfies `condition`.
    static func line(in text: String, _ condition: (Substring) -> Bool) -> Bool {
        text.split(separator: "\n").contains(where: condition)
    }

    /// The page's result as the query's one body gives it; nil when there is none.
    static func posted(_ db: DatabaseQueue, sql: String) throws -> PageResult? {
        guard let body = try db.read({ try Data.fetchOne($0, sql: sql) }) else { return nil }
        return try JSONDecoder().decode(PageResult.self, from: body)
    }

    /// Headless Chromium at `url`, through the proxy at `port` when there is one, trusting what `home`'s NSS
    /// database trusts; it runs until ended.
    static func chromium(_ url: String, proxy port: Int?, home: URL, profile: URL) throws -> Process {
        let browser = Process()
        browser.executableURL = URL(fileURLWithPath: ServeTests.which("chromium")!)
        browser.arguments = [
            "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--user-data-dir=\(profile.path)", url,
        ]
        if let port {
            // Chromium sends loopback straight, past any proxy, unless told otherwise.
            browser.arguments! += ["--proxy-server=http://127.0.0.1:\(port)", "--proxy-bypass-list=<-loopback>"]
        }
        browser.environment = ProcessInfo.processInfo.environment.merging(["HOME": home.path]) { $1 }
        browser.standardOutput = FileHandle.nullDevice
        browser.standardError = FileHandle.nullDevice
        try browser.run()
        return browser
    }

    /// Ends a browser: SIGTERM, then SIGKILL if it is still there after 5 s.
    static func end(_ browser: Process) {
        kill(browser.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while browser.isRunning, Date() < deadline { usleep(50_000) }
        if browser.isRunning { kill(browser.processIdentifier, SIGKILL) }
        browser.waitUntilExit()
    }
}

/// A process's output read as it comes, on a thread of its own, so that a test can wait
/// for what it prints with a deadline instead of blocking on a read.
final class LiveOutput: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data
    private var ended = false

    init(_ pipe: Pipe, printed: String = "") {
        data = Data(printed.utf8)
        let handle = pipe.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let chunk = handle.availableData
                lock.withLock {
                    data.append(chunk)
                    ended = chunk.isEmpty
                }
                if chunk.isEmpty { return }
            }
        }
    }

    var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }

    /// Whether the output comes to satisfy `condition` within `timeout` seconds.
    func wait(_ timeout: Double, until condition: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(text) { return true }
            usleep(50_000)
        }
        return condition(text)
    }

    /// All of the output, once the process has closed it (or 30 s have passed).
    func finished() -> String {
        _ = wait(30) { _ in lock.withLock { ended } }
        return text
    }
}
