import Foundation
import HTTPWire
import Testing
import TrafficModel
@testable import PacketCapture

/// Captures built packet by packet, read back through libpcap: every link layer, IP
/// version and TCP reassembly case docs/design.md, "Capture import and live capture" lists.
@Suite("Capture import: link layers, IP and TCP reassembly")
struct CaptureImportTests {
    static let request = "POST /api/refund HTTP/1.1\r\nHost: shop.example\r\nContent-Type: application/json\r\nContent-Length: 27\r\nCookie: sid=abc\r\n\r\n{\"order\":42,\"amount\":9.99}\n"
    static let body = String(repeating: "refund accepted; ", count: 300)
    static let response = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nSet-Cookie: seen=1; Path=/\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"

    static func check(_ recording: Recording, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(recording.exchanges.count == 1, sourceLocation: sourceLocation)
        guard let e = recording.exchanges.first else { return }
        #expect(e.request.method == "POST", sourceLocation: sourceLocation)
        #expect(e.request.url == "http://shop.example/api/refund", sourceLocation: sourceLocation)
        #expect(e.request.body == Data("{\"order\":42,\"amount\":9.99}\n".utf8), sourceLocation: sourceLocation)
        #expect(e.response.status == 200, sourceLocation: sourceLocation)
        #expect(e.response.body == Data(body.utf8), sourceLocation: sourceLocation)
        #expect(e.response.headers.first("Set-Cookie") == "seen=1; Path=/", sourceLocation: sourceLocation)
    }

    @Test("every link layer and both IP versions give the same exchange", arguments: [
        (CaptureBuilder.Link.ethernet, false), (.vlan, false), (.sll, false), (.sll2, false), (.null, false), (.loop, false), (.raw, false),
        (.ethernet, true), (.sll2, true), (.raw, true), (.null, true),
    ])
    func linkLayers(link: CaptureBuilder.Link, v6: Bool) throws {
        var b = CaptureBuilder(link: link, v6: v6)
        b.connection(request: Self.request, response: Self.response, mss: 500)
        let (recordings, _) = try b.importing()
        Self.check(recordings[0])
        #expect(recordings[0].exchanges[0].serverAddress == (v6 ? "[2001:db8::2]:80" : "10.0.0.2:80"))
    }

    @Test("a capture's requests from no browser engine (NC1) are counted on the recording: a note beside the page's, a warning when there is no other")
    func nativeRequests() throws {
        func request(_ agent: String, _ path: String) -> String { "GET \(path) HTTP/1.1\r\nHost: api.bank.example\r\nUser-Agent: \(agent)\r\nAccept: */*\r\n\r\n" }
        let ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        var native = CaptureBuilder()
        native.connection(clientPort: 50001, request: request("BankApp/5.2 CFNetwork/1568.100.1 Darwin/24.0.0", "/v1/messages"), response: ok)
        let alone = try native.importing().recordings[0]
        #expect(alone.exchanges.map(\.initiator) == [.native])
        let warning = try #require(alone.diagnostics.first { $0.code == DiagnosticCode.noPageRequests.rawValue })
        #expect(warning.severity == .warning && warning.message.contains("`BankApp/5.2 CFNetwork/1568.100.1 Darwin/24.0.0`") && warning.message.contains("NC1"))
        var mixed = native
        mixed.connection(clientPort: 50002, request: request("Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15", "/v1/page"), response: ok)
        let both = try mixed.importing().recordings[0]
        #expect(both.diagnostics.filter { $0.code.hasPrefix("n") && $0.code.contains("requests") }.map(\.code) == [DiagnosticCode.nativeRequests.rawValue])
        #expect(both.diagnostics.first { $0.code == DiagnosticCode.nativeRequests.rawValue }?.message.hasPrefix("1 of 2 request(s)") == true)
    }

    @Test("a capture many times the read buffer reads whole: records across every buffer boundary, pcap and pcapng", arguments: [false, true])
    func acrossReadBuffers(pcapng: Bool) throws {
        var b = CaptureBuilder()
        // Sixty connections of 5 KB bodies in segments of odd sizes: about 370 KB, whose
        // records fall across the 64 KB buffer's edges at every offset.
        for k in 0..<60 {
            b.connection(clientPort: 50_000 + k, request: Self.request, response: Self.response, mss: 997 + k)
        }
        let size = (pcapng ? b.pcapng() : b.pcap()).count
        #expect(size > 4 * PcapSource.readBuffer)
        let (recordings, session) = try b.importing(pcapng: pcapng)
        #expect(session.decoder.counts.packets == b.packets.count)
        #expect(recordings[0].exchanges.count == 60)
        for e in recordings[0].exchanges { #expect(e.response.body == Data(Self.body.utf8)) }
    }

    @Test("a file libpcap refuses is an error naming it, and leaves no file open")
    func refusedFile() throws {
        // pcap's magic number, then a header cut short.
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-\(UUID().uuidString).pcap")
        try Data(CaptureBuilder.le32(0xA1B2C3D4) + [2, 0]).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        func openFiles() throws -> Int { try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count }
        let before = try openFiles()
        for _ in 0..<64 {
            #expect {
                _ = try PcapSource.open(file: url.path)
            } throws: { error in
                "\(error)".hasPrefix(url.path + ": ")
            }
        }
        // Other tests open files meanwhile: a leak would be 64 here.
        #expect(try openFiles() - before < 32)
        #expect(throws: (any Error).self) { _ = try PcapSource.open(file: url.path + ".missing") }
    }

