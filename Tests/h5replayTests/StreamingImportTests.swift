import Foundation
import CookieJar
import PacketCapture
import Pipeline
import ReportStore
import Testing
import TrafficModel

/// `import` streams a capture into the store exchange by exchange; what it stores must be
/// what reading the whole capture and saving it gives: the same exchanges in the same order,
/// the same classification, redirect links, frames, cookie provenance and diagnostics.
@Suite("Streaming capture import stores what a whole-capture import stores")
struct StreamingImportTests {
    static let suite = CLITests.root.appendingPathComponent("../shared/conformance/pcap2har-andrewf/tests").standardizedFileURL

    /// The bundled captures, and pcap2har's when the conformance folder is beside the project.
    static var captures: [URL] {
        var out: [URL] = []
        let recordings = CLITests.root.appendingPathComponent("Recordings")
        for dir in [recordings, suite] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
            out += names.filter { $0.hasSuffix(".pcap") || $0.hasSuffix(".pcapng") }.sorted().map { dir.appendingPathComponent($0) }
        }
        return out
    }

    /// Every stored fact of each recording, compared one by one so that a failure names it.
    static func compare(_ streamed: ReportStore, _ whole: ReportStore, file: String) throws {
        let names = try whole.recordingNames()
        #expect(try streamed.recordingNames() == names, "\(file)")
        for name in names {
            let a = try #require(try streamed.detail(named: name))
            let b = try #require(try whole.detail(named: name))
            #expect(a.recording.exchanges.count == b.recording.exchanges.count, "\(file) \(name)")
            for (x, y) in zip(a.recording.exchanges, b.recording.exchanges) where x != y {
                Issue.record("\(file) \(name) #\(y.sequence): streamed \(x.request.method) \(x.request.url) \(x.initiator) \(x.frame.label) \(String(describing: x.redirect)), whole \(y.request.method) \(y.request.url) \(y.initiator) \(y.frame.label) \(String(describing: y.redirect))")
                break
            }
            #expect(a.recording.diagnostics == b.recording.diagnostics, "\(file) \(name)")
            #expect(a.recording.sourceSHA256 == b.recording.sourceSHA256, "\(file) \(name)")
            #expect(a.cookies == b.cookies, "\(file) \(name)")
            #expect(a.inferred == b.inferred, "\(file) \(name)")
            // The whole provenance, values and attributes too (v24), loads as the walk of the recording read back.
            let walked = CookieProvenance(recording: b.recording)
            #expect(try streamed.provenance(named: name) == walked, "\(file) \(name)")
            #expect(try whole.provenance(named: name) == walked, "\(file) \(name)")
        }
    }

    @Test("every bundled and conformance capture, handing exchanges on after every packet and after 2048", arguments: [1, 2048])
    func sameAsWhole(batchPackets: Int) throws {
        let captures = Self.captures
        #expect(captures.count >= 2)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-stream-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // Cut copies of a bundled capture: a truncated file (a recording-level diagnostic)
        // with exchanges cut short (per-exchange ones), whose order must survive streaming.
        var cut: [URL] = []
        for first in captures.prefix(2) {
            guard let data = FileManager.default.contents(atPath: first.path) else { continue }
            for fraction in [0.23, 0.41, 0.62, 0.83] {
                let url = dir.appendingPathComponent("cut\(Int(fraction * 100))-\(first.lastPathComponent)")
                try data.prefix(Int(Double(data.count) * fraction)).write(to: url)
                cut.append(url)
            }
        }
        var exchanges = 0
        var bothKinds = 0
        for (k, capture) in (captures + cut).enumerated() {
            for split in [false, true] {
                let streamedPath = dir.appendingPathComponent("s\(k)\(split).sqlite").path
                let result = try CLITests.h5replay(["import", capture.path, "--db", streamedPath] + (split ? ["--split", "client"] : []), in: dir, environment: ["H5REPLAY_BATCH_PACKETS": String(batchPackets)])
                let whole = try ReportStore.open(path: dir.appendingPathComponent("w\(k)\(split).sqlite").path)
                var options = CaptureSession.Options(splitByClient: split)
                options.batchPackets = 1 << 30
                let name = capture.deletingPathExtension().lastPathComponent
                let recordings: [Recording]
                do {
                    recordings = try CaptureImporter.read(path: capture.path, name: name, options: options).recordings
                } catch {
                    // A file libpcap cannot open (an empty one) is refused either way.
                    #expect(result.status == 2, "\(capture.lastPathComponent)")
                    continue
                }
                #expect(result.status == 0, "\(capture.lastPathComponent): \(result.stderr)")
                _ = try whole.save(recordings.map { ($0, CookieProvenance(recording: $0)) })
                exchanges += recordings.reduce(0) { $0 + $1.exchanges.count }
                if let r = recordings.first, r.diagnostics.contains(where: { $0.sequence == nil }), r.diagnostics.contains(where: { $0.sequence != nil }) { bothKinds += 1 }
                try Self.compare(try ReportStore.open(path: streamedPath), whole, file: capture.lastPathComponent + (split ? " --split client" : ""))
            }
        }
        let withSuite = FileManager.default.fileExists(atPath: Self.suite.path)
        #expect(exchanges > (withSuite ? 400 : 20), "the captures hold enough exchanges to compare")
        #expect(bothKinds > 0, "some capture has recording-level and per-exchange diagnostics")
    }

    /// The bundled HAR files, mitmproxy's and PageXray's real exports when the conformance
    /// folder is here, the HAR fuzzer's kept inputs, the hostile corpus's HAR files, and one
    /// made out of time order, with entries lacking a time and entries skipped.
    static func harFiles(in dir: URL) throws -> [URL] {
        var out: [URL] = []
        let conformance = CLITests.root.appendingPathComponent("../shared/conformance").standardizedFileURL
        let mitmproxy = conformance.appendingPathComponent("har-mitmproxy/test/mitmproxy/data/har_files")
        for folder in [CLITests.root.appendingPathComponent("Recordings"), mitmproxy] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            out += names.filter { $0.hasSuffix(".har") }.sorted().map { folder.appendingPathComponent($0) }
        }
        // PageXray's test files, in folders of their own (WebPagetest runs among them).
        let pageXray = conformance.appendingPathComponent("har-pagexray/test/files")
        let nested = FileManager.default.enumerator(atPath: pageXray.path)?.compactMap { $0 as? String } ?? []
        out += nested.filter { $0.hasSuffix(".har") }.sorted().map { pageXray.appendingPathComponent($0) }
        // The fuzzer's inputs under a name `import` takes for a HAR.
        let fuzzed = CLITests.root.appendingPathComponent("Tests/FuzzHarnessTests/Regressions/har")
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: fuzzed.path)) ?? []).sorted() where !name.hasPrefix(".") {
            let copy = dir.appendingPathComponent("fuzz-\(name.replacingOccurrences(of: ".har", with: "")).har")
            try FileManager.default.copyItem(at: fuzzed.appendingPathComponent(name), to: copy)
            out.append(copy)
        }
        if RobustnessTests.python {
            let corpus = dir.appendingPathComponent("hostile")
            #expect(try RobustnessTests.run("/usr/bin/python3", [CLITests.root.appendingPathComponent("Tools/make-hostile-corpus.py").path, corpus.path]) == 0)
            let names = try FileManager.default.contentsOfDirectory(atPath: corpus.path)
            out += names.filter { $0.hasSuffix(".har") }.sorted().map { corpus.appendingPathComponent($0) }
        }
        func entry(_ path: String, _ time: String?, url: String? = nil) -> [String: Any] {
            var e: [String: Any] = [
                "request": ["method": "GET", "url": url ?? "https://shop.example/\(path)", "headers": [["name": "Cookie", "value": "sid=\(path)"]]],
                "response": ["status": 200, "headers": [["name": "Set-Cookie", "value": "seen=\(path); Path=/"]], "content": ["text": "body of \(path)", "mimeType": "text/plain"]],
                "time": 5,
            ]
            if let time { e["startedDateTime"] = time }
            return e
        }
        var entries: [[String: Any]] = []
        for k in 0..<1_300 {
            // Times run backwards in steps, so most batches are read out of file order.
            let second = 59 - (k * 7) % 60
            switch k % 97 {
            case 5: entries.append(entry("untimed\(k)", nil))
            case 11: entries.append(entry("bad\(k)", "yesterday"))
            case 13: entries.append(entry("data\(k)", "2026-01-01T10:00:00Z", url: "data:text/plain,x"))
            case 17: entries.append(["request": ["method": "GET"]])
            default: entries.append(entry("p\(k)", String(format: "2026-01-01T10:%02d:%02d.%03dZ", k % 60, second, k % 1000)))
            }
        }
        let shuffled = dir.appendingPathComponent("out-of-order.har")
        try JSONSerialization.data(withJSONObject: ["log": ["version": "1.2", "creator": ["name": "t", "version": "1"], "entries": entries]]).write(to: shuffled)
        return out + [shuffled]
    }

    @Test("every bundled, conformance, fuzzed and hostile HAR, and one out of time order, streamed by `import` as read whole")
    func harSameAsWhole() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-har-stream-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var exchanges = 0
        var refused = 0
        let files = try Self.harFiles(in: dir)
        for (k, har) in files.enumerated() {
            let streamedPath = dir.appendingPathComponent("s\(k).sqlite").path
            let result = try CLITests.h5replay(["import", har.path, "--db", streamedPath], in: dir)
            let recordings: [Recording]
            do {
                recordings = try ImportPipeline().read(har.path, name: nil)
            } catch {
                // A file that is not HAR is refused either way, naming the file and the
                // same place and problem.
                #expect(result.status == 2 && result.stderr.contains(har.lastPathComponent), "\(har.lastPathComponent): \(result.stderr)")
                #expect(result.stderr.contains("\(error)"), "\(har.lastPathComponent): streamed \(result.stderr), whole \(error)")
                refused += 1
                continue
            }
            #expect(result.status == 0, "\(har.lastPathComponent): \(result.stderr)")
            let whole = try ReportStore.open(path: dir.appendingPathComponent("w\(k).sqlite").path)
            _ = try whole.save(recordings.map { ($0, CookieProvenance(recording: $0)) })
            exchanges += recordings.reduce(0) { $0 + $1.exchanges.count }
            try Self.compare(try ReportStore.open(path: streamedPath), whole, file: har.lastPathComponent)
        }
        #expect(exchanges > 1_000, "the HAR files hold enough exchanges to compare")
        if FileManager.default.fileExists(atPath: CLITests.root.appendingPathComponent("../shared/conformance/har-pagexray").path) {
            #expect(files.count(where: { $0.path.contains("har-pagexray") }) == 27, "every PageXray file is compared")
        }
        if RobustnessTests.python { #expect(refused >= 5, "the hostile HAR files that are refused are refused alike") }
    }
}
