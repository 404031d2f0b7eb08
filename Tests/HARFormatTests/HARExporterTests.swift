import Foundation
import HARFormat
import Testing
import TrafficModel

@Suite("HAR export and round trip")
struct HARExporterTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static var recordings: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Recordings").path)) ?? []).filter { $0.hasSuffix(".har") }.sorted()
    }

    /// What a round trip must keep of every exchange.
    struct Essentials: Equatable {
        var method, url: String
        var requestHeaders: HeaderList
        var requestBody: Data
        var status: Int
        var responseHeaders: HeaderList
        var responseBody: Data
        var redirect: RedirectLink?

        init(_ e: Exchange) {
            method = e.request.method
            url = e.request.url
            requestHeaders = e.request.headers
            requestBody = e.request.body
            status = e.response.status
            responseHeaders = e.response.headers
            responseBody = e.response.body
            redirect = e.redirect
        }
    }

    @Test("import, export, import keeps every exchange", arguments: recordings)
    func roundTrip(_ file: String) throws {
        let data = try Data(contentsOf: Self.root.appendingPathComponent("Recordings/\(file)"))
        let first = try HARImporter().recording(from: data, file: file, name: "a")
        let exported = try HARExporter(toolVersion: "test").data(for: first)
        let second = try HARImporter().recording(from: exported, file: "exported.har", name: "a")
        #expect(first.exchanges.count == second.exchanges.count)
        #expect(first.exchanges.map(Essentials.init) == second.exchanges.map(Essentials.init))
        #expect(first.exchanges.map(\.initiator) == second.exchanges.map(\.initiator))
        #expect(first.exchanges.map(\.startedAt) == second.exchanges.map(\.startedAt))
    }

    @Test("binary request and response bodies survive the round trip byte for byte")
    func binaryBodies() throws {
        let bytes = Data((0..<256).map { UInt8($0) })
        let recording = Recording(name: "bin", sourceFormat: "har", exchanges: [
            Exchange(sequence: 0, startedAt: 1_700_000_000.25, duration: 0.1,
                request: RecordedRequest(method: "PUT", url: "https://a.example/blob", headers: [HeaderField("Content-Type", "application/octet-stream")], body: bytes),
                response: RecordedResponse(status: 201, headers: [HeaderField("Content-Type", "application/octet-stream")], body: Data(bytes.reversed())))
        ])
        let exported = try HARExporter(toolVersion: "test").data(for: recording)
        let back = try HARImporter().recording(from: exported, file: "x.har", name: "x")
        #expect(back.exchanges[0].request.body == bytes)
        #expect(back.exchanges[0].response.body == Data(bytes.reversed()))
        #expect(back.exchanges[0].startedAt == 1_700_000_000.25)
    }

    @Test("the export is HAR 1.2 with the fields the schema requires")
    func shape() throws {
        let recording = Recording(name: "x", sourceFormat: "har", exchanges: [
            Exchange(sequence: 0, startedAt: 0, request: RecordedRequest(method: "GET", url: "https://a.example/?q=1&r"), response: RecordedResponse(status: 200))
        ])
        let object = try #require(JSONSerialization.jsonObject(with: HARExporter(toolVersion: "9").data(for: recording)) as? [String: Any])
        let log = try #require(object["log"] as? [String: Any])
        #expect(log["version"] as? String == "1.2")
        let entry = try #require((log["entries"] as? [[String: Any]])?.first)
        for key in ["startedDateTime", "time", "request", "response", "cache", "timings"] { #expect(entry[key] != nil, "entry.\(key)") }
        let request = try #require(entry["request"] as? [String: Any])
        for key in ["method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize", "bodySize"] { #expect(request[key] != nil, "request.\(key)") }
        #expect((request["queryString"] as? [[String: String]]) == [["name": "q", "value": "1"], ["name": "r", "value": ""]])
        #expect(entry["startedDateTime"] as? String == "1970-01-01T00:00:00.000Z")
    }
}

/// The export is valid HAR 1.2 by the published schemas, and mitmproxy reads it back
/// (when installed): `Tools/validate-har.py` over every bundled recording's export.
@Suite("HAR export against the HAR 1.2 schemas and mitmproxy")
struct HARExportConformanceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let schemas = root.appendingPathComponent("../shared/conformance/har-schema/lib").standardizedFileURL
    static var present: Bool { FileManager.default.fileExists(atPath: schemas.path) }

    @Test("every bundled recording exports as schema-valid HAR", .enabled(if: present, "../shared/conformance is not here"))
    func schemaValid() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-har-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var files: [String] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Recordings").path) where name.hasSuffix(".har") {
            let recording = try HARImporter().recording(from: Data(contentsOf: Self.root.appendingPathComponent("Recordings/\(name)")), file: name, name: name)
            let out = dir.appendingPathComponent(name)
            try HARExporter(toolVersion: "test").data(for: recording).write(to: out)
            files.append(out.path)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.root.appendingPathComponent("Tools/validate-har.py").path, Self.schemas.path] + files.sorted()
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        if process.terminationStatus == 3 {
            print("skipping HAR schema validation: \(text)")
            return
        }
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("\(files.count) HAR file(s): ok"))
    }
}

