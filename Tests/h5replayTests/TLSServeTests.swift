import Crypto
import Foundation
import GRDB
import Testing

/// HTTPS: h5replay's local CA, `serve --tls` as an origin and as a CONNECT proxy, with
/// real clients (curl, headless Chromium) that trust the CA the way a user makes them.
@Suite("HTTPS: the local CA and serve --tls")
struct TLSServeTests {
    @Test("ca init makes a certificate and a 0600 key; show gives the fingerprint and how to trust it, never the key; export writes the certificate alone")
    func caCommands() throws {
        let dir = try CLITests.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let made = try CLITests.h5replay(["ca", "init"], in: dir)
        #expect(made.status == 0, "\(made.stderr)")
        let key = dir.appendingPathComponent("h5replay-ca-key.pem").path
        let mode = try #require(FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int)
        #expect(mode & 0o777 == 0o600)
        #expect(try CLITests.h5replay(["ca", "init"], in: dir).status == 2, "an existing CA is not overwritten without --replace")

        let shown = try CLITests.h5replay(["ca", "show"], in: dir)
        #expect(shown.status == 0)
        for platform in ["xcrun simctl keychain booted add-root-cert", "update-ca-certificates", "certutil", "--cacert", "security add-trusted-cert"] {
            #expect(shown.stdout.contains(platform), "show says nothing of \(platform)")
        }
        let keyText = try String(contentsOfFile: key, encoding: .utf8)
        let keyBody = keyText.split(separator: "\n").dropFirst().first.map(String.init) ?? "none"
        for output in [made.stdout + made.stderr, shown.stdout + shown.stderr] {
            #expect(!output.contains("PRIVATE KEY") && !output.contains(keyBody))
        }

        #expect(try CLITests.h5replay(["ca", "export", "--der", "ca.cer"], in: dir).status == 0)
        let der = try Data(contentsOf: dir.appendingPathComponent("ca.cer"))
        let fingerprint = SHA256.hash(data: der).map { String(format: "%02X", $0) }.joined(separator: ":")
        #expect(shown.stdout.contains("SHA-256 fingerprint: \(fingerprint)"))
        #expect(try CLITests.h5replay(["ca", "export", "--pem", "ca.pem"], in: dir).status == 0)
        let pem = try String(contentsOf: dir.appendingPathComponent("ca.pem"), encoding: .utf8)
        #expect(pem.hasPrefix("-----BEGIN CERTIFICATE-----") && !pem.contains("PRIVATE"))
    }

