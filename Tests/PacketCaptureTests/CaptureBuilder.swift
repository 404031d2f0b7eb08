import Foundation
@testable import PacketCapture

/// Builds captures packet by packet for tests: TCP over IPv4 or IPv6, wrapped in any link
/// layer h5replay reads, written as pcap or pcapng for libpcap to read back.
struct CaptureBuilder {
    enum Link { case ethernet, vlan, sll, sll2, null, loop, raw }

    var link: Link = .ethernet
    var v6 = false
    var packets: [(time: Double, bytes: [UInt8])] = []
    var time = 1_700_000_000.0

    static func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func le32(_ v: UInt32) -> [UInt8] { be32(v).reversed() }

    var linkType: UInt32 {
        switch link {
        case .ethernet, .vlan: return 1
        case .sll: return 113
        case .sll2: return 276
        case .null: return 0
        case .loop: return 108
        case .raw: return 101
        }
    }

    /// A TCP segment from host `from` (1 = client 10.0.0.1, 2 = server 10.0.0.2).
    func tcp(from: Int, clientPort: Int, serverPort: Int, seq: UInt32, ack: UInt32 = 0, flags: UInt8, payload: [UInt8]) -> [UInt8] {
        let (sport, dport) = from == 1 ? (clientPort, serverPort) : (serverPort, clientPort)
        var t = Self.be16(sport) + Self.be16(dport) + Self.be32(seq) + Self.be32(ack)
        t += [0x50, flags] + Self.be16(65535) + [0, 0, 0, 0]
        return t + payload
    }

    func ip(from: Int, transport: [UInt8], id: Int = 1, fragmentOffset: Int = 0, moreFragments: Bool = false) -> [UInt8] {
        if v6 {
            let src: [UInt8] = [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [UInt8(from)]
            let dst: [UInt8] = [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [UInt8(3 - from)]
            return [0x60, 0, 0, 0] + Self.be16(transport.count) + [6, 64] + src + dst + transport
        }
        let flags = (moreFragments ? 0x2000 : 0) | fragmentOffset / 8
        return [0x45, 0] + Self.be16(20 + transport.count) + Self.be16(id) + Self.be16(flags) + [64, 6, 0, 0]
            + [10, 0, 0, UInt8(from)] + [10, 0, 0, UInt8(3 - from)] + transport
    }

    func frame(_ ipPacket: [UInt8]) -> [UInt8] {
        let etherType = v6 ? 0x86DD : 0x0800
        let macs: [UInt8] = [2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]
        switch link {
        case .ethernet: return macs + Self.be16(etherType) + ipPacket
        case .vlan: return macs + Self.be16(0x8100) + Self.be16(42) + Self.be16(etherType) + ipPacket
        case .sll: return Self.be16(0) + Self.be16(1) + Self.be16(6) + [2, 0, 0, 0, 0, 1, 0, 0] + Self.be16(etherType) + ipPacket
        case .sll2: return Self.be16(etherType) + [0, 0] + Self.be32(1) + Self.be16(1) + [0, 6] + [2, 0, 0, 0, 0, 1, 0, 0] + ipPacket
        case .null: return Self.le32(v6 ? 30 : 2) + ipPacket
        case .loop: return Self.be32(v6 ? 30 : 2) + ipPacket
        case .raw: return ipPacket
        }
    }

    mutating func add(_ bytes: [UInt8], after seconds: Double = 0.001) {
        time += seconds
        packets.append((time, bytes))
    }

    mutating func segment(from: Int, clientPort: Int = 50000, serverPort: Int = 80, seq: UInt32, flags: UInt8 = 0x18, payload: [UInt8] = []) {
        add(frame(ip(from: from, transport: tcp(from: from, clientPort: clientPort, serverPort: serverPort, seq: seq, flags: flags, payload: payload))))
    }

    /// A whole connection: handshake, the client's bytes, the server's bytes, FIN both ways.
    /// Payloads are cut into segments of `mss` bytes.
    mutating func connection(clientPort: Int = 50000, serverPort: Int = 80, clientISN: UInt32 = 1000, serverISN: UInt32 = 5000, request: String, response: String, mss: Int = 1400) {
        segment(from: 1, clientPort: clientPort, serverPort: serverPort, seq: clientISN, flags: 0x02)
        segment(from: 2, clientPort: clientPort, serverPort: serverPort, seq: serverISN, flags: 0x12)
        var c = clientISN &+ 1
        for chunk in Array(request.utf8).chunked(mss) {
            segment(from: 1, clientPort: clientPort, serverPort: serverPort, seq: c, payload: chunk)
            c = c &+ UInt32(chunk.count)
        }
        var s = serverISN &+ 1
        for chunk in Array(response.utf8).chunked(mss) {
            segment(from: 2, clientPort: clientPort, serverPort: serverPort, seq: s, payload: chunk)
            s = s &+ UInt32(chunk.count)
        }
        segment(from: 1, clientPort: clientPort, serverPort: serverPort, seq: c, flags: 0x11)
        segment(from: 2, clientPort: clientPort, serverPort: serverPort, seq: s, flags: 0x11)
    }

    func pcap() -> Data {
        var out = Self.le32(0xA1B2C3D4) + [2, 0, 4, 0] + Self.le32(0) + Self.le32(0) + Self.le32(262_144) + Self.le32(linkType)
        for p in packets {
            let seconds = UInt32(p.time)
            let micros = UInt32(((p.time - Double(seconds)) * 1_000_000).rounded())
            out += Self.le32(seconds) + Self.le32(micros) + Self.le32(UInt32(p.bytes.count)) + Self.le32(UInt32(p.bytes.count)) + p.bytes
        }
        return Data(out)
    }

    /// pcapng: a section header, one interface, one enhanced packet block per packet.
    func pcapng() -> Data {
        func block(_ type: UInt32, _ body: [UInt8]) -> [UInt8] {
            var padded = body
            while padded.count % 4 != 0 { padded.append(0) }
            let length = UInt32(12 + padded.count)
            return Self.le32(type) + Self.le32(length) + padded + Self.le32(length)
        }
        var out = block(0x0A0D0D0A, Self.le32(0x1A2B3C4D) + [1, 0, 0, 0] + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        out += block(1, [UInt8(linkType & 0xFF), UInt8(linkType >> 8)] + [0, 0] + Self.le32(262_144))
        for p in packets {
            let micros = UInt64(p.time * 1_000_000)
            out += block(6, Self.le32(0) + Self.le32(UInt32(micros >> 32)) + Self.le32(UInt32(micros & 0xFFFF_FFFF)) + Self.le32(UInt32(p.bytes.count)) + Self.le32(UInt32(p.bytes.count)) + p.bytes)
        }
        return Data(out)
    }

    /// Writes the capture to a temporary file and imports it.
    func importing(pcapng: Bool = false, options: CaptureSession.Options = .init()) throws -> (recordings: [TrafficModelRecording], session: CaptureSession) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-\(UUID().uuidString).\(pcapng ? "pcapng" : "pcap")")
        try (pcapng ? self.pcapng() : pcap()).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        return try CaptureImporter.read(path: url.path, name: "test", options: options)
    }
}

import TrafficModel
typealias TrafficModelRecording = Recording

extension Array {
    func chunked(_ size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: size).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}
