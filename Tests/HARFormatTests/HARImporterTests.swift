import Foundation
import HARFormat
import Testing
import TrafficModel

@Suite("HAR import: exporter quirks and errors")
struct HARImporterTests {
    func importing(_ json: String, file: String = "test.har") throws -> Recording {
        try HARImporter().recording(from: Data(json.utf8), file: file, name: "test")
    }

    func har(_ entries: String) -> String { #"{"log": {"version": "1.2", "entries": [\#(entries)]}}"# }

    func entry(url: String = "https://a.example/x", method: String = "GET", started: String = "2024-01-02T03:04:05.678Z", requestExtra: String = "", response: String = #""response": {"status": 200, "headers": [], "content": {"size": 0}}"#) -> String {
        #"{"startedDateTime": "\#(started)", "time": 12, "request": {"method": "\#(method)", "url": "\#(url)", "headers": [] \#(requestExtra)}, \#(response)}"#
    }

    @Test("headers may be objects or [name, value] pairs (Slack)")
    func headerForms() throws {
        let json = har(entry(requestExtra: #", "headers": [["X-A", "1"], {"name": "X-B", "value": "2"}]"#).replacingOccurrences(of: #""headers": [] ,"#, with: ""))
        let recording = try importing(json)
        #expect(recording.exchanges[0].request.headers == [HeaderField("X-A", "1"), HeaderField("X-B", "2")])
    }

    @Test("a Set-Cookie value of several lines (Chrome, Firefox, chrome-har) is several cookies; WebPagetest's line cut at its first ': ' is joined again")
    func foldedSetCookies() throws {
        let joined = #""response": {"status": 200, "headers": [{"name": "set-cookie", "value": "a=1; Path=/\nb=2; Domain=.a.example\r\n\nc=3"}, {"name": "Vary", "value": "Cookie"}], "content": {"size": 0}}"#
        #expect(try importing(har(entry(response: joined))).exchanges[0].response.headers.all("Set-Cookie") == ["a=1; Path=/", "b=2; Domain=.a.example", "c=3"])
        let cut = #""response": {"status": 200, "headers": [{"name": "set-cookie", "value": "GeoIP=US; Path=/"}, {"name": "WMF=29-Aug-2015;Path=/;HttpOnly;Expires=Wed, 30 Sep 2015 12", "value": "00:00 GMT"}, {"name": "vary", "value": "Cookie"}], "content": {"size": 0}}"#
        let headers = try importing(har(entry(response: cut))).exchanges[0].response.headers
        #expect(headers.all("Set-Cookie") == ["GeoIP=US; Path=/", "WMF=29-Aug-2015;Path=/;HttpOnly;Expires=Wed, 30 Sep 2015 12:00:00 GMT"])
        #expect(headers.first("Vary") == "Cookie", "a field after them stays as it was")
    }

    @Test("Chrome's internal redirect (307 with Non-Authoritative-Reason: HSTS) is skipped with a note: its https request starts the load")
    func browserInternalRedirect() throws {
        let hsts = entry(url: "http://a.example/ga.js", response: #""response": {"status": 307, "headers": [{"name": "Location", "value": "https://a.example/ga.js"}, {"name": "Non-Authoritative-Reason", "value": "HSTS"}], "content": {"size": 0}}"#)
        let real = entry(url: "https://a.example/ga.js", started: "2024-01-02T03:04:05.700Z")
        let recording = try importing(har(hsts + ", " + real))
        #expect(recording.exchanges.map(\.request.url) == ["https://a.example/ga.js"])
        #expect(recording.exchanges[0].redirect == nil, "no redirect chain: the web view upgrades before sending")
        #expect(recording.diagnostics.contains { $0.code == DiagnosticCode.entrySkipped.rawValue && $0.message.contains("Non-Authoritative-Reason: HSTS") })
        // A server's own 307 stays.
        let server = entry(url: "http://a.example/old", response: #""response": {"status": 307, "headers": [{"name": "Location", "value": "/new"}], "content": {"size": 0}}"#)
        #expect(try importing(har(server)).exchanges.count == 1)
    }

    @Test("E7: a browser's entry holding only provisional request headers (no Accept-Encoding, Host or Cookie) is no evidence of the jar; a proxy's is, and so is a browser's with the network stack's headers")
    func provisionalHeaders() throws {
        let provisional = entry(requestExtra: #", "headers": [{"name": "Referer", "value": "https://a.example/"}, {"name": "User-Agent", "value": "Chrome"}, {"name": "sec-ch-ua", "value": "x"}]"#).replacingOccurrences(of: #""headers": [] ,"#, with: "")
        let sent = entry(url: "https://a.example/y", requestExtra: #", "headers": [{"name": ":authority", "value": "a.example"}, {"name": "accept-encoding", "value": "gzip"}]"#).replacingOccurrences(of: #""headers": [] ,"#, with: "")
        func gaps(creator: String) throws -> [EvidenceGap?] {
            let json = #"{"log": {"version": "1.2", "creator": {"name": "\#(creator)", "version": "1"}, "entries": [\#(provisional), \#(sent)]}}"#
            return try importing(json).exchanges.map(\.evidenceGap)
        }
        #expect(try gaps(creator: "chrome-har") == [.provisionalHeaders, nil])
        #expect(try gaps(creator: "mitmproxy") == [nil, nil], "a proxy wrote what went on the wire")
        #expect(EvidenceGap.provisionalHeaders.rule == "E7")
    }

    @Test("entry times in nanoseconds (pcap2har-go) are read as nanoseconds, with a note, read whole or streamed; milliseconds stay as they are")
    func timeUnits() throws {
        func file(_ time: String) -> String {
            har([0, 1, 2].map { k in entry(url: "https://a.example/\(k)", started: "2024-01-02T03:04:0\(5 + k).000Z").replacingOccurrences(of: #""time": 12"#, with: #""time": \#(time)"#) }.joined(separator: ", "))
        }
        let nanoseconds = try importing(file("40000000"))
        #expect(nanoseconds.exchanges.map(\.duration) == [0.04, 0.04, 0.04])
        let note = try #require(nanoseconds.diagnostics.first { $0.code == DiagnosticCode.timeUnitCorrected.rawValue })
        #expect(note.message.contains("nanoseconds") && note.message.contains("11 h") && note.message.contains("40.0 ms"), "\(note.message)")
        var streamed: [Exchange] = []
        let bytes = Array(file("40000000").utf8)
        let end = try bytes.withUnsafeBufferPointer { raw in
            try HARImporter().stream(raw, file: "test.har", release: { _ in }) { exchange, _, _, _ in streamed.append(exchange) }
        }
        #expect(streamed.map(\.duration) == [0.04, 0.04, 0.04] && end.notes == [note])
        let milliseconds = try importing(file("40"))
        #expect(milliseconds.exchanges.map(\.duration) == [0.04, 0.04, 0.04] && !milliseconds.diagnostics.contains { $0.code == DiagnosticCode.timeUnitCorrected.rawValue })
    }

    @Test("a WebPagetest stamp that disagrees with its own mark (milliseconds rounded up to 1000, written \"29.1000\") is read from the mark, with a note, read whole or streamed")
    func pageTestStamps() throws {
        // Page start 07:52:24.656; entries at _load_start 0, 1000, 4344 and 5344 ms. The last
        // is stamped "29.1000", which ISO 8601 reads as 29.100 s; WebPagetest meant 30.000.
        let stamps = [("24.656", 0), ("25.656", 1000), ("29.000", 4344), ("29.1000", 5344)]
        let entries = stamps.enumerated().map { k, s in
            entry(url: "https://a.example/\(k)", started: "2018-01-14T07:52:\(s.0)+00:00").replacingOccurrences(of: #""time": 12"#, with: #""pageref": "page_1_0_1", "_load_start": \#(s.1), "time": 12"#)
        }
        let json = #"{"log": {"version": "1.2", "creator": {"name": "WebPagetest", "version": "17.12"}, "pages": [{"id": "page_1_0_1", "title": "Run 1, First View", "startedDateTime": "2018-01-14T07:52:24.656+00:00"}], "entries": [\#(entries.joined(separator: ", "))]}}"#
        let recording = try importing(json)
        let start = 1_515_916_344.656  // 2018-01-14T07:52:24.656Z
        #expect(recording.exchanges.map { (($0.startedAt - start) * 1000).rounded() } == [0, 1000, 4344, 5344])
        let note = try #require(recording.diagnostics.first { $0.code == DiagnosticCode.timeCorrected.rawValue })
        #expect(note.message.contains("entry 3"), "\(note.message)")
        var streamed: [Exchange] = []
        let bytes = Array(json.utf8)
        let end = try bytes.withUnsafeBufferPointer { raw in
            try HARImporter().stream(raw, file: "test.har", release: { _ in }) { exchange, _, _, _ in streamed.append(exchange) }
        }
        #expect(streamed.map { (($0.startedAt - start) * 1000).rounded() } == [0, 1000, 4344, 5344] && end.notes.contains(note))
    }

    @Test("a WebPagetest entry it could not time (0 ms in every mark) gets its host's median time, so its response does not arrive the moment it left; read whole or streamed, with a note")
    func pageTestPlaceholders() throws {
        // Three timed entries of a.example (30, 40, 50 ms), one of b.example (10 ms), and a
        // placeholder of each host.
        let marks = [("a", 0, 30), ("a", 100, 40), ("a", 200, 50), ("b", 300, 10), ("a", 400, 0), ("b", 500, 0)]
        let entries = marks.enumerated().map { k, m in
            entry(url: "https://\(m.0).example/\(k)", started: "2018-01-14T07:52:\((24_656 + m.1) / 1000).\(String(format: "%03d", (24_656 + m.1) % 1000))+00:00")
                .replacingOccurrences(of: #""time": 12"#, with: #""pageref": "page_1_0_1", "_load_start": \#(m.1), "_ttfb_end": \#(m.1 + m.2), "_load_end": \#(m.1 + m.2), "time": \#(m.2)"#)
        }
        let json = #"{"log": {"version": "1.2", "creator": {"name": "WebPagetest", "version": "17.12"}, "pages": [{"id": "page_1_0_1", "title": "Run 1, First View", "startedDateTime": "2018-01-14T07:52:24.656+00:00"}], "entries": [\#(entries.joined(separator: ", "))]}}"#
        let recording = try importing(json)
        let byPath = Dictionary(uniqueKeysWithValues: recording.exchanges.map { ($0.request.target!.path, $0) })
        #expect(byPath["/4"]?.responseStart == 0.04 && byPath["/4"]?.duration == 0.04)
        #expect(byPath["/5"]?.responseStart == 0.01)
        #expect(byPath["/0"]?.responseStart == 0.03, "a timed entry keeps its own marks")
        let note = try #require(recording.diagnostics.first { $0.code == DiagnosticCode.timeEstimated.rawValue })
        #expect(note.message.contains("entry 4: 40 ms") && note.message.contains("entry 5: 10 ms"), "\(note.message)")
        var streamed: [Exchange] = []
        let bytes = Array(json.utf8)
        let end = try bytes.withUnsafeBufferPointer { raw in
            try HARImporter().stream(raw, file: "test.har", release: { _ in }) { exchange, _, _, _ in streamed.append(exchange) }
        }
        #expect(streamed.first { $0.request.target?.path == "/4" }?.responseStart == 0.04 && end.notes.contains(note))
    }

    @Test("entries stamped in the same millisecond take the order the browser issued them in (its request ids), not the file's, read whole or streamed")
    func sameMillisecondIssueOrder() throws {
        // As WebPagetest writes a burst: file order .221, .220, .217, .219, all at one stamp,
        // and a later redirect hop of .217.
        let ids = ["95262.221", "95262.220", "95262.217", "95262.219"]
        var entries = ids.map { id in
            entry(url: "https://a.example/\(id)", started: "2018-01-14T07:52:29.457+00:00").replacingOccurrences(of: #""time": 12"#, with: #""_request_id": "\#(id)", "time": 12"#)
        }
        entries.append(entry(url: "https://a.example/hop", started: "2018-01-14T07:52:29.457+00:00").replacingOccurrences(of: #""time": 12"#, with: #""_requestId": "95262.217-1", "time": 12"#))
        let json = har(entries.joined(separator: ", "))
        let expected = ["/95262.217", "/hop", "/95262.219", "/95262.220", "/95262.221"]
        #expect(try importing(json).exchanges.map { $0.request.target!.path } == expected)
        var streamed: [String] = []
        let bytes = Array(json.utf8)
        _ = try bytes.withUnsafeBufferPointer { raw in
            try HARImporter().stream(raw, file: "test.har", release: { _ in }) { exchange, _, _, _ in streamed.append(exchange.request.target!.path) }
        }
        #expect(streamed == expected)
    }

    @Test("a REST client's export (Insomnia) is the tool's traffic, none a page's: every request native (NC1), said once, read whole or streamed")
    func nonBrowserClient() throws {
        func file(_ creator: String) -> String {
            #"{"log": {"version": "1.2", "creator": {"name": "\#(creator)", "version": "1"}, "entries": [\#(entry(url: "https://api.example/v1/me"))]}}"#
        }
        let tool = try importing(file("Insomnia REST Client"))
        #expect(tool.exchanges.map(\.initiator) == [.native])
        #expect(tool.diagnostics.map(\.code) == [DiagnosticCode.nonBrowserClient.rawValue], "\(tool.diagnostics)")
        var streamed: [(Exchange, ExchangeClassifier.Traits?)] = []
        let bytes = Array(file("Insomnia REST Client").utf8)
        let end = try bytes.withUnsafeBufferPointer { raw in
            try HARImporter().stream(raw, file: "test.har", release: { _ in }) { exchange, traits, _, _ in streamed.append((exchange, traits)) }
        }
        #expect(streamed.map { $0.1?.initiator } == [.native] && end.notes.map(\.code) == [DiagnosticCode.nonBrowserClient.rawValue])
        #expect(try importing(file("WebInspector")).exchanges.map(\.initiator) != [.native])
    }

    @Test("base64 response content is decoded to the exact bytes")
    func base64Content() throws {
        let bytes = Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF])
        let json = har(entry(response: #""response": {"status": 200, "headers": [], "content": {"size": 6, "encoding": "base64", "text": "\#(bytes.base64EncodedString())"}}"#))
        #expect(try importing(json).exchanges[0].response.body == bytes)
    }

    @Test("a body is rebuilt from postData.params when text is missing")
    func paramsRebuild() throws {
        let json = har(entry(method: "POST", requestExtra: #", "postData": {"mimeType": "application/x-www-form-urlencoded", "params": [{"name": "q", "value": "a b&c"}, {"name": "n", "value": "1"}]}"#))
        let body = try importing(json).exchanges[0].request.body
        #expect(String(decoding: body, as: UTF8.self) == "q=a+b%26c&n=1")
    }

    @Test("multipart params keep their file parts")
    func multipartParams() throws {
        let json = har(entry(method: "POST", requestExtra: #", "headers": [{"name": "Content-Type", "value": "multipart/form-data; boundary=XyZ"}], "postData": {"mimeType": "multipart/form-data; boundary=XyZ", "params": [{"name": "f", "fileName": "a.png", "contentType": "image/png", "value": "PNG"}]}"#).replacingOccurrences(of: #""headers": [] ,"#, with: ""))
        let exchange = try importing(json).exchanges[0]
        let text = String(decoding: exchange.request.body, as: UTF8.self)
        #expect(text.hasPrefix("--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.png\""))
        #expect(exchange.bodyKind == .formDataWithFile)
    }

    @Test("a UTF-8 byte-order mark, -1 sizes and missing timings are accepted")
    func bomAndUnknownSizes() throws {
        let json = "\u{FEFF}" + har(#"{"startedDateTime": "2024-01-02T03:04:05+02:00", "time": -1, "request": {"method": "GET", "url": "http://a.example/", "headers": [], "headersSize": -1, "bodySize": -1}, "response": {"status": 200, "headers": [], "content": {"size": -1}, "bodySize": -1}}"#)
        let exchange = try importing(json).exchanges[0]
        #expect(exchange.duration == 0)
        #expect(exchange.startedAt == 1_704_157_445)  // 01:04:05 UTC
        #expect(exchange.response.encodedLength == nil)
    }

    @Test("a HAR of many batches imports in entry order, each odd entry named by its own index")
    func manyBatches() throws {
        var entries: [String] = []
        for k in 0..<1500 {
            let second = String(format: "%02d", k % 60), minute = String(format: "%02d", k / 60)
            switch k {
            case 700: entries.append(#"{"startedDateTime": "2024-01-02T03:00:00Z", "request": {"url": "https://a.example/700", "headers": []}}"#)
            case 1200: entries.append(#"{"request": {"method": "GET", "url": "https://a.example/1200", "headers": []}, "response": {"status": 200, "headers": [], "content": {"size": 0}}}"#)
            default: entries.append(#"{"startedDateTime": "2024-01-02T03:\#(minute):\#(second)Z", "time": 1, "request": {"method": "GET", "url": "https://a.example/\#(k)", "headers": [{"name": "X-K", "value": "\#(k)"}]}, "response": {"status": 200, "headers": [], "content": {"size": 0}}}"#)
            }
        }
        let recording = try importing(har(entries.joined(separator: ",")))
        #expect(recording.exchanges.count == 1499)
        // Entry order is time order here; the entry without a time sits after entry 1199.
        let urls = recording.exchanges.map(\.request.url)
        #expect(urls.prefix(3) == ["https://a.example/0", "https://a.example/1", "https://a.example/2"])
        let at1200 = try #require(urls.firstIndex(of: "https://a.example/1200"))
        #expect(urls[at1200 - 1] == "https://a.example/1199")
        #expect(recording.exchanges[at1200].request.headers.isEmpty && recording.exchanges[at1200 - 1].request.headers.first("X-K") == "1199")
        let invalid = recording.diagnostics.filter { $0.code == DiagnosticCode.entryInvalid.rawValue }
        #expect(invalid.map(\.message) == ["log.entries[700].request.method: missing (a string is required); the entry is skipped"])
        let missingTime = recording.diagnostics.filter { $0.code == DiagnosticCode.timeMissing.rawValue }
        #expect(missingTime.count == 1 && missingTime[0].sequence == at1200)
    }

    /// Entries over several batches, a redirect every fiftieth, in time order; with
    /// `late`, one more entry, earlier than all and a document of another site, sits at
    /// file position `late`.
    func batchedEntries(late: Int?) -> [String] {
        var entries: [String] = []
        for k in 0..<1400 {
            let time = "2024-01-02T03:\(String(format: "%02d", k / 60)):\(String(format: "%02d", k % 60))Z"
            if k % 50 == 0 {
                entries.append(entry(url: "https://a.example/\(k)", started: time, response: #""response": {"status": 302, "headers": [{"name": "Location", "value": "/after-\#(k)"}], "content": {"size": 0}}"#))
            } else if k % 50 == 1 {
                entries.append(entry(url: "https://a.example/after-\(k - 1)", started: time))
            } else {
                entries.append(entry(url: "https://a.example/\(k)", started: time))
            }
        }
        if let late {
            let document = #"{"startedDateTime": "2024-01-02T02:00:00Z", "time": 1, "request": {"method": "GET", "url": "https://b.example/", "headers": [{"name": "Sec-Fetch-Dest", "value": "document"}]}, "response": {"status": 200, "headers": [], "content": {"size": 0}}}"#
            entries.insert(document, at: late)
        }
        return entries
    }

    @Test("entries that leave time order after many batches import as the same entries written in time order", arguments: [1_300, 3, 700])
    func orderBrokenLate(_ late: Int) throws {
        let shuffled = try importing(har(batchedEntries(late: late).joined(separator: ",")))
        let ordered = try importing(har(batchedEntries(late: 0).joined(separator: ",")))
        #expect(shuffled.exchanges.count == 1401)
        #expect(shuffled.exchanges == ordered.exchanges)
        // The early document of b.example is the top-level site: a.example is third party.
        #expect(shuffled.exchanges[0].request.url == "https://b.example/" && shuffled.exchanges[1].frame.thirdParty)
        #expect(shuffled.exchanges[1].redirect == RedirectLink(chainStart: 1, hop: 0, next: 2))
        #expect(shuffled.exchanges.map(\.sequence) == Array(0..<1401))
    }

    @Test("entries in time order over many batches are classified as they arrive: redirects linked, sequences in order")
    func inOrderClassified() throws {
        let recording = try importing(har(batchedEntries(late: nil).joined(separator: ",")))
        #expect(recording.exchanges.count == 1400)
        #expect(recording.exchanges.map(\.sequence) == Array(0..<1400))
        for k in stride(from: 0, to: 1400, by: 50) {
            #expect(recording.exchanges[k].redirect == RedirectLink(chainStart: k, hop: 0, next: k + 1))
            #expect(recording.exchanges[k + 1].redirect == RedirectLink(chainStart: k, hop: 1, next: nil))
        }
        #expect(recording.exchanges.filter { $0.redirect != nil }.count == 56)
    }

    @Test("a HAR cut off after many batches is refused as invalid JSON, naming the place")
    func truncatedAfterBatches() throws {
        let whole = har(batchedEntries(late: nil).joined(separator: ","))
        let cut = String(whole.prefix(whole.utf8.count * 9 / 10))
        #expect {
            try importing(cut, file: "cut.har")
        } throws: { error in
            let description = "\(error)"
            return description.contains("cut.har") && description.contains("not valid JSON") && description.contains("line 1")
        }
    }

    @Test("startedDateTime in the forms exporters write", arguments: [
        ("2024-01-02T03:04:05.678Z", 1_704_164_645.678), ("2024-01-02T03:04:05Z", 1_704_164_645.0),
        ("2024-01-02T03:04:05.123456-0100", 1_704_168_245.123456), ("2024-01-02 03:04:05", 1_704_164_645.0),
    ])
    func dates(_ text: String, _ expected: Double) throws {
        let recording = try importing(har(entry(started: text)))
        #expect(abs(recording.exchanges[0].startedAt - expected) < 0.000_5)
    }

    @Test("a missing response body is kept empty with a diagnostic")
    func missingBody() throws {
        let recording = try importing(har(entry(response: #""response": {"status": 200, "headers": [], "content": {"size": 120, "mimeType": "image/png"}}"#)))
        #expect(recording.exchanges[0].response.bodyMissing)
        #expect(recording.diagnostics.contains { $0.code == "response-body-missing" && $0.sequence == 0 })
    }

    @Test("redirectURL stands in for a missing Location header")
    func redirectURL() throws {
        let json = har([
            entry(url: "https://a.example/old", response: #""response": {"status": 302, "headers": [], "redirectURL": "/new", "content": {}}"#),
            entry(url: "https://a.example/new", started: "2024-01-02T03:04:06Z"),
        ].joined(separator: ","))
        let recording = try importing(json)
        #expect(recording.exchanges[0].redirect == RedirectLink(chainStart: 0, hop: 0, next: 1))
        #expect(recording.exchanges[1].redirect?.hop == 1)
    }

    @Test("entries are ordered by start time")
    func timeOrder() throws {
        let json = har([entry(url: "https://a.example/second", started: "2024-01-02T03:04:06Z"), entry(url: "https://a.example/first")].joined(separator: ","))
        let recording = try importing(json)
        #expect(recording.exchanges.map(\.request.url) == ["https://a.example/first", "https://a.example/second"])
        #expect(recording.exchanges.map(\.sequence) == [0, 1])
    }

    @Test("an odd entry is skipped with a diagnostic naming log.entries[N] and the field; the others import", arguments: [
        (#"{"startedDateTime": "2024-01-02T03:04:05Z", "request": {"method": "GET", "url": "https://a/", "headers": [["Only-Name"]]}, "response": {"status": 200, "headers": []}}"#, "log.entries[1].request.headers[0]"),
        (#"{"startedDateTime": "2024-01-02T03:04:05Z", "request": {"method": "GET", "url": "https://a/", "headers": []}, "response": {"status": "OK", "headers": []}}"#, "log.entries[1].response.status"),
        (#"{"startedDateTime": "yesterday", "request": {"method": "GET", "url": "https://a/", "headers": []}}"#, "log.entries[1].startedDateTime"),
        (#"{"startedDateTime": "2024-01-02T03:04:05Z", "request": {"method": "GET", "url": 7, "headers": []}}"#, "log.entries[1].request.url"),
        (#"{"startedDateTime": "2024-01-02T03:04:05Z", "request": {"method": "GET", "url": "https://a/", "headers": []}, "response": {"status": 200, "headers": [], "content": {"encoding": "base64", "text": "!!!"}}}"#, "log.entries[1].response.content.text"),
    ])
    func oddEntrySkipped(_ odd: String, _ field: String) throws {
        let recording = try importing(har([entry(url: "https://a.example/good"), odd, entry(url: "https://a.example/also-good")].joined(separator: ",")), file: "broken.har")
        #expect(recording.exchanges.map(\.request.url) == ["https://a.example/good", "https://a.example/also-good"])
        let diagnostic = try #require(recording.diagnostics.first { $0.code == DiagnosticCode.entryInvalid.rawValue })
        #expect(diagnostic.message.hasPrefix(field + ": "))
        #expect(diagnostic.message.hasSuffix("the entry is skipped"))
    }

    @Test("Polly.js: header values as arrays and numbers, binary bodies as hex and as hex chunks of gzip bytes")
    func pollyQuirks() throws {
        let headers = #"[{"name": "set-cookie", "value": ["a=1; Path=/", "b=2"]}, {"name": "content-length", "value": 5}]"#
        let plain = har(entry(response: #""response": {"status": 200, "headers": \#(headers), "content": {"size": 5, "_isBinary": true, "text": "68656c6c6f"}}"#))
        let exchange = try importing(plain).exchanges[0]
        #expect(exchange.response.headers == [HeaderField("set-cookie", "a=1; Path=/"), HeaderField("set-cookie", "b=2"), HeaderField("content-length", "5")])
        #expect(exchange.response.body == Data("hello".utf8))

        // gzip of "hello, polly", split into two hex chunks as Polly's node-http adapter writes it.
        let gzip: [UInt8] = [0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0xd7, 0x51, 0x28, 0xc8, 0xcf, 0xc9, 0xa9, 0x04, 0x00, 0x89, 0x4c, 0x35, 0x38, 0x0c, 0x00, 0x00, 0x00]
        let hex = gzip.map { String(format: "%02x", $0) }.joined()
        let half = hex.index(hex.startIndex, offsetBy: 20)
        let chunks = #"[\"\#(hex[..<half])\", \"\#(hex[half...])\"]"#
        let coded = har(entry(response: #""response": {"status": 200, "headers": [{"name": "Content-Encoding", "value": ["gzip"]}], "content": {"size": 12, "_isBinary": true, "text": "\#(chunks)"}}"#))
        #expect(try importing(coded).exchanges[0].response.body == Data("hello, polly".utf8))
    }

    @Test("Playwright: bodies in side files beside the HAR, never outside its folder")
    func playwrightSideFiles() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-har-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("{\"ok\":true}".utf8).write(to: dir.appendingPathComponent("75f1.json"))
        try Data("name=a".utf8).write(to: dir.appendingPathComponent("9a0c.dat"))
        let file = dir.appendingPathComponent("flow.har").path
        let json = har([
            entry(method: "POST", requestExtra: #", "postData": {"mimeType": "application/x-www-form-urlencoded", "_file": "9a0c.dat"}"#, response: #""response": {"status": 200, "headers": [], "content": {"size": 11, "mimeType": "application/json", "_file": "75f1.json"}}"#),
            entry(url: "https://a.example/gone", response: #""response": {"status": 200, "headers": [], "content": {"size": 4, "_file": "missing.bin"}}"#),
            entry(url: "https://a.example/escape", response: #""response": {"status": 200, "headers": [], "content": {"size": 4, "_file": "../etc/passwd"}}"#),
        ].joined(separator: ","))
        let recording = try importing(json, file: file)
        #expect(recording.exchanges[0].request.body == Data("name=a".utf8))
        #expect(recording.exchanges[0].response.body == Data("{\"ok\":true}".utf8))
        #expect(recording.exchanges[1].response.bodyMissing)
        #expect(recording.exchanges[2].response.bodyMissing)
        let missing = recording.diagnostics.filter { $0.code == DiagnosticCode.responseBodyMissing.rawValue }.map(\.message)
        #expect(missing.contains { $0.contains("missing.bin") })
        #expect(missing.contains { $0.contains("../etc/passwd") })
    }

    @Test("Proxyman and recorders that lose data: a dropped request body and status -1 are said, not guessed")
    func droppedData() throws {
        let json = har([
            entry(method: "POST", requestExtra: #", "bodySize": 2048"#),
            entry(url: "https://a.example/none", response: #""response": {"status": -1, "httpVersion": "HTTP/x.x", "headers": [], "content": {"size": -1}}"#),
        ].joined(separator: ","))
        let recording = try importing(json)
        #expect(recording.diagnostics.contains { $0.code == DiagnosticCode.requestBodyMissing.rawValue && $0.message.contains("2048") })
        let none = try #require(recording.exchanges.first { $0.request.url.hasSuffix("/none") })
        #expect(none.response.status == 0)
        #expect(none.response.httpVersion == "HTTP/1.1")
        #expect(none.evidenceGap == .noResponse)
    }

    @Test("an entry with no response is no evidence of cookies from a browser's export (E1), and is from a proxy's or a capture converter's", arguments: [
        ("WebInspector", EvidenceGap?.some(.noResponse)), ("Firefox", .noResponse), (nil, .noResponse),
        ("mitmproxy", nil), ("Charles Proxy", nil), ("pcap2har", nil), ("h5replay", nil),
    ] as [(String?, EvidenceGap?)])
    func noResponseByRecorder(creator: String?, gap: EvidenceGap?) throws {
        let withCookie = entry(url: "https://a.example/sent", requestExtra: #", "headers": [{"name": "Cookie", "value": "sid=1"}]"#, response: #""response": {"status": 0, "headers": [], "content": {"size": 0}}"#)
            .replacingOccurrences(of: #""headers": [] ,"#, with: "")
        let noHeaders = entry(url: "https://a.example/bare", started: "2024-01-02T03:04:06Z", response: #""response": {"status": 0, "headers": [], "content": {"size": 0}}"#)
        // The creator after the entries, as some exporters write it: read all the same.
        let creator = creator.map { #", "creator": {"name": "\#($0)", "version": "1"}"# } ?? ""
        let json = #"{"log": {"version": "1.2", "entries": [\#(withCookie), \#(noHeaders)]\#(creator)}}"#
        var streamed: [Exchange] = []
        let bytes = Array(json.utf8)
        _ = try bytes.withUnsafeBufferPointer { raw in
            try HARImporter().stream(raw, file: "test.har", release: { _ in }) { exchange, _, _, _ in streamed.append(exchange) }
        }
        for exchanges in [try importing(json).exchanges, streamed] {
            let sent = try #require(exchanges.first { $0.request.url.hasSuffix("/sent") })
            #expect(sent.evidenceGap == gap, "\(creator): the request with a Cookie header")
            // With no request headers at all, neither kind of recorder says what was sent (E2 at least).
            let bare = try #require(exchanges.first { $0.request.url.hasSuffix("/bare") })
            #expect(bare.evidenceGap == gap ?? .noRequestHeaders)
        }
    }

    @Test("an entry a browser's cache or a service worker served is no evidence of cookies (E3), in each exporter's words")
    func servedWithoutNetwork() throws {
        let plain = #""response": {"status": 200, "httpVersion": "HTTP/1.1", "headers": [{"name": "Content-Type", "value": "text/css"}], "content": {"size": 0}}"#
        let entries = [
            (entry(url: "https://a.example/chrome-cache").replacingOccurrences(of: #""time": 12,"#, with: #""time": 12, "_fromCache": "disk","#), true),
            (entry(url: "https://a.example/chrome-worker", response: #""response": {"status": 200, "headers": [], "content": {"size": 0}, "_fetchedViaServiceWorker": true}"#), true),
            (entry(url: "https://a.example/chrome-network", response: #""response": {"status": 200, "headers": [], "content": {"size": 0}, "_fetchedViaServiceWorker": false}"#), false),
            (entry(url: "https://a.example/webkit-memory").replacingOccurrences(of: #""time": 12,"#, with: #""time": 12, "_fetchType": "Memory Cache","#), true),
            (entry(url: "https://a.example/webkit-worker").replacingOccurrences(of: #""time": 12,"#, with: #""time": 12, "_fetchType": "Service Worker","#), true),
            (entry(url: "https://a.example/webkit-network", response: plain).replacingOccurrences(of: #""time": 12,"#, with: #""time": 12, "_fetchType": "Network Load","#), false),
            (entry(url: "https://a.example/firefox-cache", response: #""response": {"status": 200, "httpVersion": "", "headers": [], "content": {"size": 0}}"#).replacingOccurrences(of: #""time": 12,"#, with: #""time": 12, "timings": {},"#), true),
            (entry(url: "https://a.example/firefox-network", response: plain).replacingOccurrences(of: #""time": 12,"#, with: #""time": 12, "timings": {"send": 0, "wait": 5, "receive": 1},"#), false),
        ]
        let recording = try importing(har(entries.map { $0.0.replacingOccurrences(of: #""headers": [] "#, with: #""headers": [{"name": "Accept", "value": "*/*"}] "#) }.joined(separator: ",")))
        for (json, cached) in entries {
            let url = try #require(json.firstMatch(of: /"url": "([^"]+)"/)).1
            let exchange = try #require(recording.exchanges.first { $0.request.url == url })
            #expect((exchange.evidenceGap == .fromCache) == cached, "\(url): \(String(describing: exchange.evidenceGap))")
        }
    }

    @Test("a file that is not JSON, or JSON without log.entries, is rejected")
    func notAHAR() throws {
        #expect(throws: HARImportError.self) { try importing("{\"log\": ") }
        #expect(throws: HARImportError.self) { try importing("{\"log\": {}}") }
        #expect(throws: HARImportError.self) { try importing("[1, 2]") }
    }

    @Test("the HAR size limit is enforced before parsing")
    func sizeLimit() throws {
        let error = try #require(throws: HARImportError.self) {
            try HARImporter(maxFileBytes: 10).recording(from: Data(har(entry()).utf8), file: "big.har", name: "big")
        }
        #expect(error.description.contains("size limit"))
    }
}