@Suite("HAR journal: a HAR written as exchanges complete")
struct HARJournalTests {
    func exchange(_ n: Int) -> Exchange {
        Exchange(sequence: n, startedAt: 1_700_000_000 + Double(n), request: RecordedRequest(method: "POST", url: "https://a.example/\(n)", body: Data("n=\(n)".utf8)),
                 response: RecordedResponse(status: 200, headers: [HeaderField("Content-Type", "text/plain")], body: Data("ok \(n)\nline two".utf8)))
    }

    @Test("a finished journal is a HAR that imports; a killed one is closed keeping every whole entry, dropping a half-written last one")
    func journal() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-journal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let done = dir.appendingPathComponent("done.har").path
        let journal = try HARJournal(path: done, toolVersion: "test")
        for n in 0..<2 { try journal.append(exchange(n)) }
        var failed = exchange(2)
        failed.response = RecordedResponse(status: 0, bodyMissing: true)
        try journal.append(failed, failure: "the upstream refused the connection")
        try journal.finish()
        #expect((try FileManager.default.attributesOfItem(atPath: done)[.posixPermissions] as? Int).map { $0 & 0o777 } == 0o600)
        let read = try HARImporter().recording(from: Data(contentsOf: URL(fileURLWithPath: done)), file: done, name: "done")
        #expect(read.exchanges.map(\.request.url) == ["https://a.example/0", "https://a.example/1", "https://a.example/2"])
        #expect(read.exchanges[1].response.body == Data("ok 1\nline two".utf8))
        #expect(read.diagnostics.contains { $0.code == DiagnosticCode.noResponse.rawValue && $0.message.contains("refused the connection") })
        #expect(try HARJournal.recover(path: done) == 3)

        // Killed after two entries, in the middle of writing a third.
        let cut = dir.appendingPathComponent("cut.har").path
        let killed = try HARJournal(path: cut, toolVersion: "test")
        for n in 0..<2 { try killed.append(exchange(n)) }
        let handle = try #require(FileHandle(forWritingAtPath: cut))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(",\n{\"startedDateTime\": \"2024-".utf8))
        try handle.close()
        #expect(try HARJournal.recover(path: cut) == 2)
        let recovered = try HARImporter().recording(from: Data(contentsOf: URL(fileURLWithPath: cut)), file: cut, name: "cut")
        #expect(recovered.exchanges.map(\.request.body) == [Data("n=0".utf8), Data("n=1".utf8)])
    }

    @Test("exchanges begun and not ended when the process died are added by recover, marked with their reason, a WebSocket with its messages; ended ones are not")
    func begunExchanges() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-journal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("killed.har").path
        let journal = try HARJournal(path: path, toolVersion: "test")
        #expect((try FileManager.default.attributesOfItem(atPath: HARJournal.inflightPath(path))[.posixPermissions] as? Int).map { $0 & 0o777 } == 0o600)
        try journal.begin(0, exchange(0), incomplete: "stopped while streaming")
        try journal.begin(1, exchange(1), incomplete: "stopped during the WebSocket")
        try journal.message(1, WebSocketMessage(direction: .send, time: 1_700_000_001, opcode: 1, data: Data("hi".utf8)))
        try journal.begin(2, exchange(2), incomplete: "stopped while streaming")
        try journal.append(exchange(2), ending: 2)
        // Killed here: entry 2 is whole, 0 and 1 were going.
        #expect(try HARJournal.recover(path: path) == 3)
        #expect(!FileManager.default.fileExists(atPath: HARJournal.inflightPath(path)))
        let read = try HARImporter().recording(from: Data(contentsOf: URL(fileURLWithPath: path)), file: path, name: "killed")
        // The import orders them by start time: 0, 1, then 2.
        #expect(read.exchanges.map(\.request.url) == ["https://a.example/0", "https://a.example/1", "https://a.example/2"])
        #expect(read.exchanges[1].webSocketMessages.map(\.data) == [Data("hi".utf8)])
        let cuts = read.diagnostics.filter { $0.code == DiagnosticCode.responseIncomplete.rawValue }.map(\.message)
        #expect(cuts.count == 2 && cuts.contains { $0.contains("stopped during the WebSocket") }, "\(cuts)")

        // A session that ends normally leaves no side file.
        let whole = dir.appendingPathComponent("whole.har").path
        let finished = try HARJournal(path: whole, toolVersion: "test")
        try finished.begin(0, exchange(0), incomplete: "stopped")
        try finished.append(exchange(0), ending: 0)
        try finished.finish()
        #expect(!FileManager.default.fileExists(atPath: HARJournal.inflightPath(whole)))
    }
}

