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

    @Test("malformed HARs are rejected naming the file, entry and field", arguments: [
        (#"{"log": {"entries": [{"startedDateTime": "2024-01-02T03:04:05Z", "request": {"method": "GET", "url": "https://a/", "headers": [["Only-Name"]]}, "response": {"status": 200, "headers": []}}]}}"#, 0, "log.entries[0].request.headers[0]"),
        (#"{"log": {"entries": [{"startedDateTime": "2024-01-02T03:04:05Z", "request": {"method": "GET", "url": "https://a/", "headers": []}, "response": {"status": "OK", "headers": []}}]}}"#, 0, "log.entries[0].response.status"),
        (#"{"log": {"entries": [{"startedDateTime": "yesterday", "request": {"method": "GET", "url": "https://a/", "headers": []}}]}}"#, 0, "log.entries[0].startedDateTime"),
        (#"{"log": {"entries": [{"startedDateTime": "2024-01-02T03:04:05Z", "request": {"method": "GET", "url": "https://a/", "headers": []}}, {"startedDateTime": "2024-01-02T03:04:05Z", "request": {"method": "GET", "url": 7, "headers": []}}]}}"#, 1, "log.entries[1].request.url"),
        (#"{"log": {"entries": [{"startedDateTime": "2024-01-02T03:04:05Z", "request": {"method": "GET", "url": "https://a/", "headers": []}, "response": {"status": 200, "headers": [], "content": {"encoding": "base64", "text": "!!!"}}}]}}"#, 0, "log.entries[0].response.content.text"),
    ])
    func malformed(_ json: String, _ entryIndex: Int, _ field: String) throws {
        let error = try #require(throws: HARImportError.self) { try importing(json, file: "broken.har") }
        #expect(error.file == "broken.har")
        #expect(error.entryIndex == entryIndex)
        #expect(error.field == field)
        #expect(error.description.hasPrefix("broken.har: entry \(entryIndex): \(field): "))
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