    /// Starts `serve --tls`; returns the process, its port and its output, with standard
    /// error kept for the fault lines.
    static func serveTLS(_ arguments: [String], in dir: URL) throws -> (Process, Int, Pipe, URL, startup: String) {
        let errors = dir.appendingPathComponent("serve-\(UUID().uuidString).err")
        let (process, out, _, text) = try RecordProxyTests.start(CLITests.binary, ["serve", "--port", "0", "--tls"] + arguments, in: dir, until: "open http://", stderr: errors)
        let port = text.split(separator: "\n").first { $0.hasPrefix("serving") }
            .flatMap { $0.split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") } }
            .flatMap { Int($0.split(separator: ":").last ?? "") }
        return (process, try #require(port, "serve printed: \(text)"), out, errors, text)
    }

    static func curl(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ServeTests.which("curl")!)
        process.arguments = ["-sS", "--max-time", "20"] + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    @Test("curl through serve --tls as a CONNECT proxy and as an SNI origin: answers as recorded, a stripped body is BODY_LOST, faults are said",
          .enabled(if: ServeTests.which("curl") != nil, "curl is not installed"))
    func curlOverTLS() throws {
        let dir = try CLITests.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (server, port, out, errors, _) = try Self.serveTLS(["Recordings/xhr-json-post.har", "--db", "serve.sqlite"], in: dir)
        let ca = dir.appendingPathComponent("h5replay-ca.pem").path
        let proxy = ["--cacert", ca, "-x", "http://127.0.0.1:\(port)"]

        let page = try Self.curl(proxy + ["-o", "/dev/null", "-w", "%{http_code} %{ssl_verify_result}", "https://m.example.com/cart"])
        #expect(page.status == 0 && page.output == "200 0", "\(page.output)")
        // Straight to the port, the recorded host resolved to it (SNI names it).
        let script = try Self.curl(["--cacert", ca, "--resolve", "m.example.com:\(port):127.0.0.1", "-o", "/dev/null", "-w", "%{http_code}", "https://m.example.com:\(port)/static/cart.js"])
        #expect(script.status == 0 && script.output == "200", "\(script.output)")
        // A client that offers h2 over TLS gets it, straight and through CONNECT.
        for via in [["--resolve", "m.example.com:\(port):127.0.0.1", "https://m.example.com:\(port)/static/cart.js"], proxy + ["https://m.example.com/cart"]] {
            let h2 = try Self.curl(["--http2", "--cacert", ca, "-o", "/dev/null", "-w", "%{http_code} %{http_version}"] + via)
            #expect(h2.status == 0 && h2.output == "200 2", "\(via): \(h2.output)")
        }
        // The recorded POST carried a JSON order; this one carries nothing.
        let order = try Self.curl(proxy + ["-X", "POST", "-H", "X-Requested-With: XMLHttpRequest", "https://m.example.com/api/order"])
        #expect(order.status == 0 && order.output.contains("A-1001"), "\(order.output)")

        // A client that does not trust the CA refuses; one speaking HTTP/2 without TLS is turned away.
        let untrusted = try Self.curl(["-x", "http://127.0.0.1:\(port)", "https://m.example.com/cart"])
        #expect(untrusted.status == 60, "\(untrusted.output)")
        let h2 = try Self.curl(["--http2-prior-knowledge", "http://127.0.0.1:\(port)/cart"])
        #expect(h2.status != 0)

        let log = ServeTests.stop(server, out)
        #expect(server.terminationStatus == 0, "\(log)")
        let faults = try String(contentsOf: errors, encoding: .utf8)
        #expect(faults.contains("TLS handshake failed") || faults.contains("does not trust the h5replay CA"), "\(faults)")
        #expect(faults.contains("HTTP/2"), "\(faults)")

        let findings = try ServeTests.observedFindings(dir.appendingPathComponent("serve.sqlite"))
        #expect(findings.filter { $0.hasPrefix("BODY_") } == ["BODY_LOST #2"], "\(findings)\n\(log)")
        #expect(!findings.contains { $0.hasPrefix("REQUEST_STALLED") }, "\(findings)")
        let queue = try DatabaseQueue(path: dir.appendingPathComponent("serve.sqlite").path)
        let targets = try queue.read { db in try String.fetchAll(db, sql: "SELECT method || ' ' || target FROM arrival ORDER BY position") }
        #expect(targets == ["GET https://m.example.com/cart", "GET https://m.example.com/static/cart.js", "GET https://m.example.com/static/cart.js",
                            "GET https://m.example.com/cart", "POST https://m.example.com/api/order"])
    }

    @Test("serve killed mid-session keeps what reached it: the next serve stores those arrivals as the observed run",
          .enabled(if: ServeTests.which("curl") != nil, "curl is not installed"))
    func killedSession() throws {
        let dir = try CLITests.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (server, port, out, _, _) = try Self.serveTLS(["Recordings/xhr-json-post.har", "--db", "serve.sqlite", "--label", "device"], in: dir)
        let ca = dir.appendingPathComponent("h5replay-ca.pem").path
        #expect(try Self.curl(["--cacert", ca, "-x", "http://127.0.0.1:\(port)", "-o", "/dev/null", "https://m.example.com/cart"]).status == 0)
        #expect(try Self.curl(["--cacert", ca, "-x", "http://127.0.0.1:\(port)", "-o", "/dev/null", "-X", "POST", "https://m.example.com/api/order"]).status == 0)
        // Each arrival is committed as it comes; give the writer a moment, then kill.
        let db = dir.appendingPathComponent("serve.sqlite").path
        var stored = 0
        for _ in 0..<50 where stored < 2 {
            usleep(100_000)
            stored = try DatabaseQueue(path: db).read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM pending_arrival") ?? 0 }
        }
        #expect(stored == 2)
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
        _ = out.fileHandleForReading.readDataToEndOfFile()

        let (again, _, againOut, _, startup) = try Self.serveTLS(["Recordings/xhr-json-post.har", "--db", "serve.sqlite"], in: dir)
        let log = startup + ServeTests.stop(again, againOut)
        #expect(log.contains("was cut off"), "\(log)")
        let queue = try DatabaseQueue(path: db)
        let runs = try queue.read { db in try Row.fetchAll(db, sql: "SELECT r.label, COUNT(a.id) AS n FROM run r JOIN arrival a ON a.run_id = r.id GROUP BY r.id") }
        #expect(runs.map { "\(($0["label"] as String?) ?? "-") \($0["n"] as Int)" } == ["device 2"])
        #expect(try ServeTests.observedFindings(URL(fileURLWithPath: db)).contains("BODY_LOST #2"))
        #expect(try queue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM serve_session") } == 0)
    }