    @Test("pcapng reads like pcap, and the recording says which it was")
    func pcapng() throws {
        var b = CaptureBuilder()
        b.connection(request: Self.request, response: Self.response)
        let (recordings, _) = try b.importing(pcapng: true)
        Self.check(recordings[0])
        #expect(recordings[0].sourceFormat == "pcapng")
    }

    /// Segments as a list, so that tests can reorder, repeat and drop them.
    static func segments(_ text: String, isn: UInt32, mss: Int) -> [(seq: UInt32, bytes: [UInt8])] {
        var seq = isn
        return Array(text.utf8).chunked(mss).map { chunk in
            defer { seq = seq &+ UInt32(chunk.count) }
            return (seq, chunk)
        }
    }

    @Test("out-of-order segments, retransmissions and overlaps: the first copy of each byte wins")
    func reorderingAndOverlap() throws {
        var b = CaptureBuilder()
        b.segment(from: 1, seq: 999, flags: 0x02)
        b.segment(from: 2, seq: 4999, flags: 0x12)
        for s in Self.segments(Self.request, isn: 1000, mss: 40).reversed() { b.segment(from: 1, seq: s.seq, payload: s.bytes) }
        let server = Self.segments(Self.response, isn: 5000, mss: 300)
        // 0, 2, a conflicting copy of the start of 3, 3, 1, 1 again, the rest, 2 again.
        b.segment(from: 2, seq: server[0].seq, payload: server[0].bytes)
        b.segment(from: 2, seq: server[2].seq, payload: server[2].bytes)
        var forged = server[3].bytes
        for k in 0..<10 { forged[k] = 0x58 }
        b.segment(from: 2, seq: server[3].seq, payload: Array(forged.prefix(50)))
        b.segment(from: 2, seq: server[3].seq, payload: server[3].bytes)
        b.segment(from: 2, seq: server[1].seq, payload: server[1].bytes)
        b.segment(from: 2, seq: server[1].seq, payload: server[1].bytes)
        for s in server.dropFirst(4) { b.segment(from: 2, seq: s.seq, payload: s.bytes) }
        b.segment(from: 2, seq: server[2].seq, payload: server[2].bytes)
        let (recordings, session) = try b.importing()
        // The forged bytes came first, so they win: the body differs in those 10 bytes only.
        let e = recordings[0].exchanges[0]
        var expected = Array(Self.body.utf8)
        let bodyStart = Self.response.utf8.count - Self.body.utf8.count
        for k in 0..<10 { expected[900 - bodyStart + k] = 0x58 }
        #expect(e.response.body == Data(expected))
        #expect(e.request.body == Data("{\"order\":42,\"amount\":9.99}\n".utf8))
        #expect(session.reassembler.counts.retransmittedSegments >= 2)
        // The real copy of segment 3 differs from the held forged one in its first 10 bytes.
        // (Overlaps with bytes already handed to the HTTP parser are counted as
        // retransmissions; reassembly keeps no copy of delivered bytes to compare with.)
        #expect(session.reassembler.counts.conflictingBytes == 10)
        #expect(recordings[0].diagnostics.contains { $0.code == "tcp-overlap-conflict" })
    }

    @Test("sequence numbers that wrap around 2^32 reassemble")
    func sequenceWrap() throws {
        var b = CaptureBuilder()
        b.connection(clientISN: 0xFFFF_FFF0, serverISN: 0xFFFF_FF00, request: Self.request, response: Self.response, mss: 100)
        Self.check(try b.importing().recordings[0])
    }

