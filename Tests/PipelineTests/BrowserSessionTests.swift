import CookieJar
import Foundation
import HARFormat
import Testing
import TrafficModel
import WebViewEmulation
@testable import Pipeline
@testable import ReportStore

/// A page-test tool writes each of its runs, each in a fresh browser, into one HAR; read as
/// one session, one run's cookies become another's and every run switch a script's write or
/// deletion. Each run is a recording of its own.
@Suite("Browser sessions in one HAR")
struct BrowserSessionTests {
    /// A document and an XHR per page, at the times given (runs overlap, as WebPagetest's do).
    /// Each run's document sets `sid` to the run's own value; its XHR carries it.
    static func har(creator: String, pages: [(id: String, title: String, start: String, xhr: String)]) -> String {
        let pageList = pages.map { #"{"id": "\#($0.id)", "title": "\#($0.title)", "startedDateTime": "\#($0.start)"}"# }.joined(separator: ", ")
        let entries = pages.enumerated().flatMap { k, p in
            [#"{"pageref": "\#(p.id)", "startedDateTime": "\#(p.start)", "time": 20, "request": {"method": "GET", "url": "https://shop.example/", "headers": [{"name": "Accept", "value": "text/html"}, {"name": "Sec-Fetch-Dest", "value": "document"}, {"name": "Sec-Fetch-Mode", "value": "navigate"}]}, "response": {"status": 200, "headers": [{"name": "Content-Type", "value": "text/html"}, {"name": "Set-Cookie", "value": "sid=v\#(k); Path=/"}], "content": {"size": 10, "text": "<html></html>"}}}"#,
             #"{"pageref": "\#(p.id)", "startedDateTime": "\#(p.xhr)", "time": 20, "request": {"method": "GET", "url": "https://shop.example/api", "headers": [{"name": "Accept", "value": "*/*"}, {"name": "Sec-Fetch-Dest", "value": "empty"}, {"name": "Sec-Fetch-Mode", "value": "cors"}, {"name": "Referer", "value": "https://shop.example/"}, {"name": "Cookie", "value": "sid=v\#(k)"}]}, "response": {"status": 200, "headers": [], "content": {"size": 0}}}"#]
        }.joined(separator: ", ")
        return #"{"log": {"version": "1.2", "creator": {"name": "\#(creator)", "version": "1"}, "pages": [\#(pageList)], "entries": [\#(entries)]}}"#
    }

    static func write(_ json: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-sessions-\(getpid())-\(UUID().uuidString).har").path
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Two WebPagetest runs overlapping in time; run 1 also has a repeat view.
    static let webPagetest = har(creator: "WebPagetest", pages: [
        ("page_1_0", "Run 1, First View for https://shop.example/", "2024-01-02T03:04:05.000Z", "2024-01-02T03:04:05.500Z"),
        ("page_2_0", "Run 2, First View for https://shop.example/", "2024-01-02T03:04:05.200Z", "2024-01-02T03:04:05.700Z"),
        ("page_1_1", "Run 1, Repeat View for https://shop.example/", "2024-01-02T03:04:09.000Z", "2024-01-02T03:04:09.500Z"),
    ])

    @Test("a page-test tool's runs are one recording each, read whole or streamed alike, each numbered from 0 and saying so; a run's repeat view, after a browser restart, is one of its own")
    func runsAreRecordings() throws {
        let path = try Self.write(Self.webPagetest)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let whole = try ImportPipeline().read(path, name: "shop")
        #expect(whole.map(\.name) == ["shop-run-1", "shop-run-1-repeat-view", "shop-run-2"])
        #expect(whole.map(\.exchanges.count) == [2, 2, 2])
        for recording in whole {
            #expect(recording.exchanges.map(\.sequence) == Array(recording.exchanges.indices))
            #expect(recording.diagnostics.first?.code == DiagnosticCode.browserSessions.rawValue)
        }
        #expect(whole[0].diagnostics[0].message.contains("this recording is run 1 (2 entries)"))
        #expect(whole[1].diagnostics[0].message.contains("only the run's persistent cookies are there from its start"))
        let store = try ReportStore.inMemory()
        let imported = try ImportPipeline().importFile(path, name: "shop", replace: false, into: store)
        #expect(imported.map(\.0.name) == ["shop-run-1", "shop-run-1-repeat-view", "shop-run-2"])
        for recording in whole {
            let stored = try #require(try store.recording(named: recording.name))
            #expect(stored.exchanges.map(\.request.url) == recording.exchanges.map(\.request.url))
            #expect(stored.diagnostics == recording.diagnostics)
        }
    }

    @Test("each run's cookies are its own: no run's Set-Cookie is another's cookie, no run switch a script's write")
    func runsKeepTheirCookies() throws {
        let path = try Self.write(Self.webPagetest)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let recordings = try ImportPipeline().read(path, name: "shop")
        let results = ReplayRunner(presets: [try #require(Preset.builtIn.first { $0.name == "plain" })], profile: Profile()).replay(recordings)
        #expect(results.flatMap(\.findings).isEmpty, "\(results.flatMap(\.findings).map(\.message))")
        // What a session's own cookies never need: a script's write or deletion, or a
        // header built before a write (E8).
        func scriptEvents(_ recording: Recording) -> [CookieProvenance.Inference] {
            CookieProvenance(recording: recording).inferred.joined().filter { [.scriptSet, .scriptDeleted, .headerBeforeWrite].contains($0.kind) }
        }
        for recording in recordings {
            #expect(scriptEvents(recording).isEmpty, "\(recording.name): \(scriptEvents(recording))")
        }
        // Read as one session, the interleaved runs make up script writes or queued headers.
        let merged = try HARImporter().recording(from: Data(contentsOf: URL(fileURLWithPath: path)), file: path, name: "merged")
        #expect(!scriptEvents(merged).isEmpty)
    }

    @Test("pages that name no run (a developer tool's export with preserve log) are one session")
    func onePreservedLog() throws {
        let path = try Self.write(Self.har(creator: "WebInspector", pages: [
            ("page_1", "https://shop.example/", "2024-01-02T03:04:05.000Z", "2024-01-02T03:04:05.500Z"),
            ("page_2", "https://shop.example/", "2024-01-02T03:04:07.000Z", "2024-01-02T03:04:07.500Z"),
        ]))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try ImportPipeline().read(path, name: "shop").map(\.name) == ["shop"])
    }
}