@Suite("HAR journal: what the recording proxy notes beside an exchange")
struct HARJournalNotesTests {
    static let messages = [
        WebSocketMessage(direction: .send, time: 1_700_000_001.5, opcode: 1, data: Data("hello".utf8)),
        WebSocketMessage(direction: .receive, time: 1_700_000_001.75, opcode: 2, data: Data([0, 1, 0xFF])),
    ]

    @Test("a cut response, a body kept up to the cap and a WebSocket's messages are read back from the journal")
    func notesRoundTrip() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-notes-\(UUID().uuidString).har").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let journal = try HARJournal(path: path, toolVersion: "test")
        let cut = Exchange(sequence: 0, startedAt: 1_700_000_000, request: RecordedRequest(method: "GET", url: "https://a.example/big"),
                           response: RecordedResponse(status: 200, body: Data("0123456789".utf8)))
        try journal.append(cut, incomplete: "the upstream a.example closed the connection after 10 of 1000 body bytes, before the response ended")
        let capped = Exchange(sequence: 1, startedAt: 1_700_000_000.5, request: RecordedRequest(method: "GET", url: "https://a.example/download"),
                              response: RecordedResponse(status: 200, body: Data(repeating: 7, count: 100)))
        try journal.append(capped, receivedBodyBytes: 5000)
        let socket = Exchange(sequence: 2, startedAt: 1_700_000_001, request: RecordedRequest(method: "GET", url: "https://a.example/chat", headers: [HeaderField("Upgrade", "websocket")]),
                              response: RecordedResponse(status: 101, headers: [HeaderField("Upgrade", "websocket")]), webSocketMessages: Self.messages)
        try journal.append(socket)
        try journal.finish()

        let read = try HARImporter().recording(from: Data(contentsOf: URL(fileURLWithPath: path)), file: path, name: "notes")
        #expect(read.exchanges.count == 3)
        let byURL = Dictionary(uniqueKeysWithValues: read.exchanges.map { ($0.request.url, $0) })
        #expect(byURL["https://a.example/big"]?.response.body == Data("0123456789".utf8))
        #expect(read.diagnostics.contains { $0.code == DiagnosticCode.responseIncomplete.rawValue && $0.message.contains("10 of 1000") })
        #expect(read.diagnostics.contains { $0.code == DiagnosticCode.responseBodyLimit.rawValue && $0.message.contains("first 100 of 5000 body bytes") })
        #expect(byURL["https://a.example/chat"]?.webSocketMessages == Self.messages)
        #expect(byURL["https://a.example/big"]?.webSocketMessages.isEmpty == true)
    }

    @Test("Chrome's _webSocketMessages are read; a message that does not read is left out with a note")
    func chromeMessages() throws {
        let har = #"""
            {"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"}, "pages": [], "entries": [
              {"startedDateTime": "2024-05-01T10:00:00.000Z", "time": 12, "_resourceType": "websocket",
               "request": {"method": "GET", "url": "wss://chat.example/socket", "httpVersion": "HTTP/1.1", "headers": [{"name": "Upgrade", "value": "websocket"}], "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
               "response": {"status": 101, "statusText": "Switching Protocols", "httpVersion": "HTTP/1.1", "headers": [], "cookies": [], "content": {"size": 0, "mimeType": "x-unknown"}, "redirectURL": "", "headersSize": -1, "bodySize": 0},
               "cache": {}, "timings": {"send": 0, "wait": 12, "receive": 0},
               "_webSocketMessages": [
                 {"type": "send", "time": 1714557600.5, "opcode": 1, "data": "{\"hello\":1}"},
                 {"type": "receive", "time": 1714557600.6, "opcode": 2, "data": "AAH/"},
                 {"type": "sideways", "time": 1714557600.7, "opcode": 1, "data": "?"}
               ]}
            ]}}
            """#
        let read = try HARImporter().recording(from: Data(har.utf8), file: "chrome.har", name: "chrome")
        let messages = try #require(read.exchanges.first).webSocketMessages
        #expect(messages == [
            WebSocketMessage(direction: .send, time: 1714557600.5, opcode: 1, data: Data(#"{"hello":1}"#.utf8)),
            WebSocketMessage(direction: .receive, time: 1714557600.6, opcode: 2, data: Data([0, 1, 0xFF])),
        ])
        #expect(read.diagnostics.contains { $0.message.contains("_webSocketMessages[2]") })
    }
}
