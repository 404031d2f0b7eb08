import Foundation
import GRDB
import Testing

/// `serve` with real clients: curl through a recorded flow, and a real browser engine
/// loading pages recorded from a real browser engine.
@Suite("serve: a real replay origin, observed runs")
struct ServeTests {
    static func which(_ tool: String) -> String? {
        ["/usr/bin/\(tool)", "/bin/\(tool)", "/usr/local/bin/\(tool)"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts `serve` on a free port; returns the process, its port, and its output pipe.
    static func serve(_ arguments: [String], in dir: URL) throws -> (Process, Int, Pipe) {
        let process = Process()
        process.executableURL = CLITests.binary
        process.arguments = ["serve", "--port", "0"] + arguments
        process.currentDirectoryURL = dir
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        while !text.contains("open http://") {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let port = text.split(separator: "\n").first { $0.hasPrefix("serving") }
            .flatMap { $0.split(separator: ":").last }.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        return (process, try #require(port, "serve printed: \(text)"), out)
    }

    static func stop(_ process: Process, _ out: Pipe) -> String {
        kill(process.processIdentifier, SIGINT)
        let rest = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: rest, as: UTF8.self)
    }

    /// The latest run's findings as "code #sequence".
    static func observedFindings(_ db: URL) throws -> [String] {
        let queue = try DatabaseQueue(path: db.path)
        return try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT code, sequence FROM finding WHERE run_id = (SELECT MAX(id) FROM run) AND preset = 'observed' ORDER BY sequence, code")
                .map { "\($0["code"] as String) #\($0["sequence"] as Int)" }
        }
    }

    @Test("serve --keep-going: a folder with a file that is not HAR serves the rest; without it serve refuses to start, naming the file",
          .enabled(if: which("curl") != nil, "curl is not installed"))
    func keepGoing() throws {
        let dir = try CLITests.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let folder = try CLITests.folder("exports", in: dir, copying: ["login-redirect.har"])
        try Data(#"{"log": {"entries": 7}}"#.utf8).write(to: folder.appendingPathComponent("a-bad.har"))

        let refused = try CLITests.h5replay(["serve", "--port", "0", "exports", "--db", "refused.sqlite"], in: dir)
        #expect(refused.status == 2 && refused.stderr.contains("a-bad.har: log.entries: expected an array"), "\(refused.stderr)")

        let (server, port, out) = try Self.serve(["exports", "--keep-going", "--db", "serve.sqlite"], in: dir)
        let status = try RobustnessTests.run(Self.which("curl")!, ["-s", "-o", "/dev/null", "--fail", "http://127.0.0.1:\(port)/login"])
        let log = Self.stop(server, out)
        #expect(status == 0, "\(log)")
        #expect(log.contains("GET /login  0 B  → #0 200"), "\(log)")
    }

    @Test("curl through a recorded flow, one POST sent without its body: BODY_LOST for exactly that exchange",
          .enabled(if: which("curl") != nil, "curl is not installed"))
    func curlFlow() throws {
        let dir = try CLITests.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (server, port, out) = try Self.serve(["Recordings/login-redirect.har", "--db", "serve.sqlite"], in: dir)
        let base = "http://127.0.0.1:\(port)"
        let jar = dir.appendingPathComponent("jar.txt").path
        func curl(_ arguments: [String]) throws -> Int32 {
            try RobustnessTests.run(Self.which("curl")!, ["-s", "-o", "/dev/null", "-c", jar, "-b", jar] + arguments)
        }
        #expect(try curl(["\(base)/login"]) == 0)
        // The recorded POST carried `user=alice&password=...`; this one carries nothing.
        #expect(try curl(["-X", "POST", "\(base)/login"]) == 0)
        #expect(try curl(["\(base)/home"]) == 0)
        #expect(try curl(["-H", "X-Requested-With: XMLHttpRequest", "\(base)/api/profile"]) == 0)
        let log = Self.stop(server, out)
        #expect(server.terminationStatus == 0, "\(log)")
        #expect(log.contains("POST /login  0 B  → #1 302"))
        let findings = try Self.observedFindings(dir.appendingPathComponent("serve.sqlite"))
        #expect(findings.filter { $0.hasPrefix("BODY_") } == ["BODY_LOST #1"], "\(findings)")
        #expect(!findings.contains { $0.hasPrefix("REQUEST_STALLED") }, "\(findings)")
        // Every arrival is kept with its headers and body.
        let queue = try DatabaseQueue(path: dir.appendingPathComponent("serve.sqlite").path)
        let arrivals = try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT method, target, headers, body_length, sequence FROM arrival ORDER BY position")
        }
        #expect(arrivals.map { "\($0["method"] as String) \($0["target"] as String) \($0["body_length"] as Int) #\(($0["sequence"] as Int?) ?? -1)" }
            == ["GET /login 0 #0", "POST /login 0 #1", "GET /home 0 #2", "GET /api/profile 0 #3"])
        #expect((arrivals.last?["headers"] as String?)?.contains("X-Requested-With") == true)
        // And `report` shows the observed run.
        let report = try CLITests.h5replay(["report", "--db", "serve.sqlite"], in: dir)
        #expect(report.stdout.contains("observed"))
        #expect(report.stdout.contains("BODY_LOST"))
    }

    @Test("headless Chromium loads pages a real engine recorded, through serve: no body or redirect finding",
          .enabled(if: which("chromium") != nil, "chromium is not installed (Tools/test installs Debian's)"),
          arguments: ["browser-xhr-fetch", "browser-form-redirect"])
    func realBrowser(recording: String) throws {
        let dir = try CLITests.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (server, port, out) = try Self.serve(["Recordings/\(recording).pcap", "--db", "serve.sqlite"], in: dir)
        let browser = Process()
        browser.executableURL = URL(fileURLWithPath: Self.which("chromium")!)
        browser.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                             "--user-data-dir=\(dir.appendingPathComponent("profile").path)", "--virtual-time-budget=5000", "--dump-dom", "http://127.0.0.1:\(port)/"]
        let dom = Pipe()
        browser.standardOutput = dom
        browser.standardError = FileHandle.nullDevice
        try browser.run()
        let page = String(decoding: dom.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        browser.waitUntilExit()
        let log = Self.stop(server, out)
        // The page's scripts ran to the end: they set the title once their last fetch answered.
        #expect(page.contains("<title>done</title>"), "\(page.prefix(400))")
        let findings = try Self.observedFindings(dir.appendingPathComponent("serve.sqlite"))
        #expect(!findings.contains { $0.hasPrefix("BODY_") || $0.hasPrefix("REDIRECT_") || $0.hasPrefix("REQUEST_STALLED") }, "\(findings)\n\(log)")
        #expect(log.contains("observed run"), "\(log)")
    }

    /// Whether WebKitGTK can start here: its introspection data, python3-gi and Xvfb
    /// (Tools/lab/setup installs them; Tools/test runs it first).
    static var webKitGTKAvailable: Bool {
        FileManager.default.fileExists(atPath: "/usr/lib/x86_64-linux-gnu/girepository-1.0/WebKit2-4.1.typelib") && which("Xvfb") != nil
            && FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/gi/__init__.py")
    }

    @Test("WebKitGTK, a second real engine, loads pages a real engine recorded, through serve: no body, redirect or missing-request finding",
          .enabled(if: webKitGTKAvailable, "WebKitGTK is not installed (Tools/lab/setup installs it)"),
          arguments: ["browser-xhr-fetch", "browser-form-redirect"])
    func webKitGTK(recording: String) throws {
        let dir = try CLITests.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (server, port, out) = try Self.serve(["Recordings/\(recording).pcap", "--db", "serve.sqlite"], in: dir)
        let browser = Process()
        browser.executableURL = CLITests.root.appendingPathComponent("Tools/lab/load")
        browser.arguments = ["http://127.0.0.1:\(port)/", "--timeout", "15"]
        let page = Pipe()
        browser.standardOutput = page
        browser.standardError = FileHandle.nullDevice
        try browser.run()
        let result = String(decoding: page.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        browser.waitUntilExit()
        let log = Self.stop(server, out)
        // The page's scripts ran to the end in WebKit: they set the title once their last fetch answered.
        #expect(browser.terminationStatus == 0 && result.contains("\"title\": \"done\""), "\(result)\n\(log)")
        let findings = try Self.observedFindings(dir.appendingPathComponent("serve.sqlite"))
        #expect(!findings.contains { $0.hasPrefix("BODY_") || $0.hasPrefix("REDIRECT_") || $0.hasPrefix("REQUEST_STALLED") }, "\(findings)\n\(log)")
        #expect(log.contains("observed run"), "\(log)")
    }
}