    /// An NSS database (what Chromium on Linux reads, under $HOME/.pki/nssdb) that trusts
    /// the CA, made the way `h5replay ca show` tells a user to.
    static func trustingHome(_ dir: URL, ca: String) throws -> URL {
        let home = dir.appendingPathComponent("home")
        let nss = home.appendingPathComponent(".pki/nssdb")
        try FileManager.default.createDirectory(at: nss, withIntermediateDirectories: true)
        #expect(try RobustnessTests.run("/usr/bin/certutil", ["-d", "sql:\(nss.path)", "-N", "--empty-password"]) == 0)
        #expect(try RobustnessTests.run("/usr/bin/certutil", ["-d", "sql:\(nss.path)", "-A", "-t", "C,,", "-n", "h5replay", "-i", ca]) == 0)
        return home
    }

    @Test("headless Chromium trusting the CA loads pages a real engine recorded through serve --tls, as an origin and through CONNECT: no body, redirect or missing-request finding",
          .enabled(if: ServeTests.which("chromium") != nil && FileManager.default.isExecutableFile(atPath: "/usr/bin/certutil"), "chromium or certutil (libnss3-tools) is not installed; Tools/test installs both"),
          .serialized, arguments: [("browser-xhr-fetch", false), ("browser-form-redirect", false), ("browser-xhr-fetch", true), ("browser-form-redirect", true)])
    func chromiumOverTLS(recording: String, throughProxy: Bool) throws {
        let dir = try CLITests.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try CLITests.h5replay(["ca", "init"], in: dir)
        let home = try Self.trustingHome(dir, ca: dir.appendingPathComponent("h5replay-ca.pem").path)
        let (server, port, out, errors, _) = try Self.serveTLS(["Recordings/\(recording).pcap", "--db", "serve.sqlite"], in: dir)
        let browser = Process()
        browser.executableURL = URL(fileURLWithPath: ServeTests.which("chromium")!)
        var arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                         "--user-data-dir=\(dir.appendingPathComponent("profile").path)", "--virtual-time-budget=5000", "--dump-dom"]
        // Through the proxy, a name no recording holds: the tunnel serves it as this origin.
        arguments += throughProxy ? ["--proxy-server=http://127.0.0.1:\(port)", "https://h5replay.test/"] : ["https://127.0.0.1:\(port)/"]
        browser.arguments = arguments
        browser.environment = ProcessInfo.processInfo.environment.merging(["HOME": home.path]) { $1 }
        let dom = Pipe()
        browser.standardOutput = dom
        browser.standardError = FileHandle.nullDevice
        try browser.run()
        let page = String(decoding: dom.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        browser.waitUntilExit()
        let log = ServeTests.stop(server, out)
        let faults = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        #expect(page.contains("<title>done</title>"), "\(page.prefix(400))\n\(log)\n\(faults)")
        let findings = try ServeTests.observedFindings(dir.appendingPathComponent("serve.sqlite"))
        #expect(!findings.contains { $0.hasPrefix("BODY_") || $0.hasPrefix("REDIRECT_") || $0.hasPrefix("REQUEST_STALLED") }, "\(findings)\n\(log)")
        let queue = try DatabaseQueue(path: dir.appendingPathComponent("serve.sqlite").path)
        let targets = try queue.read { db in try String.fetchAll(db, sql: "SELECT target FROM arrival") }
        #expect(!targets.isEmpty)
        // Through the tunnel, each arrival is stored as the HTTPS URL the page asked for.
        #expect(targets.contains(throughProxy ? "https://h5replay.test/" : "/"), "\(targets)")
    }
}
