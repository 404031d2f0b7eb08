import Foundation
import HTTPWire
import Testing
import TrafficModel
@testable import PacketCapture

/// The framing corpus (Tests/PacketCaptureTests/Framing/corpus.json): raw responses with
/// the framing and coding oddities real servers send, each with what headless Chromium and
/// WebKitGTK handed the page (Tools/framing/record). A capture's tolerant decoding must
/// hand the recording what one of those engines handed the page, and say which when they
/// differ.
@Suite("Framing corpus: tolerant decoding against Chromium and WebKitGTK")
struct FramingCorpusTests {
    struct Corpus: Decodable {
        var engines: [String: String]
        var cases: [Case]
    }

    struct Case: Decodable, CustomTestStringConvertible {
        var id: String
        var group: String
        var title: String
        var response: String
        var engines: [String: Seen]
        var testDescription: String { "\(id): \(title)" }
        var bytes: [UInt8] { [UInt8](Data(base64Encoded: response)!) }
    }

    /// What an engine handed the page: a status and body, or the stage a fetch failed at.
    struct Seen: Decodable, Equatable {
        var status: Int?
        var body: String?
        var error: String?
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let corpus: Corpus = {
        let data = try! Data(contentsOf: root.appendingPathComponent("Framing/corpus.json"))
        return try! JSONDecoder().decode(Corpus.self, from: data)
    }()

    /// What the capture import made of one case.
    struct Decoded {
        var status: Int?
        var body: [UInt8] = []
        /// No response, or one cut short or whose coding failed: the page would have had an error.
        var failed: Bool
        var diagnostics: [Diagnostic]

        /// The engines the `framing-ambiguous` diagnostics say the recording follows.
        var follows: Set<String> {
            Set(diagnostics.filter { $0.catalogued == .framingAmbiguous }.compactMap { d in
                [FramingOddity.Engine.chromium, .webkit].first { d.message.contains("decoded as \($0.rawValue) does") }?.rawValue
            })
        }
    }

    /// One case through the capture path: a GET on a fresh connection, the case's bytes as
    /// the answer, then the close.
    static func decode(_ bytes: [UInt8], strictness: HTTPParser.Strictness = .tolerant) -> Decoded {
        let collector = parsed(bytes, strictness: strictness)
        guard let pending = collector.pending.first else {
            return Decoded(status: nil, failed: true, diagnostics: collector.diagnostics)
        }
        let collected = HTTPStreamCollector.build(pending, options: collector.options)
        let diagnostics = collector.diagnostics + collected.diagnostics
        guard let response = pending.parts.response else {
            return Decoded(status: nil, failed: true, diagnostics: diagnostics)
        }
        let failedCodes: Set<DiagnosticCode> = [.responseIncomplete, .contentDecodingFailed]
        return Decoded(
            status: response.head.status, body: [UInt8](collected.exchange.response.body),
            failed: diagnostics.contains { $0.catalogued.map(failedCodes.contains) ?? false },
            diagnostics: diagnostics)
    }

    /// The collector after a GET on a fresh connection, the case's bytes as the answer, then
    /// the close.
    static func parsed(_ bytes: [UInt8], strictness: HTTPParser.Strictness = .tolerant) -> HTTPStreamCollector {
        var collector = HTTPStreamCollector(options: .init(strictness: strictness))
        let client = Endpoint(address: IPAddress(v4: 127, 0, 0, 1), port: 50000)
        let server = Endpoint(address: IPAddress(v4: 127, 0, 0, 1), port: 8080)
        let request = Array("GET /case HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: gzip, deflate, br\r\n\r\n".utf8)
        collector.opened(1, client: client, server: server, midStream: false, time: 1)
        request.withUnsafeBytes { collector.data(1, fromClient: true, $0, time: 1) }
        if !bytes.isEmpty { bytes.withUnsafeBytes { collector.data(1, fromClient: false, $0, time: 2) } }
        collector.closed(1, reason: .fin, time: 3)
        return collector
    }

