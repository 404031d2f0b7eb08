import Foundation
import RecordingProxy
import Testing

/// HTTP/2 where the client offers it: inside an intercepted CONNECT the proxy agrees on h2
/// by ALPN, maps each stream to an exchange, and speaks HTTP/1.1 to the upstream; the
/// recording says which protocol each side used.
@Suite("Recording proxy: HTTP/2 with the client", .serialized)
struct HTTP2Tests {
    static let curl = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
        .map { "\($0)/curl" }.first { FileManager.default.isExecutableFile(atPath: $0) }

    /// curl's exit status and standard output.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(curl))
        process.arguments = ["-sS", "--max-time", "20"] + arguments
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    @Test("curl --http2 through CONNECT: h2 with the client, two requests on one connection and one upstream connection, each recorded as HTTP/2 from the client and HTTP/1.1 upstream",
          .enabled(if: curl != nil, "curl is not installed"))
    func curlOverH2() throws {
        let proxy = try ProxyUnderTest()
        defer { proxy.stop() }
        let origin = try ScriptedOrigin([.send("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello")],
                                        tls: try http1Context(proxy.ca, for: "localhost"))
        defer { origin.stop() }
        let base = "https://localhost:\(origin.port)"
        let result = try Self.run(["--http2", "--cacert", proxy.ca.files.certificate, "-x", "http://127.0.0.1:\(proxy.port)",
                                   "-w", " %{http_version}\n", "\(base)/one", "\(base)/two"])
        #expect(result.status == 0)
        #expect(result.output == "hello 2\nhello 2\n", "\(result.output)")

        let reported = proxy.exchanges(2)
        #expect(reported.count == 2)
        let urls = Set(reported.map(\.exchange.request.url))
        #expect(urls == ["\(base)/one", "\(base)/two"])
        for item in reported {
            #expect(item.exchange.request.httpVersion == "HTTP/2")
            #expect(item.exchange.response.httpVersion == "HTTP/1.1")
            #expect(item.exchange.response.body == Data("hello".utf8))
            #expect(item.failure == nil && item.incomplete == nil)
        }
        // Both streams rode one client connection (one connection ID), and the second
        // took the upstream connection the first left idle.
        #expect(Set(reported.map(\.exchange.connectionID)).count == 1)
        #expect(origin.accepted.withLockedValue { $0 } == 1, "\(origin.accepted.withLockedValue { $0 }) upstream connections for two streams")
    }

    @Test("an HTTP/2 client resets one stream mid-response: the proxy stays up, records that stream as aborted, and the connection's other stream gets its whole body",
          .enabled(if: curl != nil, "curl is not installed"))
    func resetStream() throws {
        let proxy = try ProxyUnderTest()
        defer { proxy.stop() }
        let origin = try ScriptedOrigin([.send("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 3145728\r\n\r\n"),
                                         .megabytes(1), .pause(0.5), .megabytes(2)],
                                        tls: try http1Context(proxy.ca, for: "localhost"))
        defer { origin.stop() }
        let base = "https://localhost:\(origin.port)"
        let common = ["--http2", "--cacert", proxy.ca.files.certificate, "-x", "http://127.0.0.1:\(proxy.port)", "-o", "/dev/null", "-w", "%{http_code} %{size_download}\n"]
        // --max-filesize: curl gives the first transfer up at its head and resets its stream;
        // the second goes on over the same connection (--parallel multiplexes them).
        let result = try Self.run(["--parallel"] + common + ["--max-filesize", "1000", "\(base)/reset", "--next"] + common + ["\(base)/whole"])
        #expect(result.output.contains("200 3145728"), "\(result.output)")

        let reported = proxy.exchanges(2)
        let reset = reported.first { $0.exchange.request.url.hasSuffix("/reset") }
        #expect(reset?.incomplete?.contains("aborted") == true, "\(String(describing: reset?.incomplete))")
        let whole = reported.first { $0.exchange.request.url.hasSuffix("/whole") }
        #expect(whole?.incomplete == nil && whole?.exchange.response.encodedLength == 3_145_728)
    }

    @Test("curl --http2 to an upstream that refuses: the stream gets the 502 naming it", .enabled(if: curl != nil, "curl is not installed"))
    func refusedOverH2() throws {
        let proxy = try ProxyUnderTest()
        defer { proxy.stop() }
        let gone = try ScriptedOrigin([])
        let port = gone.port
        gone.stop()
        let result = try Self.run(["--http2", "--cacert", proxy.ca.files.certificate, "-x", "http://127.0.0.1:\(proxy.port)",
                                   "-w", "%{http_code} %{http_version}", "https://localhost:\(port)/x"])
        #expect(result.output.hasSuffix("502 2"), "\(result.output)")
        #expect(result.output.contains("refused the connection"), "\(result.output)")
    }
}
