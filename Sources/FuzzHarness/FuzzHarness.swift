// FuzzHarness: what each libFuzzer driver in Fuzz/ does with one input (the HTTP parser, the
// capture and HAR importers, the cookie parsers), kept in a library so that FuzzHarnessTests
// runs every saved crash input through the same code.

import CookieJar
import Foundation
import HARFormat
import HTTPWire
import PacketCapture
import TrafficModel

/// What each fuzz target does with one input (docs/design.md, "Reliability and security"). The libFuzzer drivers
/// in Fuzz/ call these, and FuzzHarnessTests runs every kept regression input through them,
/// so a crash found once stays fixed.
public enum FuzzHarness {
    /// The HTTP/1.1 parser on arbitrary bytes: as requests and as responses, strict and
    /// tolerant, cut where the first byte says, with a gap; the connection pairing; and the
    /// content decoder under every coding.
    public static func http(_ bytes: [UInt8]) {
        let cut = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
        let limits = HTTPLimits(maxHeaderBytes: 4096, maxHeaderCount: 32, maxBodyBytes: 4096)
        for kind in [HTTPParser.Kind.request, .response] {
            for strictness in [HTTPParser.Strictness.strict, .tolerant] {
                var parser = HTTPParser(kind: kind, strictness: strictness, limits: limits, midStream: cut % 3 == 0)
                parser.feed(Array(bytes[..<cut]), time: 0)
                if cut % 2 == 1 { parser.gap(cut, time: 1) }
                parser.feed(Array(bytes[cut...]), time: 2)
                parser.finish(time: 3)
                for message in parser.completed {
                    precondition(message.body.count <= limits.maxBodyBytes, "a body over the limit was kept")
                    precondition(message.head.headers.count <= limits.maxHeaderCount, "headers over the limit were kept")
                }
            }
        }
        var connection = HTTPConnection(limits: limits)
        bytes[..<cut].withUnsafeBytes { connection.clientData($0, time: 0) }
        bytes[cut...].withUnsafeBytes { connection.serverData($0, time: 1) }
        connection.finish(time: 2)
        let decoder = ContentDecoder(maxDecodedBytes: 1 << 20, maxRatio: 100)
        for coding in ["gzip", "deflate", "br", "gzip, br"] {
            if let decoded = try? decoder.decode(bytes, contentEncoding: coding) {
                precondition(decoded.bytes.count <= 1 << 20, "decoding passed its limit")
            }
        }
    }

    /// TCP reassembly and all under it: records of a 2-byte length and that many bytes of a
    /// raw IPv4 or IPv6 packet, through a capture session with small limits so that the
    /// eviction and gap paths run too.
    public static func tcp(_ bytes: [UInt8]) {
        var options = CaptureSession.Options()
        options.tcpLimits = TCPLimits(maxOpenFlows: 4, idleTimeout: 5, maxPendingBytes: 2048)
        options.collector.httpLimits = HTTPLimits(maxHeaderBytes: 4096, maxHeaderCount: 32, maxBodyBytes: 8192)
        var session = CaptureSession(linkType: PacketDecoder.dltLinktypeRaw, options: options)
        var k = 0
        var time = 1.0
        bytes.withUnsafeBytes { raw in
            while k + 2 <= raw.count {
                let length = Int(raw[k]) << 8 | Int(raw[k + 1])
                k += 2
                let end = min(k + length, raw.count)
                session.packet(UnsafeRawBufferPointer(rebasing: raw[k..<end]), time: time)
                time += 0.25
                k = end
            }
        }
        session.finish()
        let collected = session.takeCompleted()
        let recordings = session.recordings(from: collected, name: "fuzz", sourceFormat: "pcap", sourcePath: nil, sourceSHA256: nil)
        precondition(recordings.count == 1 && recordings[0].exchanges.count == collected.count, "exchanges were lost")
    }

    /// HAR import: a recording or an import error; an imported recording exports.
    public static func har(_ bytes: [UInt8]) {
        guard let recording = try? HARImporter(maxFileBytes: 1 << 20).recording(from: Data(bytes), file: "fuzz.har", name: "fuzz") else { return }
        for (i, e) in recording.exchanges.enumerated() { precondition(e.sequence == i, "sequences out of order") }
        _ = try? HARExporter(toolVersion: "fuzz").data(for: recording)
    }

    /// Set-Cookie parsing and the jar: each line stored from two origins, then read back as
    /// a Cookie header and as document.cookie.
    public static func setCookie(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        _ = SetCookie.parse(text)
        var jar = CookieStore()
        for url in ["https://h5.example.com/app/index.html", "http://sub.h5.example.com/"] {
            guard let target = RequestTarget(url) else { continue }
            for line in text.split(separator: "\n", maxSplits: 8) {
                _ = jar.receive(String(line), from: target, at: 1_700_000_000)
            }
            _ = jar.cookieHeader(for: target, at: 1_700_000_100)
            _ = jar.documentCookie(for: target, at: 1_700_000_100)
        }
    }

    /// The targets by name, for the regression runner.
    public static let targets: [String: @Sendable ([UInt8]) -> Void] = ["http": http, "tcp": tcp, "har": har, "setcookie": setCookie]
}