    /// What a response parser made of `bytes` fed in pieces cut at `cuts`, in words.
    static func pieces(_ bytes: [UInt8], cuts: [Int], strictness: HTTPParser.Strictness) -> String {
        var parser = HTTPParser(kind: .response, strictness: strictness)
        parser.expectResponse(to: "GET")
        var start = 0
        for cut in cuts.sorted() + [bytes.count] where cut >= start {
            parser.feed(Array(bytes[start..<cut]), time: 2)
            start = cut
        }
        parser.finish(time: 3)
        return parser.completed.map { m in
            "\(m.head.status) \(m.head.headers) body=\(m.body) length=\(m.bodyLength) complete=\(m.complete) odd=\(m.oddities) problems=\(m.problems) end=\(m.endOffset)"
        }.joined(separator: "\n") + " error=\(String(describing: parser.error)) skipped=\(parser.skippedBytes)"
    }

    @Test("a response cut anywhere, in any number of pieces, parses as it does whole, on every case", arguments: corpus.cases)
    func cutAnywhere(_ c: Case) {
        let bytes = c.bytes
        var generator = SystemRandomNumberGenerator()
        for strictness in [HTTPParser.Strictness.tolerant, .strict] {
            let whole = Self.pieces(bytes, cuts: [], strictness: strictness)
            // Just before, at and just after each line end (a piece ending inside a line
            // whose end the next piece brings, with body after it), each alone and all at once.
            let ends = bytes.indices.filter { bytes[$0] == 0x0A }.flatMap { [$0, $0 + 1, $0 + 2] }.filter { $0 > 0 && $0 < bytes.count }
            for cut in ends { #expect(Self.pieces(bytes, cuts: [cut], strictness: strictness) == whole, "cut at \(cut)") }
            #expect(Self.pieces(bytes, cuts: ends, strictness: strictness) == whole, "cut at every line end")
            #expect(Self.pieces(bytes, cuts: Array(bytes.indices.dropFirst()), strictness: strictness) == whole, "byte by byte")
            for _ in 0..<8 {
                let cuts = (0..<Int.random(in: 1...6, using: &generator)).map { _ in Int.random(in: 0...bytes.count, using: &generator) }
                #expect(Self.pieces(bytes, cuts: cuts, strictness: strictness) == whole, "cut at \(cuts.sorted())")
            }
        }
    }

    @Test("a decoding reused for a compressed body met before gives what decoding it again gives, on every case")
    func reusedDecodings() throws {
        let built = Self.corpus.cases.compactMap { c -> (HTTPStreamCollector.Pending, HTTPStreamCollector.Options)? in
            let collector = Self.parsed(c.bytes)
            return collector.pending.first.map { ($0, collector.options) }
        }
        var decodings = RecentBodies<HTTPStreamCollector.Decoding>(budget: 4 << 20)
        var first: [Data] = []
        var reused = 0
        func storage(_ d: Data) -> UnsafeRawPointer? { d.withUnsafeBytes { $0.baseAddress } }
        // The corpus twice: the second time, every clean decoding comes from the first.
        for round in 0..<2 {
            for (k, (pending, options)) in built.enumerated() {
                let alone = HTTPStreamCollector.build(pending, options: options)
                let memo = HTTPStreamCollector.build(pending, options: options, decodings: &decodings)
                #expect(memo.exchange == alone.exchange)
                #expect(memo.diagnostics.map(\.message) == alone.diagnostics.map(\.message))
                #expect(memo.wireResponse?.bytes == alone.wireResponse?.bytes && memo.wireResponse?.coding == alone.wireResponse?.coding)
                // Detached for the store, the same bodies under the same fingerprints.
                var (detachedAlone, detachedMemo) = (alone, memo)
                var repeated = RepeatedBodies()
                detachedAlone.detach(fingerprinting: &repeated)
                detachedMemo.detach(fingerprinting: &repeated)
                #expect(detachedMemo.detached.map(\.fingerprint) == detachedAlone.detached.map(\.fingerprint))
                #expect(detachedMemo.detached.map(\.bytes) == detachedAlone.detached.map(\.bytes))
                #expect(detachedMemo.exchange == detachedAlone.exchange)
                let body = memo.exchange.response.body
                if round == 0 {
                    first.append(body)
                } else if !body.isEmpty, storage(body) == storage(first[k]) {
                    reused += 1
                }
            }
        }
        #expect(reused > 0, "no decoding of the corpus was reused")
        #expect(decodings.heldBytes <= decodings.budget)
    }

    @Test("a compressed body met again takes the earlier decoded bytes, and the same bytes under another coding do not")
    func reusedDecodingIsShared() throws {
        // Varied enough that its gzip is over `RecentBodies.smallest`.
        let text = Data((0..<400).map { "entry \($0 * 7919 % 10007) of an offline package's script\n" }.joined().utf8)
        let gzip = try IPAddressTextTests.gzip([UInt8](text))
        func response(_ coding: String) -> [UInt8] {
            Array("HTTP/1.1 200 OK\r\nContent-Encoding: \(coding)\r\nContent-Length: \(gzip.count)\r\n\r\n".utf8) + gzip
        }
        let first = try #require(Self.parsed(response("gzip")).pending.first)
        let again = try #require(Self.parsed(response("gzip")).pending.first)
        let other = try #require(Self.parsed(response("x-gzip")).pending.first)
        let options = HTTPStreamCollector.Options()
        var decodings = RecentBodies<HTTPStreamCollector.Decoding>(budget: 4 << 20)
        let a = HTTPStreamCollector.build(first, options: options, decodings: &decodings)
        let b = HTTPStreamCollector.build(again, options: options, decodings: &decodings)
        let c = HTTPStreamCollector.build(other, options: options, decodings: &decodings)
        #expect(a.exchange.response.body == text && b.exchange.response.body == text && c.exchange.response.body == text)
        func storage(_ d: Data) -> UnsafeRawPointer? { d.withUnsafeBytes { $0.baseAddress } }
        #expect(storage(a.exchange.response.body) == storage(b.exchange.response.body))
        #expect(storage(a.exchange.response.body) != storage(c.exchange.response.body))
        #expect(b.wireResponse?.bytes == Data(gzip) && b.wireResponse?.coding == "gzip")
        // Detached, each takes the decoded body's own fingerprint; the memo's entry works
        // it out once, so the bodies met again are never compared with a kept copy.
        var repeated = RepeatedBodies()
        for var built in [a, b, c] {
            built.detach(fingerprinting: &repeated)
            #expect(built.detached.last?.fingerprint == BodyFingerprint(text))
            #expect(built.exchange.response.detachedBody == BodyFingerprint(text))
        }
        #expect(repeated.heldBytes == 0)
        // One entry: the same bytes under x-gzip took the gzip decoding's place.
        #expect(decodings.heldBytes == gzip.count + text.count)
    }

    static func agrees(_ d: Decoded, with seen: Seen) -> Bool {
        if seen.error != nil { return d.failed }
        guard let status = d.status, let body = seen.body.flatMap({ Data(base64Encoded: $0) }) else { return false }
        return status == seen.status && d.body == [UInt8](body)
    }

    @Test("the corpus is the size the issue asks for, and both engines are recorded for every case")
    func corpusShape() {
        #expect(Self.corpus.cases.count >= 150)
        for c in Self.corpus.cases {
            #expect(c.engines["chromium"] != nil && c.engines["webkit"] != nil, "\(c.id) lacks an engine's truth")
        }
        let groups = Set(Self.corpus.cases.map(\.group))
        #expect(groups == ["chunk", "te", "cl", "status", "header", "http09", "coding"])
    }

    @Test("tolerant decoding hands the recording what Chromium or WebKitGTK handed the page", arguments: corpus.cases)
    func agreesWithAnEngine(_ c: Case) {
        let d = Self.decode(c.bytes)
        let chromium = Self.agrees(d, with: c.engines["chromium"]!)
        let webkit = Self.agrees(d, with: c.engines["webkit"]!)
        #expect(chromium || webkit, "\(c.id): decoded status \(d.status.map(String.init) ?? "none"), \(d.body.count) bytes \(String(decoding: d.body.prefix(40), as: UTF8.self).debugDescription), failed \(d.failed); Chromium \(c.engines["chromium"]!), WebKitGTK \(c.engines["webkit"]!)")
        // Where the recording can only match one engine, a framing-ambiguous diagnostic says
        // which, and it is that one.
        if chromium != webkit {
            let engine = (chromium ? FramingOddity.Engine.chromium : .webkit).rawValue
            #expect(d.follows == [engine], "\(c.id): decoded like \(engine) only; the diagnostics say \(d.diagnostics.map(\.message))")
        }
        // A diagnostic never claims an engine the recording does not match.
        for claimed in d.follows {
            #expect(claimed == FramingOddity.Engine.chromium.rawValue ? chromium : webkit, "\(c.id): says it follows \(claimed), which handed the page something else")
        }
    }

    /// Oddities RFC 9112 allows a recipient to read (a list of transfer codings, a version
    /// other than 1.x, a body on 205): strict parsing reads them too.
    static let allowedByRFC = ["[te-list]", "[te-repeated]", "[te-unknown]", "[te-identity]", "[te-http10]", "[body-on-205]", "[status-version]", "[status-under-100]"]

    @Test("every oddity tolerated in a head or a chunk against RFC 9112 is refused by --strict-http", arguments: corpus.cases)
    func strictRefuses(_ c: Case) {
        let tolerant = Self.decode(c.bytes)
        let framingOnly = tolerant.diagnostics.filter { d in
            [.framingAmbiguous, .framingTolerated].contains(d.catalogued) && !d.message.contains("[coding-") && !Self.allowedByRFC.contains { d.message.hasSuffix($0) }
        }
        guard !framingOnly.isEmpty, !tolerant.failed else { return }
        let strict = Self.decode(c.bytes, strictness: .strict)
        #expect(strict.failed, "\(c.id): tolerated \(framingOnly.map(\.message)), yet strict decoding delivered it")
        #expect(!strict.diagnostics.contains { [.framingAmbiguous, .framingTolerated].contains($0.catalogued) }, "\(c.id): strict decoding reports oddities it refused")
    }

    /// The conformance figures in docs/design.md: cases decoded like Chromium, like WebKitGTK, like
    /// neither.
    static func figures() -> (chromium: Int, webkit: Int, both: Int, neither: Int, split: Int) {
        var f = (chromium: 0, webkit: 0, both: 0, neither: 0, split: 0)
        for c in corpus.cases {
            let d = decode(c.bytes)
            let chromium = agrees(d, with: c.engines["chromium"]!)
            let webkit = agrees(d, with: c.engines["webkit"]!)
            if chromium { f.chromium += 1 }
            if webkit { f.webkit += 1 }
            if chromium && webkit { f.both += 1 }
            if !chromium && !webkit { f.neither += 1 }
            if c.engines["chromium"] != c.engines["webkit"] { f.split += 1 }
        }
        return f
    }

    @Test("docs/design.md gives the corpus figures as they are")
    func readmeFigures() throws {
        let f = Self.figures()
        let readme = try String(contentsOf: Self.root.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/design.md"), encoding: .utf8)
        let line = "\(Self.corpus.cases.count) cases (the engines differ on \(f.split)): decoded like Chromium \(f.chromium), like WebKitGTK \(f.webkit), like both \(f.both), like neither \(f.neither)"
        let says = readme.contains(line)
        #expect(says, "docs/design.md should say: \(line)")
        #expect(f.neither == 0)
    }
}

/// The same through a whole capture import, as a user runs it.
@Suite("Framing oddities in a capture import")
struct FramingImportTests {
    static let request = "GET /app.js HTTP/1.1\r\nHost: h5.example\r\n\r\n"
    static let response = "HTTP/1.1 200 OK\r\nContent-Type: text/javascript\r\nTransfer-Encoding: chunked\r\n\r\n6\t\r\nhello,\r\n9\r\n framing\n\r\n0\r\n\r\n"

    @Test("a tab after a chunk size imports decoded, with a framing-ambiguous diagnostic naming the engine followed")
    func tolerantImport() throws {
        var b = CaptureBuilder()
        b.connection(request: Self.request, response: Self.response)
        let (recordings, _) = try b.importing()
        let e = try #require(recordings.first?.exchanges.first)
        #expect(e.response.body == Data("hello, framing\n".utf8))
        let ambiguous = recordings[0].diagnostics.filter { $0.code == DiagnosticCode.framingAmbiguous.rawValue }
        #expect(ambiguous.count == 1)
        #expect(ambiguous.first?.message.contains("decoded as WebKitGTK (libsoup) does, while Chromium refuses the body [chunk-size-tab]") == true)
        #expect(ambiguous.first?.sequence == e.sequence)
    }

    @Test("--strict-http refuses the same response: the body stops at the bad chunk size and the exchange says so")
    func strictImport() throws {
        var b = CaptureBuilder()
        b.connection(request: Self.request, response: Self.response)
        var options = CaptureSession.Options()
        options.collector = .init(strictness: .strict)
        let (recordings, _) = try b.importing(options: options)
        let e = try #require(recordings.first?.exchanges.first)
        #expect(e.response.body.isEmpty)
        let codes = Set(recordings[0].diagnostics.map(\.code))
        #expect(codes.contains(DiagnosticCode.responseIncomplete.rawValue))
        #expect(!codes.contains(DiagnosticCode.framingAmbiguous.rawValue))
    }
}
