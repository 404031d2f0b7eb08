import CookieJar
import Foundation
import Testing
import TrafficModel
import WebViewEmulation
@testable import Findings
@testable import Pipeline

/// Real exports and captures (mitmproxy's HAR test data, pcap2har's captures, the bundled
/// browser captures) replayed under every preset, against reviewed goldens in
/// `Tests/PipelineTests/Corpus/NAME.json`: per preset, each finding's code, exchange,
/// severity, rank, likelihood and cookies. A plain WKWebView does what the browser did, so
/// `plain` finds nothing on any of them. `H5REPLAY_UPDATE_GOLDENS=1` re-records the files;
/// review the diff. Skipped when ../shared/conformance is not beside the project.
@Suite("Real-world corpus")
struct RealWorldCorpusTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let conformance = root.deletingLastPathComponent().appendingPathComponent("shared/conformance")
    static let goldens = root.appendingPathComponent("Tests/PipelineTests/Corpus")

    /// Every real recording the corpus has, by path.
    static var files: [String] {
        let har = conformance.appendingPathComponent("har-mitmproxy/test/mitmproxy/data/har_files")
        // mitmproxy's own flows: a WebSocket, an event stream, entries with no response, and
        // a HAR saved compressed (.zhar, zlib).
        let flows = conformance.appendingPathComponent("har-mitmproxy/test/mitmproxy/data/flows")
        let pcap = conformance.appendingPathComponent("pcap2har-andrewf/tests")
        var out: [String] = []
        for (dir, ext) in [(har, ".har"), (flows, ".har"), (flows, ".zhar"), (pcap, ".pcap")] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
            // empty.pcap holds no packet: the import refuses it, as its own test checks.
            out += names.filter { $0.hasSuffix(ext) && $0 != "empty.pcap" }.sorted().map { dir.appendingPathComponent($0).path }
        }
        if !out.isEmpty {
            out += ["browser-event-stream.pcap", "browser-form-redirect.pcap", "browser-xhr-fetch.pcap"].map { root.appendingPathComponent("Recordings/\($0)").path }
        }
        return out
    }

    static func results(_ path: String) throws -> [(preset: String, findings: [Finding])] {
        let recordings = try ImportPipeline().read(path, name: nil)
        // Every diagnostic an import attaches is one of the catalogue's.
        for d in recordings.flatMap(\.diagnostics) { #expect(d.catalogued != nil, "\(path): \(d.code) is not in DiagnosticCode") }
        let runner = ReplayRunner(presets: Preset.builtIn, profile: Profile())
        return runner.replay(recordings).map { ($0.preset, $0.findings) }
    }

    @Test("plain finds nothing on any real recording but what WebKit's ITP keeps off requests to another site than the page's (N4); Chrome's status-0 entry gives no finding under any preset")
    func plainIsClean() throws {
        let files = Self.files
        guard !files.isEmpty else { return }
        #expect(files.count >= 18, "the corpus holds mitmproxy's HARs and pcap2har's captures")
        var itp = 0
        for path in files {
            let results = try Self.results(path)
            let plain = results.first { $0.preset == "plain" }!.findings
            // Browsers without ITP (pcap2har's 2011 captures) sent ad and widget servers
            // their own cookies; a WKWebView does not, whatever the interception. Each such
            // finding is on a request to another site than the page's.
            let engine = plain.filter { $0.rules == ["N4"] }
            for f in engine { #expect(f.rank == .thirdParty, "\((path as NSString).lastPathComponent) #\(f.sequence): N4 on a request ranked \(f.rank)") }
            itp += engine.count
            let other = plain.filter { !engine.contains($0) }
            #expect(other.isEmpty, "\((path as NSString).lastPathComponent) under plain: \(other.map { "\($0.code.rawValue) #\($0.sequence) \($0.rules)" })")
            if path.hasSuffix("/chrome.har") {
                #expect(results.allSatisfy { $0.findings.isEmpty }, "chrome.har: \(results.flatMap(\.findings).map { "\($0.preset) \($0.code.rawValue) #\($0.sequence)" })")
            }
        }
        #expect((20...40).contains(itp), "the third-party requests of out-of-order.pcap, pcapr.net.pcap and sajal.pcap that carried their own sites' cookies: \(itp)")
    }

    @Test("a browser's cache hits, whose request headers it made up without Cookie, are no evidence that a cookie was absent (E3): Safari's and Firefox's real exports",
          .enabled(if: FileManager.default.fileExists(atPath: conformance.path), "../shared/conformance is not here"), arguments: ["safari.har", "firefox.har"])
    func cacheHits(_ name: String) throws {
        // mitmproxy's real browser HARs, given a session cookie: set by the page's response
        // and carried by every request to the site that reached the network; the entries the
        // browser's cache served (WebKit: `_fetchType`; Firefox: no timings) stay as written.
        let file = Self.conformance.appendingPathComponent("har-mitmproxy/test/mitmproxy/data/har_files/\(name)")
        var har = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        var log = try #require(har["log"] as? [String: Any])
        var entries = try #require(log["entries"] as? [[String: Any]])
        var cacheHits: [String] = []
        for k in entries.indices {
            var request = try #require(entries[k]["request"] as? [String: Any])
            var response = try #require(entries[k]["response"] as? [String: Any])
            var headers = try #require(request["headers"] as? [[String: String]])
            if (entries[k]["timings"] as? [String: Any])?.isEmpty == true || (entries[k]["_fetchType"] as? String)?.hasSuffix("Cache") == true {
                cacheHits.append(try #require(request["url"] as? String))
            } else if k > 0, (request["url"] as? String)?.hasPrefix("https://mitmproxy.org/") == true {
                headers.append(["name": "Cookie", "value": "sid=1"])
            }
            if k == 0 {
                var responseHeaders = try #require(response["headers"] as? [[String: String]])
                responseHeaders.append(["name": "Set-Cookie", "value": "sid=1; Path=/"])
                response["headers"] = responseHeaders
            }
            request["headers"] = headers
            entries[k]["request"] = request
            entries[k]["response"] = response
        }
        #expect(cacheHits.count == (name == "safari.har" ? 16 : 5))
        // The cookie findings with the cache hits, and of the same HAR without them: the same.
        func findings(_ entries: [[String: Any]]) throws -> (recording: Recording, findings: [String]) {
            log["entries"] = entries
            har["log"] = log
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-cache-hits-\(UUID().uuidString).har").path
            try JSONSerialization.data(withJSONObject: har).write(to: URL(fileURLWithPath: path))
            defer { try? FileManager.default.removeItem(atPath: path) }
            let recording = try #require(try ImportPipeline().read(path, name: (name as NSString).deletingPathExtension).first)
            let results = ReplayRunner(presets: Preset.builtIn, profile: Profile()).replay([recording])
            // The cookie findings: a cache hit's document, an iframe read as the main frame's
            // next page, ends a framework's bundled page and with it its CORS findings.
            return (recording, results.flatMap { result in
                result.findings.filter { $0.code.rawValue.hasPrefix("COOKIE") }.map { "\(result.preset) \($0.code.rawValue) \($0.url) \($0.subjects)" }
            }.sorted())
        }
        let with = try findings(entries)
        // A document's HTML says which API its script calls each URL with, cache hit or
        // not: documents stay.
        func isDocument(_ entry: [String: Any]) -> Bool {
            (((entry["response"] as? [String: Any])?["content"] as? [String: Any])?["mimeType"] as? String)?.contains("html") == true
        }
        let without = try findings(entries.filter { entry in isDocument(entry) || !cacheHits.contains(((entry["request"] as? [String: Any])?["url"] as? String) ?? "") })
        let hits = with.recording.exchanges.filter { cacheHits.contains($0.request.url) }
        #expect(hits.count == cacheHits.count && hits.allSatisfy { $0.evidenceGap == .fromCache })
        let inferred = CookieProvenance(recording: with.recording).inferred.flatMap { $0 }
        #expect(inferred.isEmpty, "no script write or deletion is inferred: \(inferred.map { "\($0.kind) \($0.cookie.name)" })")
        #expect(!with.findings.isEmpty, "the cookie gives findings to compare (capacitor's bundled page never receives it)")
        #expect(with.findings == without.findings, "more with the cache hits: \(Self.excess(with.findings, over: without.findings)); more without them: \(Self.excess(without.findings, over: with.findings))")
    }

    @Test("each real recording's findings under every preset match its reviewed golden", arguments: Self.files)
    func golden(_ path: String) throws {
        let name = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        var presets: [String: Any] = [:]
        for (preset, findings) in try Self.results(path) {
            presets[preset] = findings.sorted(by: Finding.moreImportant).map { f -> [String: Any] in
                var entry: [String: Any] = ["code": f.code.rawValue, "sequence": f.sequence, "severity": f.severity.rawValue, "rank": f.rank.rawValue]
                if !f.subjects.isEmpty { entry["cookies"] = f.subjects }
                if let likelihood = f.likelihood { entry["likelihood"] = (likelihood * 1000).rounded() / 1000 }
                if f.baseline { entry["baseline"] = true }
                return entry
            }
        }
        let computed = try JSONSerialization.data(withJSONObject: ["recording": name, "presets": presets], options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        let file = Self.goldens.appendingPathComponent("\(name).json")
        if ProcessInfo.processInfo.environment["H5REPLAY_UPDATE_GOLDENS"] == "1" {
            try (computed + Data("\n".utf8)).write(to: file)
            return
        }
        let expected = try String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let actual = String(decoding: computed, as: UTF8.self)
        if expected != actual {
            let e = expected.split(separator: "\n"), a = actual.split(separator: "\n")
            let first = zip(e, a).enumerated().first { $0.element.0 != $0.element.1 }
            Issue.record("\(name): differs from Tests/PipelineTests/Corpus/\(name).json at line \((first?.offset ?? min(e.count, a.count)) + 1): expected \(first.map { String($0.element.0) } ?? "(end)"), got \(first.map { String($0.element.1) } ?? "(end)")")
        }
    }

    /// pcap2har's captures beside the HAR it made of each: the same traffic, seen once as
    /// packets and once by a converter that read the same packets.
    static var capturePairs: [String] {
        let pcap = conformance.appendingPathComponent("pcap2har-andrewf/tests")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: pcap.path)) ?? []
        return names.filter { $0.hasSuffix(".pcap") && $0 != "empty.pcap" && names.contains($0 + ".har") }.sorted().map { pcap.appendingPathComponent($0).path }
    }

    /// Each exchange as a reader matches two recordings of the same traffic: by request
    /// and how many times the request came before (the recorders number exchanges apart),
    /// and the findings on it under every preset, by preset, code and cookies.
    static func comparable(_ path: String) throws -> (exchanges: Set<String>, findings: [(exchange: String, finding: String)]) {
        let recordings = try ImportPipeline().read(path, name: nil)
        let runner = ReplayRunner(presets: Preset.builtIn, profile: Profile())
        var exchanges = Set<String>()
        var findings: [(String, String)] = []
        for (recording, results) in zip(recordings, recordings.map { runner.replay([$0]) }) {
            var seen: [String: Int] = [:]
            let keys = recording.exchanges.map { e -> String in
                let request = "\(e.request.method) \(e.request.url)"
                seen[request, default: 0] += 1
                return "\(request) #\(seen[request]!)"
            }
            exchanges.formUnion(keys)
            for result in results {
                findings += result.findings.map { (keys[$0.sequence], "\(result.preset) \($0.code.rawValue) \($0.subjects.joined(separator: ","))") }
            }
        }
        return (exchanges, findings)
    }

    /// What `a` holds more times than `b`.
    static func excess(_ a: [String], over b: [String]) -> [String] {
        var left = b
        return a.filter { item in
            guard let k = left.firstIndex(of: item) else { return true }
            left.remove(at: k)
            return false
        }
    }

    @Test("a capture and the HAR pcap2har made of it give the same findings under every preset", arguments: Self.capturePairs)
    func captureAgreesWithItsHAR(_ path: String) throws {
        let capture = try Self.comparable(path)
        let har = try Self.comparable(path + ".har")
        // out-of-order.pcap ends inside a packet record: pcap2har kept the request in it,
        // libpcap stops before it. No other exchange is in one and not the other.
        let inOneOnly = capture.exchanges.symmetricDifference(har.exchanges)
        #expect(inOneOnly.count <= (path.hasSuffix("out-of-order.pcap") ? 1 : 0), "\((path as NSString).lastPathComponent): \(inOneOnly.sorted())")
        let both = capture.exchanges.intersection(har.exchanges)
        let fromCapture = capture.findings.filter { both.contains($0.exchange) }.map { "\($0.exchange): \($0.finding)" }.sorted()
        let fromHAR = har.findings.filter { both.contains($0.exchange) }.map { "\($0.exchange): \($0.finding)" }.sorted()
        #expect(!fromCapture.isEmpty || !path.hasSuffix("pcapr.net.pcap"), "a capture with redirects and cookies gives findings to compare")
        #expect(fromCapture == fromHAR, "\((path as NSString).lastPathComponent): more from the capture \(Self.excess(fromCapture, over: fromHAR)); more from the HAR \(Self.excess(fromHAR, over: fromCapture))")
    }
}