    @Test("a capture that began mid-stream keeps the exchanges after the first message start")
    func midStream() throws {
        var b = CaptureBuilder()
        // The tail of an earlier response, then a whole exchange; no handshake.
        b.segment(from: 2, seq: 70_000, payload: Array("...old body bytes\r\n".utf8))
        b.segment(from: 1, seq: 9_000, payload: Array(Self.request.utf8))
        for s in Self.segments(Self.response, isn: 70_019, mss: 1000) { b.segment(from: 2, seq: s.seq, payload: s.bytes) }
        let (recordings, session) = try b.importing()
        Self.check(recordings[0])
        #expect(session.reassembler.counts.midStreamFlows == 1)
        #expect(recordings[0].diagnostics.contains { $0.code == "mid-stream-start" })
    }

    @Test("a lost segment becomes a gap: the exchange is kept and marked, the next one is whole")
    func gap() throws {
        var b = CaptureBuilder()
        let second = "GET /next HTTP/1.1\r\nHost: shop.example\r\n\r\n"
        let secondResponse = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        b.segment(from: 1, seq: 999, flags: 0x02)
        b.segment(from: 2, seq: 4999, flags: 0x12)
        b.segment(from: 1, seq: 1000, payload: Array(Self.request.utf8))
        let server = Self.segments(Self.response, isn: 5000, mss: 1000)
        b.segment(from: 2, seq: server[0].seq, payload: server[0].bytes)
        // server[1] is lost.
        for s in server.dropFirst(2) { b.segment(from: 2, seq: s.seq, payload: s.bytes) }
        b.segment(from: 1, seq: 1000 + UInt32(Self.request.utf8.count), payload: Array(second.utf8))
        b.segment(from: 2, seq: 5000 + UInt32(Self.response.utf8.count), payload: Array(secondResponse.utf8))
        b.segment(from: 1, seq: 1000 + UInt32(Self.request.utf8.count + second.utf8.count), flags: 0x11)
        b.segment(from: 2, seq: 5000 + UInt32(Self.response.utf8.count + secondResponse.utf8.count), flags: 0x11)
        let (recordings, session) = try b.importing()
        let r = recordings[0]
        #expect(r.exchanges.count == 2)
        #expect(r.exchanges[0].response.body.count == Self.body.utf8.count - 1000)
        #expect(r.diagnostics.contains { $0.code == "response-incomplete" && $0.sequence == 0 && $0.message.contains("1000 body bytes missing") })
        #expect(r.exchanges[1].request.url == "http://shop.example/next")
        #expect(r.exchanges[1].response.body == Data("ok".utf8))
        #expect(session.reassembler.counts.gapBytes == 1000)
        #expect(r.diagnostics.contains { $0.code == "tcp-gap" })
    }

    @Test("a port reused after FIN is a new connection")
    func portReuse() throws {
        var b = CaptureBuilder()
        b.connection(clientISN: 1000, request: Self.request, response: Self.response)
        b.connection(clientISN: 900_000, serverISN: 7_000_000, request: "GET /again HTTP/1.1\r\nHost: shop.example\r\n\r\n", response: "HTTP/1.1 204 No Content\r\n\r\n")
        let (recordings, session) = try b.importing()
        #expect(recordings[0].exchanges.map(\.request.url) == ["http://shop.example/api/refund", "http://shop.example/again"])
        #expect(recordings[0].exchanges.map(\.response.status) == [200, 204])
        #expect(Set(recordings[0].exchanges.compactMap(\.connectionID)).count == 2)
        #expect(session.reassembler.counts.flows == 2)
    }

    @Test("a reset ends the connection and its unanswered request is kept")
    func reset() throws {
        var b = CaptureBuilder()
        b.segment(from: 1, seq: 999, flags: 0x02)
        b.segment(from: 2, seq: 4999, flags: 0x12)
        b.segment(from: 1, seq: 1000, payload: Array(Self.request.utf8))
        b.segment(from: 2, seq: 5000, flags: 0x14)
        let (recordings, _) = try b.importing()
        #expect(recordings[0].exchanges.count == 1)
        #expect(recordings[0].exchanges[0].response.status == 0)
        #expect(recordings[0].diagnostics.contains { $0.code == "no-response" })
    }

    @Test("IPv4 fragments arriving out of order are reassembled")
    func fragments() throws {
        var b = CaptureBuilder()
        b.segment(from: 1, seq: 999, flags: 0x02)
        b.segment(from: 2, seq: 4999, flags: 0x12)
        b.segment(from: 1, seq: 1000, payload: Array(Self.request.utf8))
        let transport = b.tcp(from: 2, clientPort: 50000, serverPort: 80, seq: 5000, flags: 0x18, payload: Array(Self.response.utf8))
        let cut = 1480
        b.add(b.frame(b.ip(from: 2, transport: Array(transport[cut...]), id: 77, fragmentOffset: cut)))
        b.add(b.frame(b.ip(from: 2, transport: Array(transport[..<cut]), id: 77, moreFragments: true)))
        let (recordings, session) = try b.importing()
        Self.check(recordings[0])
        #expect(session.decoder.counts.reassembledDatagrams == 1)
    }

