import Foundation
import HARFormat
import Testing
import TrafficModel

/// Imports every real export in mitmproxy's HAR test data and compares each exchange with
/// mitmproxy's own parse of it (the `.json` beside each `.har`).
@Suite("HAR conformance: mitmproxy's real exports")
struct HARConformanceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let data = root.appendingPathComponent("../shared/conformance/har-mitmproxy/test/mitmproxy/data").standardizedFileURL
    static var present: Bool { FileManager.default.fileExists(atPath: data.path) }

    static var harFiles: [String] {
        guard present else { return [] }
        let dir = data.appendingPathComponent("har_files")
        return ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { $0.hasSuffix(".har") }.sorted()
    }

    @Test("every export matches mitmproxy's parse", .enabled(if: present, "../shared/conformance is not here"), arguments: harFiles)
    func export(_ file: String) throws {
        let harURL = Self.data.appendingPathComponent("har_files/\(file)")
        let expectedURL = harURL.deletingPathExtension().appendingPathExtension("json")
        let recording = try HARImporter().recording(from: Data(contentsOf: harURL), file: file, name: file)
        let expected = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: expectedURL)) as? [[String: Any]])
        // mitmproxy keeps entry order; h5replay orders by start time (stable), as does the expectation's timestamps.
        let ordered = expected.enumerated().sorted {
            let a = (($0.element["request"] as? [String: Any])?["timestamp_start"] as? Double) ?? 0
            let b = (($1.element["request"] as? [String: Any])?["timestamp_start"] as? Double) ?? 0
            return (a, $0.offset) < (b, $1.offset)
        }.map(\.element)
        #expect(recording.exchanges.count == ordered.count)
        for (exchange, flow) in zip(recording.exchanges, ordered) {
            let request = try #require(flow["request"] as? [String: Any])
            let response = try #require(flow["response"] as? [String: Any])
            let target = try #require(exchange.request.target)
            let place = "\(file) #\(exchange.sequence) \(exchange.request.url.prefix(60))"
            #expect(exchange.request.method == request["method"] as? String, "\(place): method")
            #expect(target.scheme == request["scheme"] as? String, "\(place): scheme")
            #expect(target.host == request["host"] as? String, "\(place): host")
            #expect(target.port == request["port"] as? Int, "\(place): port")
            #expect(target.pathAndQuery == request["path"] as? String, "\(place): path")
            #expect(Self.comparable(exchange.request.headers.map { [$0.name, $0.value] }) == Self.comparable(request["headers"] as? [[String]]), "\(place): request headers")
            #expect(exchange.request.body.count == request["contentLength"] as? Int, "\(place): request body length")
            #expect(exchange.request.body.sha256Hex == request["contentHash"] as? String, "\(place): request body SHA-256")
            #expect(exchange.response.status == response["status_code"] as? Int, "\(place): status")
            #expect(Self.comparable(exchange.response.headers.map { [$0.name, $0.value] }) == Self.comparable(response["headers"] as? [[String]]), "\(place): response headers")
            #expect(exchange.response.body.count == response["contentLength"] as? Int, "\(place): response body length")
            #expect(exchange.response.body.sha256Hex == response["contentHash"] as? String, "\(place): response body SHA-256")
        }
    }

    /// Headers in order, without the two that mitmproxy rewrites in its own flow when it
    /// re-encodes and then decodes the body (it appends Content-Length and drops
    /// Content-Encoding). h5replay keeps the headers exactly as the HAR recorded them.
    static func comparable(_ headers: [[String]]?) -> [[String]] {
        (headers ?? []).filter { !["content-length", "content-encoding"].contains($0.first?.lowercased() ?? "") }
    }

    @Test("docs/design.md gives the conformance figures as they are", .enabled(if: present, "../shared/conformance is not here"))
    func readmeFigures() throws {
        var files = 0
        var exchanges = 0
        for file in Self.harFiles {
            let url = Self.data.appendingPathComponent("har_files/\(file)")
            guard let recording = try? HARImporter().recording(from: Data(contentsOf: url), file: file, name: file) else { continue }
            files += 1
            exchanges += recording.exchanges.count
        }
        let readme = try String(contentsOf: Self.root.appendingPathComponent("docs/design.md"), encoding: .utf8).replacingOccurrences(of: "\n", with: " ")
        #expect(files == Self.harFiles.count)
        let saysFiles = readme.contains("all \(files) real exports in mitmproxy's HAR test data")
        let saysExchanges = readme.contains("\(exchanges) exchanges) match mitmproxy's own parse")
        #expect(saysFiles, "docs/design.md should say: all \(files) real exports in mitmproxy's HAR test data")
        #expect(saysExchanges, "docs/design.md should say: \(exchanges) exchanges) match mitmproxy's own parse")
    }

    @Test("the corrupted files are rejected, naming the file", .enabled(if: present, "../shared/conformance is not here"), arguments: ["brokenfile.har", "broken_headers.json"])
    func corrupted(_ file: String) throws {
        let url = Self.data.appendingPathComponent("corrupted_har/\(file)")
        let error = try #require(throws: HARImportError.self) {
            try HARImporter().recording(from: Data(contentsOf: url), file: file, name: "x")
        }
        #expect(error.description.hasPrefix(file))
    }
}
