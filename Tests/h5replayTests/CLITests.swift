import Foundation
import ReportStore
import Testing

/// Runs the built `h5replay` binary as a user would, and checks output and exit codes.
@Suite("h5replay command line, end to end")
struct CLITests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["H5REPLAY_BIN"] { return URL(fileURLWithPath: path) }
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("h5replay")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        return root.appendingPathComponent(".build/debug/h5replay")
    }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// A scratch directory holding a copy of the bundled Recordings/.
    static func workspace() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: root.appendingPathComponent("Recordings"), to: dir.appendingPathComponent("Recordings"))
        return dir
    }

    /// A folder `name` in the workspace `dir` holding copies of these bundled recordings.
    static func folder(_ name: String, in dir: URL, copying files: [String]) throws -> URL {
        let folder = dir.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for file in files {
            try FileManager.default.copyItem(at: dir.appendingPathComponent("Recordings/\(file)"), to: folder.appendingPathComponent(file))
        }
        return folder
    }

    @discardableResult
    static func h5replay(_ arguments: [String], in dir: URL, environment extra: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = dir
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        environment["COLUMNS"] = nil  // the report's own width, whatever terminal runs the tests
        environment.merge(extra) { $1 }
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test("`replay` with no arguments replays Recordings/ and prints the side-by-side matrix")
    func mainJob() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try Self.h5replay(["replay"], in: dir)
        #expect(result.status == 0, "\(result.stderr)")
        for name in ["login-redirect", "xhr-json-post", "fetch-blob-upload", "script-cookie-api", "native-login-first-request"] {
            #expect(result.stdout.contains("\n\(name) "), "matrix row \(name)")
        }
        #expect(result.stdout.contains("plain") && result.stdout.contains("urlprotocol-naive") && result.stdout.contains("schemehandler-naive"))
        let mode = try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("h5replay.sqlite").path)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        // The report contract, read back from the database.
        let report = try Self.h5replay(["report", "--run", "latest", "--format", "json"], in: dir)
        #expect(report.status == 0)
        let object = try Self.json(report.stdout)
        // Written to a file, the same bytes, put in place whole over an older report; a file
        // that cannot be written is named, and nothing is left half-written.
        try Data("an older report".utf8).write(to: dir.appendingPathComponent("report.json"))
        #expect(try Self.h5replay(["report", "--format", "json", "-o", "report.json"], in: dir).status == 0)
        #expect(try String(contentsOf: dir.appendingPathComponent("report.json"), encoding: .utf8) == report.stdout)
        let unwritable = try Self.h5replay(["report", "--format", "json", "-o", "missing/report.json"], in: dir)
        #expect(unwritable.status == 2 && unwritable.stderr.contains("missing/report.json: cannot write the report"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).allSatisfy { !$0.hasSuffix(".partial") })
        let findings = try #require(object["findings"] as? [[String: Any]])
        let basePresets: Set<String> = ["plain", "urlprotocol-naive", "urlprotocol-forwarded", "schemehandler-naive"]
        let xhr = findings.filter { $0["recording"] as? String == "xhr-json-post" && basePresets.contains($0["preset"] as? String ?? "") }
        #expect(Set(xhr.map { "\($0["preset"]!):\($0["code"]!)" }) == ["urlprotocol-naive:BODY_LOST", "urlprotocol-forwarded:BODY_LOST"])
        // Without interception the four basic flows are clean; the native login's first
        // request misses its cookie (N3), and so does the page opened right after the app's
        // native login call (NC1, J1); Recordings/expected pins every finding exactly.
        let plain = findings.filter { $0["preset"] as? String == "plain" }
        let basic: Set<String> = ["login-redirect", "xhr-json-post", "fetch-blob-upload", "script-cookie-api"]
        #expect(!plain.contains { basic.contains($0["recording"] as? String ?? "") })
        let firstRequest = plain.filter { $0["recording"] as? String == "native-login-first-request" }
        #expect(firstRequest.map { "\($0["sequence"]!):\($0["code"]!)" } == ["0:COOKIE_MISSING"])
        #expect((firstRequest.first?["rules"] as? [String])?.contains("N3") == true)
        let nativeCall = plain.filter { $0["recording"] as? String == "native-api-login" }
        #expect(nativeCall.map { "\($0["sequence"]!):\($0["code"]!)" } == ["1:COOKIE_MISSING"])
        let nativeCallRules = Set(nativeCall.first?["rules"] as? [String] ?? [])
        #expect(nativeCallRules.isSuperset(of: ["NC1", "J1"]))
        #expect(!report.stdout.contains("\"B\""))  // the script-set cookie's value stays redacted

        // A second run reuses the unchanged recordings.
        let again = try Self.h5replay(["replay", "--quiet"], in: dir)
        #expect(again.status == 0)
        #expect(try Self.json(try Self.h5replay(["report", "--format", "json"], in: dir).stdout)["run"].flatMap { ($0 as? [String: Any])?["id"] as? Int } == 2)
    }

    @Test("`replay FILE --preset --ios`: the XHR POST is lost through a scheme handler on iOS 11.0 only")
    func profileChoice() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        for (ios, expected) in [("11.0", ["schemehandler-naive:BODY_LOST"]), ("17", [])] {
            let result = try Self.h5replay(["replay", "Recordings/xhr-json-post.har", "--preset", "plain,schemehandler-naive", "--ios", ios, "--label", "ios\(ios)"], in: dir)
            #expect(result.status == 0, "\(result.stderr)")
            let object = try Self.json(try Self.h5replay(["report", "--format", "json"], in: dir).stdout)
            let findings = try #require(object["findings"] as? [[String: Any]])
            #expect(findings.map { "\($0["preset"]!):\($0["code"]!)" } == expected, "iOS \(ios)")
            #expect((object["run"] as? [String: Any])?["label"] as? String == "ios\(ios)")
        }
    }

    @Test("a recording with no exchange stays in the run, marked empty in every format, and one the web view sent nothing of reads n/a; `--run N` of no run names the runs there are; `report --recording` gives one recording's row and findings")
    func emptyRecordingsAndRunChoice() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(#"{"log": {"version": "1.2", "creator": {"name": "x", "version": "1"}, "entries": []}}"#.utf8).write(to: dir.appendingPathComponent("nothing.har"))
        // Only the app's native code (NC1): nothing the web view sent to compare.
        let native = #"{"startedDateTime": "2024-01-02T03:04:05.000Z", "time": 20, "request": {"method": "GET", "url": "https://api.shop.example/v1/me", "headers": [{"name": "User-Agent", "value": "Shop/2.1 CFNetwork/1402.0.8 Darwin/22.2.0"}, {"name": "Accept-Encoding", "value": "gzip"}]}, "response": {"status": 200, "headers": [], "content": {"size": 0}}}"#
        try Data(#"{"log": {"version": "1.2", "creator": {"name": "x", "version": "1"}, "entries": [\#(native)]}}"#.utf8).write(to: dir.appendingPathComponent("native.har"))
        let replay = try Self.h5replay(["replay", "nothing.har", "native.har", "Recordings/login-redirect.har", "--preset", "plain,urlprotocol-naive", "--label", "first"], in: dir)
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(replay.stdout.contains("3 recording(s)") && replay.stdout.contains("nothing         empty      empty"), "\(replay.stdout)")
        #expect(replay.stdout.contains("native          n/a        n/a"), "\(replay.stdout)")
        let object = try Self.json(try Self.h5replay(["report", "--format", "json"], in: dir).stdout)
        let matrix = try #require(object["matrix"] as? [[String: Any]])
        #expect(matrix.filter { $0["recording"] as? String == "nothing" }.map { $0["empty"] as? Bool } == [true, true])
        #expect(matrix.filter { $0["recording"] as? String == "login-redirect" }.allSatisfy { $0["empty"] as? Bool == false && $0["compared"] as? Bool == true })
        #expect(matrix.filter { $0["recording"] as? String == "native" }.map { $0["compared"] as? Bool } == [false, false])
        let junit = try Self.h5replay(["report", "--format", "junit"], in: dir).stdout
        #expect(junit.components(separatedBy: "<skipped message=\"empty recording").count == 3, "\(junit)")
        let markdown = try Self.h5replay(["report", "--format", "markdown"], in: dir).stdout
        #expect(markdown.contains("| nothing | ➖ empty | ➖ empty |") && markdown.contains("| native | ➖ n/a | ➖ n/a |"), "\(markdown)")
        // A run that is not there: exit 2, naming the runs that are.
        let missing = try Self.h5replay(["report", "--run", "999"], in: dir)
        #expect(missing.status == 2 && missing.stderr.contains("has no run 999; its runs, newest first: 1 (first), "), "\(missing.stderr)")
        #expect(try Self.h5replay(["gate", "--run", "999"], in: dir).stderr.contains("its runs, newest first: 1 (first)"))
        // One recording: its row and its findings only; a name the run lacks is exit 2 with a guess.
        let one = try Self.json(try Self.h5replay(["report", "--recording", "login-redirect", "--format", "json"], in: dir).stdout)
        #expect((one["matrix"] as? [[String: Any]])?.compactMap { $0["recording"] as? String } == ["login-redirect", "login-redirect"])
        #expect((one["findings"] as? [[String: Any]])?.isEmpty == false)
        let typo = try Self.h5replay(["report", "--recording", "login-redirec"], in: dir)
        #expect(typo.status == 2 && typo.stderr.contains("did you mean login-redirect?"), "\(typo.stderr)")
    }

    @Test("a cell whose preset the recording never exercised (no exchange through its interceptor or app shell, no rule of its mitigations) reads n/a, not ok; the baseline's cells stay ok")
    func idleCells() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        // send-beacon has no XHR or fetch: flutter_inappwebview's ajax interception never acts.
        let replay = try Self.h5replay(["replay", "Recordings/send-beacon.har", "--preset", "plain,flutter-inappwebview-intercept,urlprotocol-naive"], in: dir)
        #expect(replay.status == 0, "\(replay.stderr)")
        let object = try Self.json(try Self.h5replay(["report", "--format", "json"], in: dir).stdout)
        let matrix = try #require(object["matrix"] as? [[String: Any]])
        let compared = Dictionary(uniqueKeysWithValues: matrix.compactMap { c in (c["preset"] as? String).map { ($0, c["compared"] as? Bool) } })
        #expect(compared == ["plain": true, "flutter-inappwebview-intercept": false, "urlprotocol-naive": true], "\(matrix)")
        let row = replay.stdout.split(separator: "\n").first { $0.hasPrefix("send-beacon") }.map(String.init) ?? ""
        #expect(row.split(separator: " ").map(String.init) == ["send-beacon", "ok", "n/a", "1E", "0W", "0I"], "\(replay.stdout)")
        let markdown = try Self.h5replay(["report", "--format", "markdown"], in: dir).stdout
        #expect(markdown.contains("| send-beacon | ✅ ok | ➖ n/a |"), "\(markdown)")
    }

    @Test("`show --headers` prints each exchange's recorded headers, secrets redacted, and what a jar does with each Set-Cookie: stored, or refused and why")
    func showHeaders() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let entry = #"{"startedDateTime": "2024-01-02T03:04:05.000Z", "time": 20, "request": {"method": "GET", "url": "https://shop.example/", "headers": [{"name": "Accept", "value": "text/html"}, {"name": "Cookie", "value": "sid=s3cret"}, {"name": "Authorization", "value": "Bearer t0ken"}]}, "response": {"status": 200, "headers": [{"name": "Set-Cookie", "value": "a=1; Path=/"}, {"name": "Set-Cookie", "value": "b=2; Domain=other.example"}], "content": {"size": 0}}}"#
        try Data(#"{"log": {"version": "1.2", "creator": {"name": "x", "version": "1"}, "entries": [\#(entry)]}}"#.utf8).write(to: dir.appendingPathComponent("h.har"))
        #expect(try Self.h5replay(["import", "h.har"], in: dir).status == 0)
        let table = try Self.h5replay(["show", "h", "--headers"], in: dir).stdout
        #expect(table.contains("> Cookie: sid=<redacted>") && table.contains("> Authorization: <redacted, 12 bytes>") && !table.contains("s3cret") && !table.contains("t0ken"), "\(table)")
        #expect(table.contains("< Set-Cookie: a=<redacted>; Path=/  [stored]"), "\(table)")
        #expect(table.contains("< Set-Cookie: b=<redacted>; Domain=other.example  [refused: "), "\(table)")
        let object = try Self.json(try Self.h5replay(["show", "h", "--headers", "--format", "json"], in: dir).stdout)
        let headers = try #require(((object["exchanges"] as? [[String: Any]])?.first)?["headers"] as? [String: Any])
        #expect((headers["setCookies"] as? [[String: Any]])?.map { $0["verdict"] as? String } == ["stored", "refused"])
    }

    @Test("`replay FILE` of a capture with no page's request says so on stderr, naming the User-Agent, instead of a silent clean matrix")
    func nativeOnlyCapture() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        // A HAR of a tool's own request (as Charles exports one), and no page's.
        let har = #"{"log":{"version":"1.2","creator":{"name":"t","version":"1"},"entries":[{"startedDateTime":"2026-11-01T10:00:00.000Z","time":10,"#
            + #""request":{"method":"GET","url":"https://api.bank.example/v1/messages","httpVersion":"HTTP/1.1","headers":[{"name":"User-Agent","value":"curl/8.4.0"},{"name":"Accept","value":"*/*"}],"queryString":[],"cookies":[],"headersSize":-1,"bodySize":0},"#
            + #""response":{"status":200,"statusText":"OK","httpVersion":"HTTP/1.1","headers":[],"cookies":[],"content":{"size":2,"mimeType":"text/plain","text":"ok"},"redirectURL":"","headersSize":-1,"bodySize":2},"cache":{},"timings":{"send":0,"wait":10,"receive":0}}]}}"#
        try Data(har.utf8).write(to: dir.appendingPathComponent("curl.har"))
        let result = try Self.h5replay(["replay", "curl.har", "--preset", "plain,urlprotocol-naive"], in: dir)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("curl: warning: none of the 1 request(s) came from a page (User-Agent `curl/8.4.0`)"), "\(result.stderr)")
        #expect(!result.stdout.contains("warning:"))
    }

    @Test("an odd HAR entry is skipped with a warning naming its path; a file that is not HAR exits 2 and leaves the database as it was")
    func malformedImport() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.h5replay(["import", "Recordings/xhr-json-post.har"], in: dir)
        let odd = #"{"log": {"entries": [{"startedDateTime": "2024-01-02T03:04:05Z", "request": {"method": "GET", "url": "https://a.example/", "headers": []}, "response": {"status": 200, "headers": []}}, {"startedDateTime": "2024-01-02T03:04:06Z", "request": {"method": "GET", "url": "https://a.example/2", "headers": {"oops": 1}}, "response": {"status": 200, "headers": []}}]}}"#
        try Data(odd.utf8).write(to: dir.appendingPathComponent("odd.har"))
        let imported = try Self.h5replay(["import", "odd.har"], in: dir)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect((imported.stdout + imported.stderr).contains("log.entries[1].request.headers: expected an array"))

        try Data(#"{"log": {"entries": 7}}"#.utf8).write(to: dir.appendingPathComponent("bad.har"))
        let refused = try Self.h5replay(["import", "bad.har"], in: dir)
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("bad.har: log.entries: expected an array"))
        let store = try ReportStore.open(path: dir.appendingPathComponent("h5replay.sqlite").path)
        #expect(try store.recordingNames().sorted() == ["odd", "xhr-json-post"])
        #expect(try store.recording(named: "odd")?.exchanges.count == 1)
    }

    @Test("export --har writes a HAR that imports back to the same findings")
    func exportRoundTrip() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try Self.h5replay(["import", "Recordings/login-redirect.har"], in: dir).status == 0)
        let export = try Self.h5replay(["export", "login-redirect", "--har", "-o", "out.har", "--include-secrets"], in: dir)
        #expect(export.status == 0, "\(export.stderr)")
        #expect(try Self.h5replay(["import", "out.har", "--name", "again"], in: dir).status == 0)
        var codes: [[String]] = []
        for name in ["login-redirect", "again"] {
            #expect(try Self.h5replay(["replay", name, "--quiet"], in: dir).status == 0)
            let findings = try #require(try Self.json(try Self.h5replay(["report", "--format", "json"], in: dir).stdout)["findings"] as? [[String: Any]])
            codes.append(findings.map { "\($0["preset"]!):\($0["sequence"]!):\($0["code"]!)" })
        }
        #expect(codes[0] == codes[1])
        #expect(codes[0].contains("urlprotocol-naive:1:REDIRECT_HIDDEN"))
    }

    @Test("export sanitizes by default: planted cookie, Authorization and token values never reach the file; --include-secrets keeps them")
    func exportSanitized() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let planted = ["cookie-Zq81", "Bearer tok-Xv27", "query-Kp55", "setcookie-Wm90", "custom-Hy64"]
        let har = #"{"log":{"version":"1.2","creator":{"name":"t","version":"1"},"entries":[{"startedDateTime":"2026-01-01T00:00:00Z","time":10,"request":{"method":"GET","url":"https://a.example/api?token=query-Kp55&page=2","httpVersion":"HTTP/1.1","headers":[{"name":"Cookie","value":"sid=cookie-Zq81"},{"name":"Authorization","value":"Bearer tok-Xv27"},{"name":"X-Ours","value":"custom-Hy64"}],"queryString":[],"cookies":[],"headersSize":-1,"bodySize":0},"response":{"status":200,"statusText":"OK","httpVersion":"HTTP/1.1","headers":[{"name":"Set-Cookie","value":"sid=setcookie-Wm90; Path=/"}],"cookies":[],"content":{"size":2,"mimeType":"text/plain","text":"ok"},"redirectURL":"","headersSize":-1,"bodySize":2},"cache":{},"timings":{"send":0,"wait":10,"receive":0}}]}}"#
        try Data(har.utf8).write(to: dir.appendingPathComponent("secret.har"))
        #expect(try Self.h5replay(["import", "secret.har"], in: dir).status == 0)
        #expect(try Self.h5replay(["export", "secret", "--har", "-o", "shared.har", "--secret-header", "X-Ours"], in: dir).status == 0)
        let shared = try String(contentsOf: dir.appendingPathComponent("shared.har"), encoding: .utf8)
        for secret in planted { #expect(!shared.contains(secret), "\(secret) leaked into the sanitized export") }
        #expect(shared.contains("page=2"))  // what is not secret stays

        // Secrets in bodies: a login form and a JSON body, each still parseable.
        let bodies = #"{"log":{"version":"1.2","creator":{"name":"t","version":"1"},"entries":["#
            + [("application/x-www-form-urlencoded", "user=ann&password=pw-Tr61&csrf_token=csrf-Qe48"), ("application/json", #"{"user":"ann","auth":{"otp":"otp-Lk39"}}"#)].enumerated().map { k, body in
                #"{"startedDateTime":"2026-01-01T00:00:0\#(k)Z","time":10,"request":{"method":"POST","url":"https://a.example/login","httpVersion":"HTTP/1.1","headers":[{"name":"Content-Type","value":"\#(body.0)"}],"queryString":[],"cookies":[],"headersSize":-1,"bodySize":\#(body.1.utf8.count),"postData":{"mimeType":"\#(body.0)","text":\#(String(decoding: try! JSONSerialization.data(withJSONObject: body.1, options: .fragmentsAllowed), as: UTF8.self))}},"response":{"status":200,"statusText":"OK","httpVersion":"HTTP/1.1","headers":[],"cookies":[],"content":{"size":0,"mimeType":"text/plain"},"redirectURL":"","headersSize":-1,"bodySize":0},"cache":{},"timings":{"send":0,"wait":10,"receive":0}}"#
            }.joined(separator: ",") + "]}}"
        try Data(bodies.utf8).write(to: dir.appendingPathComponent("login.har"))
        #expect(try Self.h5replay(["import", "login.har"], in: dir).status == 0)
        #expect(try Self.h5replay(["export", "login", "--har", "-o", "login-shared.har"], in: dir).status == 0)
        let login = try String(contentsOf: dir.appendingPathComponent("login-shared.har"), encoding: .utf8)
        for secret in ["pw-Tr61", "csrf-Qe48", "otp-Lk39"] { #expect(!login.contains(secret), "\(secret) leaked from a body into the sanitized export") }
        let entries = try #require(((try JSONSerialization.jsonObject(with: Data(login.utf8)) as? [String: Any])?["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        let texts = entries.compactMap { (($0["request"] as? [String: Any])?["postData"] as? [String: Any])?["text"] as? String }
        #expect(texts.count == 2 && texts[0].hasPrefix("user=ann&password=redacted-7-") && texts[0].contains("&csrf_token=redacted-9-"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(texts[1].utf8)) as? [String: Any])
        #expect(json["user"] as? String == "ann" && ((json["auth"] as? [String: Any])?["otp"] as? String)?.hasPrefix("redacted-8-") == true, "the JSON parses, keeps its keys and what is not secret")
        #expect(try Self.h5replay(["export", "secret", "--har", "-o", "exact.har", "--include-secrets"], in: dir).status == 0)
        let exact = try String(contentsOf: dir.appendingPathComponent("exact.har"), encoding: .utf8)
        for secret in planted { #expect(exact.contains(secret), "\(secret) missing from the exact export") }
    }

    @Test("usage and input errors exit 2 with a message", arguments: [
        (["replay", "--ios", "9"], "--ios 9"),
        (["replay", "--preset", "nope"], "unknown preset nope"),
        (["replay", "--preset", "urlprotcol-naive"], "unknown preset urlprotcol-naive (did you mean urlprotocol-naive?)"),
        (["replay", "--preset", "plain,capacitor", "--baseline-preset", "capacitr"], "--baseline-preset capacitr is not among the run's presets (plain, capacitor); did you mean capacitor?"),
        (["replay", "no-such-recording"], "no-such-recording"),
        (["report", "--db", "missing.sqlite"], "missing.sqlite"),
        (["export", "x", "-o", "y.har"], "--har"),
        (["import", "Recordings/README.md"], "Recordings/README.md"),
        (["import", "Recordings/expected"], "Recordings/expected: the folder holds no recording"),
    ])
    func usageErrors(_ arguments: [String], _ mentioned: String) throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try Self.h5replay(arguments, in: dir)
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(mentioned), "\(arguments): \(result.stderr)")
    }

    @Test("a folder given as recordings stands for the HAR and capture files in it, in name order")
    func folderOfRecordings() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try Self.folder("flows", in: dir, copying: ["script-cookie-api.har", "login-redirect.har", "browser-xhr-fetch.pcap", "README.md"])
        let imported = try Self.h5replay(["import", "flows"], in: dir)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.split(separator: "\n").filter { $0.hasPrefix("imported ") }.map { $0.split(separator: " ")[1] } == ["browser-xhr-fetch:", "login-redirect:", "script-cookie-api:"], "\(imported.stdout)")
        let replayed = try Self.h5replay(["replay", "flows", "--preset", "plain", "--quiet"], in: dir)
        #expect(replayed.status == 0, "\(replayed.stderr)")
        let report = try Self.json(try Self.h5replay(["report", "--format", "json"], in: dir).stdout)
        let matrix = try #require(report["matrix"] as? [[String: Any]])
        #expect(Set(matrix.compactMap { $0["recording"] as? String }) == ["browser-xhr-fetch", "login-redirect", "script-cookie-api"], "\(matrix)")
    }

    @Test("--keep-going: a folder with a file that is not HAR and a cut capture imports and replays the rest, naming each skipped file; without it the first stops the command")
    func keepGoing() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let folder = try Self.folder("exports", in: dir, copying: ["login-redirect.har", "browser-xhr-fetch.pcap"])
        try Data(#"{"log": {"entries": 7}}"#.utf8).write(to: folder.appendingPathComponent("a-bad.har"))
        try Data([0xd4, 0xc3, 0xb2, 0xa1, 2, 0]).write(to: folder.appendingPathComponent("cut.pcap"))

        let stopped = try Self.h5replay(["replay", "exports", "--preset", "plain", "--quiet"], in: dir)
        #expect(stopped.status == 2)
        #expect(stopped.stderr.contains("a-bad.har: log.entries: expected an array"), "\(stopped.stderr)")

        let replayed = try Self.h5replay(["replay", "exports", "--preset", "plain", "--quiet", "--keep-going", "--db", "kept.sqlite"], in: dir)
        #expect(replayed.status == 0, "\(replayed.stderr)")
        let skipped = replayed.stderr.split(separator: "\n").filter { $0.hasPrefix("h5replay: skipped: ") }
        #expect(skipped.count == 2, "\(replayed.stderr)")
        #expect(skipped.contains { $0.contains("exports/a-bad.har: log.entries: expected an array") })
        #expect(skipped.contains { $0.contains("exports/cut.pcap") })
        #expect(replayed.stdout.contains("skipped 2 file(s) that could not be read"))
        let report = try Self.json(try Self.h5replay(["report", "--format", "json", "--db", "kept.sqlite"], in: dir).stdout)
        let matrix = try #require(report["matrix"] as? [[String: Any]])
        #expect(Set(matrix.compactMap { $0["recording"] as? String }) == ["browser-xhr-fetch", "login-redirect"], "\(matrix)")

        let imported = try Self.h5replay(["import", "exports", "--keep-going", "--db", "imported.sqlite"], in: dir)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.split(separator: "\n").filter { $0.hasPrefix("h5replay: skipped: ") }.count == 2, "\(imported.stderr)")
        let store = try ReportStore.open(path: dir.appendingPathComponent("imported.sqlite").path)
        #expect(try store.recordingNames().sorted() == ["browser-xhr-fetch", "login-redirect"])

        // Nothing readable at all is still an error.
        let nothing = try Self.h5replay(["replay", "exports/a-bad.har", "--keep-going", "--db", "none.sqlite"], in: dir)
        #expect(nothing.status == 2 && nothing.stderr.contains("nothing to replay"), "\(nothing.stderr)")
    }

    @Test("`show` explains where every cookie came from, with values redacted")
    func show() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try Self.h5replay(["import", "Recordings/script-cookie-api.har", "Recordings/login-redirect.har"], in: dir).status == 0)
        let result = try Self.h5replay(["show", "script-cookie-api", "--format", "json"], in: dir)
        #expect(result.status == 0, "\(result.stderr)")
        let object = try Self.json(result.stdout)
        #expect((object["recording"] as? [String: Any])?["name"] as? String == "script-cookie-api")
        let exchanges = try #require(object["exchanges"] as? [[String: Any]])
        #expect(exchanges.map { $0["sequence"] as? Int } == [0, 1, 2])
        for key in ["sequence", "method", "url", "status", "initiator", "bodyKind", "requestBodyLength", "requestBodySHA256", "responseBodyLength", "responseBodySHA256", "cookies", "inferred"] {
            #expect(exchanges[2][key] != nil, "exchange.\(key)")
        }
        let cookies = try #require(exchanges[2]["cookies"] as? [[String: Any]])
        #expect(cookies.map { "\($0["name"]!):\($0["provenance"]!):\($0["setBy"]!)" } == ["uid:server-set:0", "ab_bucket:script-set:2"])
        #expect(cookies.allSatisfy { ($0["value"] as? String)?.hasPrefix("<redacted") == true })
        let inferred = try #require(exchanges[2]["inferred"] as? [[String: Any]])
        #expect(inferred.map { "\($0["name"]!):\($0["kind"]!)" } == ["ab_bucket:script-set"])
        let shown = try Self.h5replay(["show", "script-cookie-api", "--format", "json", "--show-secrets"], in: dir)
        #expect(shown.stdout.contains("\"value\" : \"B\""))

        // The table names the redirect hop whose response set the session cookie.
        let table = try Self.h5replay(["show", "login-redirect"], in: dir)
        #expect(table.stdout.contains("cookie session: server-set by #1"))
        #expect(table.stdout.contains("hop 1 of #1"))
    }

    @Test("initial jars from cookies.txt: a token only in NativeJar misses the first plain request (N3); only in WebJar, the intercepted one")
    func initialJars() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("# Netscape HTTP Cookie File\nh5.example.com\tFALSE\t/\tTRUE\t0\ttoken\t4b1d2c\n".utf8).write(to: dir.appendingPathComponent("native.txt"))
        // Move the sidecar away so only the cookies file says where the token lived.
        try FileManager.default.removeItem(at: dir.appendingPathComponent("Recordings/native-login-first-request.scenario.json"))
        for (arguments, expected) in [([String](), [String]()), (["--native-cookies", "native.txt"], ["plain:0:COOKIE_MISSING"]), (["--web-cookies", "native.txt"], ["schemehandler-naive:0:COOKIE_MISSING", "urlprotocol-forwarded:0:COOKIE_MISSING", "urlprotocol-naive:0:COOKIE_MISSING"])] {
            let run = try Self.h5replay(["replay", "Recordings/native-login-first-request.har", "--quiet", "--preset", "plain,urlprotocol-naive,urlprotocol-forwarded,schemehandler-naive"] + arguments, in: dir)
            #expect(run.status == 0, "\(run.stderr)")
            let findings = try #require(try Self.json(try Self.h5replay(["report", "--format", "json"], in: dir).stdout)["findings"] as? [[String: Any]])
            #expect(findings.map { "\($0["preset"]!):\($0["sequence"]!):\($0["code"]!)" } == expected, "\(arguments)")
        }
        try Data("not\ta cookie line\n".utf8).write(to: dir.appendingPathComponent("bad.txt"))
        let bad = try Self.h5replay(["replay", "Recordings/xhr-json-post.har", "--native-cookies", "bad.txt"], in: dir)
        #expect(bad.status == 2 && bad.stderr.contains("bad.txt: line 1"))
    }

    @Test("a scenario file overrides the sidecar; an unknown key is an error naming the file")
    func scenarioFile() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(#"{"preexistingCookies": "both"}"#.utf8).write(to: dir.appendingPathComponent("both.json"))
        let run = try Self.h5replay(["replay", "Recordings/native-login-first-request.har", "--scenario", "both.json", "--preset", "plain"], in: dir)
        #expect(run.status == 0)
        let findings = try #require(try Self.json(try Self.h5replay(["report", "--format", "json"], in: dir).stdout)["findings"] as? [[String: Any]])
        #expect(findings.isEmpty)
        try Data(#"{"preexisting": "both"}"#.utf8).write(to: dir.appendingPathComponent("typo.json"))
        let typo = try Self.h5replay(["replay", "Recordings/xhr-json-post.har", "--scenario", "typo.json"], in: dir)
        #expect(typo.status == 2 && typo.stderr.contains("typo.json: preexisting: unknown key; known: "))
    }

    @Test("the CI gate: green against itself, red on a new body loss naming exactly it, green when its code is allowed")
    func gate() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let presets = ["--preset", "plain,urlprotocol-naive", "--quiet"]
        #expect(try Self.h5replay(["replay", "--label", "main"] + presets, in: dir).status == 0)
        #expect(try Self.h5replay(["replay", "--label", "pr"] + presets, in: dir).status == 0)
        let green = try Self.h5replay(["gate", "--baseline", "main", "--junit", "junit.xml", "--markdown", "summary.md"], in: dir)
        #expect(green.status == 0, "\(green.stdout)\(green.stderr)")
        #expect(green.stdout.contains("New (0)") && green.stdout.contains("PASSED"))
        // The JUnit file agrees with the exit code: the unchanged errors fail no test case.
        let greenJUnit = try String(contentsOf: dir.appendingPathComponent("junit.xml"), encoding: .utf8)
        #expect(greenJUnit.contains("<testsuites") && !greenJUnit.contains("<failure") && greenJUnit.contains("failures=\"0\""), "\(greenJUnit.prefix(600))")
        #expect(greenJUnit.contains("[error] BODY_LOST"), "the unchanged errors are still listed, in system-out")
        #expect(try String(contentsOf: dir.appendingPathComponent("summary.md"), encoding: .utf8).contains("**Gate passed** against run 1 (main)"))

        // A new flow whose XHR POST loses its body under NSURLProtocol.
        let har = try String(contentsOf: dir.appendingPathComponent("Recordings/xhr-json-post.har"), encoding: .utf8)
            .replacingOccurrences(of: "/api/order", with: "/api/refund")
        try Data(har.utf8).write(to: dir.appendingPathComponent("Recordings/refund.har"))
        #expect(try Self.h5replay(["replay", "--label", "pr"] + presets, in: dir).status == 0)
        let red = try Self.h5replay(["gate", "--baseline", "main", "--junit", "red.xml"], in: dir)
        #expect(red.status == 1, "\(red.stdout)\(red.stderr)")
        let redJUnit = try String(contentsOf: dir.appendingPathComponent("red.xml"), encoding: .utf8)
        #expect(redJUnit.components(separatedBy: "<failure ").count - 1 == 1 && redJUnit.contains("BODY_LOST #2 POST https://m.example.com/api/refund"), "\(redJUnit.prefix(800))")
        let failing = red.stdout.split(separator: "\n").filter { $0.contains("FAIL [") }
        #expect(failing == ["  FAIL [error] BODY_LOST urlprotocol-naive refund #2 POST https://m.example.com/api/refund"])
        #expect(red.stdout.contains("FAILED: 1 new finding(s) at error or above."))

        let allowed = try Self.h5replay(["gate", "--baseline", "main", "--allow", "BODY_LOST"], in: dir)
        #expect(allowed.status == 0, "\(allowed.stdout)")
        #expect(allowed.stdout.contains("allowed [error] BODY_LOST urlprotocol-naive refund #2"))

        let unknown = try Self.h5replay(["gate", "--baseline", "no-such-label"], in: dir)
        #expect(unknown.status == 2 && unknown.stderr.contains("no-such-label"))
    }

    @Test("`replay --shard i/n` on parallel jobs, then `merge`, gives the unsharded run")
    func shards() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        for i in 1...3 {
            #expect(try Self.h5replay(["replay", "--shard", "\(i)/3", "--db", "shard\(i).sqlite", "--quiet"], in: dir).status == 0)
        }
        let merge = try Self.h5replay(["merge", "shard1.sqlite", "shard2.sqlite", "shard3.sqlite", "-o", "all.sqlite"], in: dir)
        #expect(merge.status == 0, "\(merge.stderr)")
        #expect(try Self.h5replay(["replay", "--db", "whole.sqlite", "--quiet"], in: dir).status == 0)
        func findings(_ db: String) throws -> [String] {
            let object = try Self.json(try Self.h5replay(["report", "--db", db, "--format", "json"], in: dir).stdout)
            return try #require(object["findings"] as? [[String: Any]]).map { "\($0["recording"]!):\($0["preset"]!):\($0["sequence"]!):\($0["code"]!)" }.sorted()
        }
        let whole = try findings("whole.sqlite")
        #expect(!whole.isEmpty)
        #expect(try findings("all.sqlite") == whole)
        // Each shard replayed a disjoint slice.
        var seen = Set<String>()
        for i in 1...3 {
            let names = Set(try findings("shard\(i).sqlite").map { String($0.split(separator: ":")[0]) })
            #expect(seen.isDisjoint(with: names))
            seen.formUnion(names)
        }
        #expect(try Self.h5replay(["replay", "--shard", "4/3"], in: dir).status == 2)
    }

    @Test("the terminal matrix fits COLUMNS: the presets that do not fit go to another block, each line within the width")
    func matrixFitsColumns() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try Self.h5replay(["replay", "Recordings/capacitor-uploads.har", "Recordings/sso-form-post.har"], in: dir, environment: ["COLUMNS": "80"])
        #expect(run.status == 0, "\(run.stderr)")
        let matrix = run.stdout.components(separatedBy: "\n").drop { !$0.hasPrefix("recording") }.prefix { !$0.hasPrefix("(E errors") }
        #expect(matrix.filter { $0.hasPrefix("recording") }.count > 1, "\(run.stdout)")
        #expect(matrix.allSatisfy { $0.count <= 80 }, "\(matrix.filter { $0.count > 80 })")
        let wide = try Self.h5replay(["report"], in: dir, environment: ["COLUMNS": "400"])
        #expect(wide.stdout.components(separatedBy: "\n").filter { $0.hasPrefix("recording") }.count == 1)
    }

    @Test("report formats: markdown, junit and html write files")
    func reportFormats() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try Self.h5replay(["replay", "--quiet"], in: dir).status == 0)
        for (format, marker) in [("markdown", "| recording |"), ("junit", "<testsuites"), ("html", "<!DOCTYPE html>")] {
            let result = try Self.h5replay(["report", "--format", format, "-o", "out.\(format)"], in: dir)
            #expect(result.status == 0, "\(format): \(result.stderr)")
            #expect(try String(contentsOf: dir.appendingPathComponent("out.\(format)"), encoding: .utf8).contains(marker), "\(format)")
        }
    }

    @Test("`presets --rules` lists every preset and every rule with its confidence")
    func presets() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try Self.h5replay(["presets", "--rules", "--json"], in: dir)
        #expect(result.status == 0)
        let object = try Self.json(result.stdout)
        let presets = try #require(object["presets"] as? [[String: Any]])
        #expect(presets.map { $0["name"] as? String } == ["plain", "plain-cookie-sync", "urlprotocol-naive", "urlprotocol-forwarded", "kkjsbridge-protocolhook", "kkjsbridge-ajaxhook", "netease-schemehandler", "yanxuan-xcache", "postscheme-header", "schemehandler-naive",
            "capacitor", "capacitor-http", "capacitor-http-cookies", "cordova-schemehandler", "ionic-webview", "flutter-inappwebview-intercept", "react-native-webview-shared-cookies", "tauri"])
        #expect(presets.first { $0["name"] as? String == "capacitor" }?["framework"] as? String == "Capacitor")
        #expect((presets.first { $0["name"] as? String == "tauri" }?["app"] as? [String: String])?["origin"] == "tauri://localhost")
        #expect((presets.first { $0["name"] as? String == "netease-schemehandler" }?["mitigations"] as? [[String: Any]])?.map { $0["kind"] as? String } == ["body-bridge", "cookie-store-sync", "cookie-setter-hook"])
        let rules = try #require(object["rules"] as? [[String: Any]])
        #expect(rules.count == 102)  // jar, strategy, bridge and mitigation rules (49), E1-E8, native code (NC1), WebSockets (WS1), EventSources (ES1), the app origin (A1-A4), the frameworks (29), the offline package (O1-O4), prefetch (PF1-PF3), HTTPDNS (D1-D5) and the web view pool (W1)
        #expect(rules.first { $0["id"] as? String == "P1" }?["confidence"] as? String == "source")
    }

    @Test("replay with an offline package and a prefetch config: a coverage section, a coverage array in JSON; a bad file stores nothing")
    func offlineAndPrefetch() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        // The sidecars beside the recording are used.
        let run = try Self.h5replay(["replay", "Recordings/offline-package-page.har", "--preset", "plain,urlprotocol-naive"], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("Offline package and prefetch coverage"))
        #expect(run.stdout.contains("offline-package-page / urlprotocol-naive  offline 2 hit, 2 stale, 3 miss, 0 not interceptable; prefetch 1 hit, 1 mismatch, 1 stale, 1 unused"), "\(run.stdout)")
        let json = try Self.json(try Self.h5replay(["report", "--format", "json"], in: dir).stdout)
        let coverage = try #require(json["coverage"] as? [[String: Any]])
        let plain = try #require(coverage.first { $0["preset"] as? String == "plain" })
        #expect((plain["offline"] as? [String: Int])?["notInterceptable"] == 4)
        #expect((plain["prefetch"] as? [String: Int])?["hit"] == 1)
        // A bad resource map given on the command line: the file and the JSON path, and nothing stored.
        try Data(#"{"code": 200, "data": {"resourcemap": {"https://a.example/x.js": {"md5": "nope"}}}}"#.utf8).write(to: dir.appendingPathComponent("bad.json"))
        let bad = try Self.h5replay(["replay", "Recordings/xhr-json-post.har", "--offline-package", "bad.json", "--db", "fresh.sqlite"], in: dir)
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("bad.json: data.resourcemap[\"https://a.example/x.js\"].md5: an md5 is 32 hex digits"), "\(bad.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("fresh.sqlite").path))
    }
}