    @Test("HTTPS connections are counted and reported as not decodable")
    func https() throws {
        var b = CaptureBuilder()
        b.connection(request: Self.request, response: Self.response)
        b.segment(from: 1, clientPort: 50001, serverPort: 443, seq: 1, flags: 0x02)
        b.segment(from: 1, clientPort: 50001, serverPort: 443, seq: 2, payload: [0x16, 0x03, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5])
        let (recordings, session) = try b.importing()
        Self.check(recordings[0])
        #expect(session.reassembler.sink.counts.tlsConnections == 1)
        #expect(recordings[0].diagnostics.contains { $0.code == "https-not-decodable" && $0.message.contains("1 HTTPS connection") })
    }

    @Test("past the open-flow bound the least recently active connection is closed early")
    func flowLimit() throws {
        var b = CaptureBuilder()
        for port in 50000..<50004 {
            b.segment(from: 1, clientPort: port, seq: 999, flags: 0x02)
            b.segment(from: 1, clientPort: port, seq: 1000, payload: Array("GET /\(port) HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        }
        let (recordings, session) = try b.importing(options: CaptureSession.Options(tcpLimits: TCPLimits(maxOpenFlows: 2)))
        #expect(session.reassembler.counts.limitEvictions >= 2)
        #expect(session.reassembler.counts.maxOpenFlows <= 2)
        // Closed early, every request is still kept, unanswered.
        #expect(recordings[0].exchanges.count == 4)
        #expect(recordings[0].diagnostics.contains { $0.code == "flow-limit" })
    }

    @Test("a packet of a connection the table has let go of opens a new one, though the packet before it was that connection's")
    func flowForgottenThenSeenAgain() throws {
        var b = CaptureBuilder()
        // A is whole and closed, its FIN the last packet; two minutes on, the table has
        // let closed A go (a minute after its last packet), and A's client sends data: no
        // flow has A's key any more, so it opens one, mid-stream.
        b.connection(clientPort: 50000, request: Self.request, response: Self.response)
        let again = b.tcp(from: 1, clientPort: 50000, serverPort: 80, seq: 5000, flags: 0x18, payload: Array("GET /again HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        b.add(b.frame(b.ip(from: 1, transport: again)), after: 120)
        let (recordings, session) = try b.importing()
        #expect(session.reassembler.counts.midStreamFlows == 1)
        #expect(session.reassembler.counts.retransmittedSegments == 0)
        #expect(recordings[0].exchanges.map(\.request.url).contains { $0.hasSuffix("/again") })
    }

    @Test("--split client gives one recording per client address")
    func splitByClient() throws {
        var b = CaptureBuilder()
        b.connection(request: Self.request, response: Self.response)
        var other = CaptureBuilder(v6: true)
        other.time = b.time + 1
        other.connection(request: "GET / HTTP/1.1\r\nHost: b\r\n\r\n", response: "HTTP/1.1 204 No Content\r\n\r\n")
        // One file holding both: IPv6 packets over the same Ethernet link.
        b.packets += other.packets
        let (recordings, _) = try b.importing(options: CaptureSession.Options(splitByClient: true))
        #expect(recordings.map(\.name) == ["test-10.0.0.1", "test-2001_db8__1"])
        #expect(recordings.map(\.exchanges.count) == [1, 1])
    }

    @Test("the import infers initiator, body kind and cookie-relevant fields as HAR import does")
    func inference() throws {
        var b = CaptureBuilder()
        let page = "GET /index.html HTTP/1.1\r\nHost: shop.example\r\nSec-Fetch-Dest: document\r\nSec-Fetch-Mode: navigate\r\n\r\n"
        let pageResponse = "HTTP/1.1 302 Found\r\nLocation: /home\r\nContent-Length: 0\r\n\r\n"
        b.connection(request: page, response: pageResponse)
        b.connection(clientPort: 50001, request: "GET /home HTTP/1.1\r\nHost: shop.example\r\nSec-Fetch-Dest: document\r\nSec-Fetch-Mode: navigate\r\n\r\n", response: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi")
        let xhr = "POST /api HTTP/1.1\r\nHost: shop.example\r\nX-Requested-With: XMLHttpRequest\r\nSec-Fetch-Dest: empty\r\nSec-Fetch-Mode: cors\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n\r\na=1"
        b.connection(clientPort: 50002, request: xhr, response: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        let r = try b.importing().recordings[0]
        #expect(r.exchanges.map(\.initiator) == [.navigation, .navigation, .xhr])
        #expect(r.exchanges[2].bodyKind == .urlEncoded)
        #expect(r.exchanges[0].redirect?.next == 1)
    }

    /// Two connections interleaved: a slow exchange on one spans two quick ones on the
    /// other, so exchanges complete out of start order.
    static func interleaved() -> CaptureBuilder {
        var b = CaptureBuilder()
        let slowRequest = Array("GET /slow HTTP/1.1\r\nHost: a.example\r\n\r\n".utf8)
        let slowResponse = Array("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nslow".utf8)
        b.segment(from: 1, clientPort: 50001, seq: 100, flags: 0x02)
        b.segment(from: 2, clientPort: 50001, seq: 900, flags: 0x12)
        b.segment(from: 1, clientPort: 50001, seq: 101, payload: slowRequest)
        var c: UInt32 = 2000
        var s: UInt32 = 7000
        b.segment(from: 1, clientPort: 50002, seq: c, flags: 0x02)
        b.segment(from: 2, clientPort: 50002, seq: s, flags: 0x12)
        c += 1
        s += 1
        func quick(_ k: Int) {
            let request = Array("GET /quick\(k) HTTP/1.1\r\nHost: a.example\r\n\r\n".utf8)
            let response = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nq\(k)".utf8)
            b.segment(from: 1, clientPort: 50002, seq: c, payload: request)
            b.segment(from: 2, clientPort: 50002, seq: s, payload: response)
            c += UInt32(request.count)
            s += UInt32(response.count)
        }
        for k in 0..<3 { quick(k) }
        b.segment(from: 2, clientPort: 50001, seq: 901, payload: slowResponse)
        for k in 3..<6 { quick(k) }
        return b
    }

    @Test("an exchange may leave once no earlier one can still come: the slow one holds back those after it, later ones leave as they end")
    func watermark() throws {
        // The streaming read's ordering, packet by packet on one thread, so that when each
        // exchange may leave does not depend on how the read's threads are scheduled.
        let capture = Self.interleaved()
        var session = CaptureSession(linkType: Int32(capture.linkType))
        var order = TimeOrder()
        var left: [(url: String, packet: Int)] = []
        for (k, packet) in capture.packets.enumerated() {
            packet.bytes.withUnsafeBytes { session.packet($0, time: packet.time) }
            for item in session.takeCompleted() { order.push(item) }
            while let item = order.pop(upTo: session.startWatermark) { left.append((item.exchange.request.url, k)) }
        }
        session.finish()
        for item in session.takeCompleted() { order.push(item) }
        while let item = order.pop(upTo: .infinity) { left.append((item.exchange.request.url, capture.packets.count)) }

        #expect(left.map(\.url) == ["http://a.example/slow"] + (0..<6).map { "http://a.example/quick\($0)" })
        let slowEnds = try #require(left.first?.packet)
        #expect(slowEnds < capture.packets.count, "the slow exchange leaves when its response ends, before the capture does")
        #expect(left[1...3].allSatisfy { $0.packet == slowEnds }, "the quick exchanges it held back leave with it")
        #expect(left[4...].allSatisfy { $0.packet > slowEnds && $0.packet < capture.packets.count }, "later ones leave as they end")
    }

    /// Connection A opens with a SYN; while it waits for its SYN-ACK, connection B (seen
    /// mid-stream) sends and answers a request; then A's first request goes, at once, and a
    /// second one later. `preconnect` makes A's first byte come long after its handshake.
    static func dated(preconnect: Bool) -> CaptureBuilder {
        var c = CaptureBuilder()
        func seg(_ from: Int, _ port: Int, _ seq: UInt32, _ flags: UInt8, _ payload: String = "", after: Double) {
            c.add(c.frame(c.ip(from: from, transport: c.tcp(from: from, clientPort: port, serverPort: 80, seq: seq, flags: flags, payload: Array(payload.utf8)))), after: after)
        }
        let first = "GET /first HTTP/1.1\r\nHost: a.example\r\n\r\n"
        let second = "GET /second HTTP/1.1\r\nHost: a.example\r\n\r\n"
        let ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        let b = "GET /b HTTP/1.1\r\nHost: a.example\r\n\r\n"
        seg(1, 50001, 1000, 0x02, after: 0)                                      // A: SYN at t0
        seg(1, 50002, 7000, 0x18, b, after: 0.002)                               // B: request, t0 + 2 ms
        seg(2, 50002, 9000, 0x18, ok, after: 0.001)                              // B: response
        seg(2, 50001, 5000, 0x12, after: 0.030)                                  // A: SYN-ACK, t0 + 33 ms
        seg(1, 50001, 1001, 0x18, first, after: preconnect ? 2.0 : 0.001)        // A: first request
        seg(2, 50001, 5001, 0x18, ok, after: 0.020)
        seg(1, 50001, 1001 + UInt32(first.utf8.count), 0x18, second, after: 0.5) // A: second request
        seg(2, 50001, 5001 + UInt32(ok.utf8.count), 0x18, ok, after: 0.020)
        return c
    }

    @Test("a connection's first request is dated from its SYN, as a browser's HAR dates it; a preconnected connection's and later requests keep their first byte's time", arguments: [false, true])
    func issueTime(preconnect: Bool) throws {
        let capture = Self.dated(preconnect: preconnect)
        let t0 = capture.packets[0].time
        let exchanges = try capture.importing().recordings[0].exchanges
        let first = try #require(exchanges.first { $0.request.url.hasSuffix("/first") })
        let second = try #require(exchanges.first { $0.request.url.hasSuffix("/second") })
        let firstByte = capture.packets[4].time
        if preconnect {
            #expect(abs(first.startedAt - firstByte) < 1e-6)
            #expect(exchanges.map { $0.request.url.split(separator: "/").last! } == ["b", "first", "second"])
        } else {
            #expect(abs(first.startedAt - t0) < 1e-6, "the SYN's time, before B's request")
            #expect(abs(first.endedAt - capture.packets[5].time) < 1e-6, "the wait for the connection counts in its duration")
            #expect(exchanges.map { $0.request.url.split(separator: "/").last! } == ["first", "b", "second"])
        }
        #expect(abs(second.startedAt - capture.packets[6].time) < 1e-6)

        // Streamed a packet at a time, B waits for A's first request: the order is the same.
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-\(UUID().uuidString).pcap")
        try capture.pcap().write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        var options = CaptureSession.Options()
        options.batchPackets = 1
        var emitted: [String] = []
        _ = try CaptureImporter.stream(path: url.path, options: options) { emitted.append($0.exchange.request.url) }
        #expect(emitted == exchanges.map(\.request.url))
    }

    @Test("the capture's SHA-256 is the file's, whichever threads hash its blocks, at any batch size", arguments: [1, 2048])
    func fileDigest(batchPackets: Int) throws {
        // 2,000 connections with 3 KB responses: over 5 MB, so that the hash is taken over
        // many of the stream's 64 KB reads, handed over at every packet or every 2,048.
        var b = CaptureBuilder()
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: 3000)
        for k in 0..<2000 {
            let port = 20000 + k
            let request = Array("GET /item\(k) HTTP/1.1\r\nHost: a.example\r\n\r\n".utf8)
            let response = Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
            b.segment(from: 1, clientPort: port, seq: 100, flags: 0x02)
            b.segment(from: 2, clientPort: port, seq: 900, flags: 0x12)
            b.segment(from: 1, clientPort: port, seq: 101, payload: request)
            b.segment(from: 2, clientPort: port, seq: 901, payload: response)
        }
        let data = b.pcap()
        #expect(data.count > 5 << 20)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-\(UUID().uuidString).pcap")
        try data.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        var options = CaptureSession.Options()
        options.batchPackets = batchPackets
        var count = 0
        let end = try CaptureImporter.stream(path: url.path, options: options, detachBodies: true, bodies: { _ in }) { _ in count += 1 }
        #expect(count == 2000)
        #expect(end.sha256 == data.sha256Hex)
    }

    @Test("a capture libpcap stops reading at a corrupt record keeps what came before, and its SHA-256 is still the whole file's")
    func digestPastCorruptRecord() throws {
        func capture(_ first: Int, _ count: Int) -> Data {
            var b = CaptureBuilder()
            for k in first..<(first + count) {
                let port = 20000 + k
                let response = Array("HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n".utf8) + [UInt8](repeating: UInt8(ascii: "y"), count: 2000)
                b.segment(from: 1, clientPort: port, seq: 100, flags: 0x02)
                b.segment(from: 2, clientPort: port, seq: 900, flags: 0x12)
                b.segment(from: 1, clientPort: port, seq: 101, payload: Array("GET /item\(k) HTTP/1.1\r\nHost: a.example\r\n\r\n".utf8))
                b.segment(from: 2, clientPort: port, seq: 901, payload: response)
            }
            return b.pcap()
        }
        // A record claiming 2 GB, then 400 KB more of records libpcap never reaches: more
        // than its stdio buffer holds; the file's hash covers them.
        var data = capture(0, 50)
        data += Data(CaptureBuilder.le32(1) + CaptureBuilder.le32(0) + CaptureBuilder.le32(0x7FFF_FFF0) + CaptureBuilder.le32(0x7FFF_FFF0))
        data += capture(50, 200).dropFirst(24)
        #expect(data.count > 400_000)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-\(UUID().uuidString).pcap")
        try data.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        var urls: [String] = []
        let end = try CaptureImporter.stream(path: url.path) { urls.append($0.exchange.request.url) }
        #expect(urls.count == 50 && urls.last == "http://a.example/item49")
        #expect(end.diagnostics.first?.code == DiagnosticCode.captureTruncated.rawValue)
        #expect(end.sha256 == data.sha256Hex)
    }

    @Test("a streaming read hands exchanges on in the order a whole-capture read numbers them")
    func streamOrder() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-\(UUID().uuidString).pcap")
        try Self.interleaved().pcap().write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        var options = CaptureSession.Options()
        options.batchPackets = 1
        var emitted: [String] = []
        let end = try CaptureImporter.stream(path: url.path, options: options) { item in
            emitted.append(item.exchange.request.url)
        }
        #expect(emitted == ["http://a.example/slow"] + (0..<6).map { "http://a.example/quick\($0)" })
        #expect(end.session.exchangeCount == 7)
        let whole = try CaptureImporter.read(path: url.path, name: "t")
        #expect(whole.recordings[0].exchanges.map(\.request.url) == emitted)
    }
}

@Suite("Addresses as exchanges name them")
struct IPAddressTextTests {
    @Test("IPv4 in dotted decimal, every octet width", arguments: [
        ((0, 0, 0, 0), "0.0.0.0"),
        ((255, 255, 255, 255), "255.255.255.255"),
        ((10, 0, 100, 9), "10.0.100.9"),
        ((192, 168, 1, 10), "192.168.1.10"),
        ((1, 20, 199, 200), "1.20.199.200"),
    ] as [((UInt8, UInt8, UInt8, UInt8), String)])
    func v4(octets: (UInt8, UInt8, UInt8, UInt8), text: String) {
        #expect(IPAddress(v4: octets.0, octets.1, octets.2, octets.3).description == text)
    }

    @Test("a request's URL: absolute targets kept, origin-form joined to Host, else to the server")
    func urls() {
        var head = HTTPHead()
        head.target = "/a?b=1"
        head.headers = [HeaderField("Host", " shop.example ")]
        let server = Endpoint(address: IPAddress(v4: 203, 0, 113, 7), port: 8080)
        #expect(HTTPStreamCollector.url(for: head, server: server) == "http://shop.example/a?b=1")
        head.headers = []
        #expect(HTTPStreamCollector.url(for: head, server: server) == "http://203.0.113.7:8080/a?b=1")
        head.target = "https://other.example/x"
        #expect(HTTPStreamCollector.url(for: head, server: server) == "https://other.example/x")
        // OPTIONS *, a target without its slash, a Host of spaces only, port 80, non-ASCII.
        head.headers = [HeaderField("Host", "\tshop.example")]
        head.target = "*"
        #expect(HTTPStreamCollector.url(for: head, server: server) == "http://shop.example/")
        head.target = "a/b"
        #expect(HTTPStreamCollector.url(for: head, server: server) == "http://shop.example/a/b")
        head.headers = [HeaderField("Host", "  ")]
        head.target = "/"
        #expect(HTTPStreamCollector.url(for: head, server: Endpoint(address: IPAddress(v4: 203, 0, 113, 7), port: 80)) == "http://203.0.113.7/")
        head.headers = [HeaderField("Host", "bücher.example")]
        head.target = "/straße"
        #expect(HTTPStreamCollector.url(for: head, server: server) == "http://bücher.example/straße")
    }

    /// `bytes` through `gzip -n`.
    static func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gzip.arguments = ["-c", "-n"]
        let input = Pipe()
        let output = Pipe()
        gzip.standardInput = input
        gzip.standardOutput = output
        try gzip.run()
        input.fileHandleForWriting.write(Data(bytes))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        gzip.waitUntilExit()
        return [UInt8](data)
    }

    @Test("a response that decodes cleanly reaches the store as it crossed the wire, with its coding; one with an oddity, or read whole, as decoded")
    func wireBodies() throws {
        let text = Array((0..<400).map { "entry \($0 * 7919 % 10007) of the refund ledger\n" }.joined().utf8)
        let gz = try Self.gzip(text)
        #expect(gz.count < text.count / 2)
        func capture(coding: String, body: [UInt8]) throws -> URL {
            var b = CaptureBuilder()
            b.segment(from: 1, seq: 100, flags: 0x02)
            b.segment(from: 2, seq: 900, flags: 0x12)
            b.segment(from: 1, seq: 101, payload: Array("GET /page HTTP/1.1\r\nHost: shop.example\r\n\r\n".utf8))
            b.segment(from: 2, seq: 901, payload: Array("HTTP/1.1 200 OK\r\nContent-Encoding: \(coding)\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-\(UUID().uuidString).pcap")
            try b.pcap().write(to: url)
            return url
        }
        func stored(coding: String, body: [UInt8]) throws -> [StoredBody] {
            let url = try capture(coding: coding, body: body)
            defer { try? FileManager.default.removeItem(at: url) }
            var bodies: [StoredBody] = []
            _ = try CaptureImporter.stream(path: url.path, detachBodies: true, bodies: { bodies.append($0) }) { _ in }
            // Read whole, nothing is stored: the exchange holds the decoded body alone.
            var whole: [HTTPStreamCollector.Collected] = []
            _ = try CaptureImporter.stream(path: url.path) { whole.append($0) }
            #expect(whole.count == 1 && whole.allSatisfy { $0.wireResponse == nil && BodyFingerprint($0.exchange.response.body) == bodies.last?.fingerprint })
            return bodies
        }
        let decoded = BodyFingerprint(Data(text))
        // Request body, then response body.
        let clean = try stored(coding: "gzip", body: gz)
        #expect(clean.count == 2)
        #expect(clean.last?.bytes == Data(gz) && clean.last?.coding == "gzip" && clean.last?.fingerprint == decoded)
        // "GZIP" decodes, with an oddity: the decoded body is kept.
        let odd = try stored(coding: "GZIP", body: gz)
        #expect(odd.last?.bytes == Data(text) && odd.last?.coding == nil && odd.last?.fingerprint == decoded)
        // Cut short: what inflated before the cut is kept, decoded.
        let cut = try stored(coding: "gzip", body: Array(gz.prefix(gz.count / 2)))
        #expect(cut.last?.coding == nil && cut.last.map { $0.bytes.count == $0.fingerprint.length && Data(text).starts(with: $0.bytes) } == true)
    }

    @Test("an EventSource in a capture is an exchange: the stream's head and its events as far as the capture kept them, marked incomplete when it never ended, initiator eventSource")
    func eventStream() throws {
        var b = CaptureBuilder()
        b.segment(from: 1, seq: 100, flags: 0x02)
        b.segment(from: 2, seq: 900, flags: 0x12)
        let request = Array("GET /prices HTTP/1.1\r\nHost: m.example.com\r\nAccept: text/event-stream\r\nCache-Control: no-cache\r\nReferer: https://m.example.com/\r\nCookie: sid=1\r\n\r\n".utf8)
        b.segment(from: 1, seq: 101, payload: request)
        let head = Array("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        let first = Array("d\r\ndata: 101.5\n\n\r\n".utf8), second = Array("d\r\ndata: 101.7\n\n\r\n".utf8)
        b.segment(from: 2, seq: 901, payload: head + first)
        b.segment(from: 2, seq: 901 + UInt32(head.count + first.count), payload: second)
        // The capture stops with the stream still open: no last chunk, no FIN.
        let (recordings, _) = try b.importing()
        let e = try #require(recordings.first?.exchanges.first)
        #expect(recordings[0].exchanges.count == 1)
        #expect(e.response.status == 200 && e.initiator == .eventSource, "\(e.initiator)")
        #expect(String(decoding: e.response.body, as: UTF8.self) == "data: 101.5\n\ndata: 101.7\n\n")
        #expect(recordings[0].diagnostics.contains { $0.sequence == 0 }, "the open stream is said: \(recordings[0].diagnostics)")
    }

    @Test("a WebSocket handshake in a capture is an exchange (101, initiator websocket), its frames after it a tunnel, not HTTP")
    func websocketHandshake() throws {
        var b = CaptureBuilder()
        b.segment(from: 1, seq: 100, flags: 0x02)
        b.segment(from: 2, seq: 900, flags: 0x12)
        let request = Array("GET /live HTTP/1.1\r\nHost: chat.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: https://chat.example\r\nCookie: sid=1\r\n\r\n".utf8)
        b.segment(from: 1, seq: 101, payload: request)
        let response = Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n".utf8) + [0x81, 0x02, 0x68, 0x69]
        b.segment(from: 2, seq: 901, payload: response)
        b.segment(from: 1, seq: 101 + UInt32(request.count), payload: [0x81, 0x82, 1, 2, 3, 4, 0x69, 0x6B])
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-\(UUID().uuidString).pcap")
        try b.pcap().write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let recording = try CaptureImporter.read(path: url.path, name: "ws").recordings[0]
        #expect(recording.exchanges.count == 1)
        let e = try #require(recording.exchanges.first)
        #expect(e.response.status == 101 && e.request.url.hasSuffix("/live") && e.initiator == .websocket)
        #expect(recording.diagnostics.contains { $0.code == "http-tunnel" })
    }
}
