/// An IPv4 or IPv6 address, kept as two integers so that flow keys hash and compare fast.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    public var high: UInt64
    public var low: UInt64
    public var isV6: Bool

    init(v4 bytes: UnsafeRawBufferPointer, at offset: Int) {
        high = 0
        low = UInt64(bytes[offset]) << 24 | UInt64(bytes[offset + 1]) << 16 | UInt64(bytes[offset + 2]) << 8 | UInt64(bytes[offset + 3])
        isV6 = false
    }

    init(v6 bytes: UnsafeRawBufferPointer, at offset: Int) {
        var h: UInt64 = 0
        var l: UInt64 = 0
        for k in 0..<8 { h = h << 8 | UInt64(bytes[offset + k]) }
        for k in 8..<16 { l = l << 8 | UInt64(bytes[offset + k]) }
        high = h
        low = l
        isV6 = true
    }

    public init(v4 a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) {
        high = 0
        low = UInt64(a) << 24 | UInt64(b) << 16 | UInt64(c) << 8 | UInt64(d)
        isV6 = false
    }

    public var description: String {
        if !isV6 {
            // Dotted decimal written into the string's own bytes (at most 15, a small
            // string): every exchange names its two ends, and interpolating four numbers
            // cost more than the rest of building them.
            return String(unsafeUninitializedCapacity: 15) { out in
                var n = 0
                for shift in stride(from: 24, through: 0, by: -8) {
                    let octet = Int(low >> UInt64(shift) & 0xFF)
                    if shift != 24 { out[n] = 0x2E; n += 1 }
                    if octet >= 100 { out[n] = UInt8(0x30 + octet / 100); n += 1 }
                    if octet >= 10 { out[n] = UInt8(0x30 + octet / 10 % 10); n += 1 }
                    out[n] = UInt8(0x30 + octet % 10)
                    n += 1
                }
                return n
            }
        }
        // RFC 5952: lowercase hex groups, the longest run of zero groups as "::".
        let groups = (0..<8).map { k -> UInt16 in
            let word = k < 4 ? high : low
            return UInt16(truncatingIfNeeded: word >> (UInt64(3 - k % 4) * 16))
        }
        var bestStart = -1
        var bestLength = 1
        var k = 0
        while k < 8 {
            if groups[k] == 0 {
                var j = k
                while j < 8, groups[j] == 0 { j += 1 }
                if j - k > bestLength { bestStart = k; bestLength = j - k }
                k = j
            } else {
                k += 1
            }
        }
        func hex(_ range: Range<Int>) -> String { range.map { String(groups[$0], radix: 16) }.joined(separator: ":") }
        if bestStart < 0 { return "[" + hex(0..<8) + "]" }
        return "[" + hex(0..<bestStart) + "::" + hex((bestStart + bestLength)..<8) + "]"
    }
}

/// One end of a TCP connection.
public struct Endpoint: Hashable, Sendable, CustomStringConvertible {
    public var address: IPAddress
    public var port: UInt16

    public init(address: IPAddress, port: UInt16) {
        self.address = address
        self.port = port
    }

    public var description: String { "\(address):\(port)" }
}

/// A TCP segment taken out of a packet. `payload` points into the packet and is valid
/// only during the callback that received it.
public struct TCPSegment {
    public var source: Endpoint
    public var destination: Endpoint
    public var sequence: UInt32
    public var acknowledgment: UInt32
    public var flags: UInt8
    public var payload: UnsafeRawBufferPointer
    public var time: Double

    public static let fin: UInt8 = 0x01
    public static let syn: UInt8 = 0x02
    public static let rst: UInt8 = 0x04
    public static let ack: UInt8 = 0x10

    @inline(__always) public var isSYN: Bool { flags & Self.syn != 0 }
    @inline(__always) public var isFIN: Bool { flags & Self.fin != 0 }
    @inline(__always) public var isRST: Bool { flags & Self.rst != 0 }
    @inline(__always) public var isACK: Bool { flags & Self.ack != 0 }
}

/// Counts of what the decoder saw, for the import summary.
public struct PacketCounts: Sendable, Hashable {
    public var packets = 0
    public var bytes = 0
    public var tcpSegments = 0
    /// Not IPv4 or IPv6 (ARP, LLDP...), or not TCP (UDP, ICMP...).
    public var otherPackets = 0
    /// Cut short by the snap length or the capture, or with a bad header.
    public var malformed = 0
    public var fragments = 0
    public var reassembledDatagrams = 0
    /// Fragments dropped because their datagram never completed.
    public var fragmentsExpired = 0
}

/// Link layer, IP and TCP decoding (docs/design.md, "Capture import and live capture"): Ethernet with 802.1Q/802.1ad tags,
/// Linux cooked v1 and v2, BSD loopback, raw IP; IPv4 with fragment reassembly, IPv6 with
/// extension headers and fragments.
public struct PacketDecoder {
    public let linkType: Int32
    public var counts = PacketCounts()
    var fragments = FragmentReassembler()

    // libpcap DLT_ values (pcap/dlt.h).
    public static let dltNull: Int32 = 0
    public static let dltEthernet: Int32 = 1
    public static let dltRaw: Int32 = 12
    public static let dltRawOpenBSD: Int32 = 14
    public static let dltLinktypeRaw: Int32 = 101
    public static let dltLoop: Int32 = 108
    public static let dltLinuxSLL: Int32 = 113
    public static let dltIPv4: Int32 = 228
    public static let dltIPv6: Int32 = 229
    public static let dltLinuxSLL2: Int32 = 276

    public static let supportedLinkTypes: Set<Int32> = [dltNull, dltEthernet, dltRaw, dltRawOpenBSD, dltLinktypeRaw, dltLoop, dltLinuxSLL, dltIPv4, dltIPv6, dltLinuxSLL2]

    public init(linkType: Int32) {
        self.linkType = linkType
    }

    /// Decodes one packet; calls `body` with its TCP segment, if it holds one.
    @inline(__always)
    public mutating func decode(_ packet: UnsafeRawBufferPointer, time: Double, _ body: (TCPSegment) -> Void) {
        counts.packets += 1
        counts.bytes += packet.count
        let n = packet.count
        switch linkType {
        case Self.dltEthernet:
            guard n >= 14 else { counts.malformed += 1; return }
            network(packet, from: 12, time: time, body)
        case Self.dltLinuxSLL:
            guard n >= 16 else { counts.malformed += 1; return }
            network(packet, from: 14, time: time, body)
        case Self.dltLinuxSLL2:
            guard n >= 20 else { counts.malformed += 1; return }
            network(packet, typeAt: 0, payloadAt: 20, time: time, body)
        case Self.dltNull, Self.dltLoop:
            guard n >= 4 else { counts.malformed += 1; return }
            // The address family, in the byte order of the machine that captured (NULL) or
            // network order (LOOP). A family is small, so the order that gives a small value wins.
            let le = UInt32(packet[0]) | UInt32(packet[1]) << 8 | UInt32(packet[2]) << 16 | UInt32(packet[3]) << 24
            let be = UInt32(packet[3]) | UInt32(packet[2]) << 8 | UInt32(packet[1]) << 16 | UInt32(packet[0]) << 24
            let family = linkType == Self.dltLoop ? be : min(le, be)
            switch family {
            case 2: ip(packet, at: 4, version: 4, time: time, body)
            case 10, 24, 28, 30: ip(packet, at: 4, version: 6, time: time, body)
            default: counts.otherPackets += 1
            }
        case Self.dltRaw, Self.dltRawOpenBSD, Self.dltLinktypeRaw, Self.dltIPv4, Self.dltIPv6:
            guard n >= 1 else { counts.malformed += 1; return }
            ip(packet, at: 0, version: Int(packet[0] >> 4), time: time, body)
        default:
            counts.otherPackets += 1
        }
    }

    /// An EtherType at `typeOffset` followed by its payload, skipping 802.1Q/802.1ad tags.
    @inline(__always)
    mutating func network(_ p: UnsafeRawBufferPointer, from typeOffset: Int, time: Double, _ body: (TCPSegment) -> Void) {
        network(p, typeAt: typeOffset, payloadAt: typeOffset + 2, time: time, body)
    }

    @inline(__always)
    mutating func network(_ p: UnsafeRawBufferPointer, typeAt: Int, payloadAt: Int, time: Double, _ body: (TCPSegment) -> Void) {
        var typeOffset = typeAt
        var payload = payloadAt
        while true {
            guard p.count >= typeOffset + 2 else { counts.malformed += 1; return }
            let type = UInt16(p[typeOffset]) << 8 | UInt16(p[typeOffset + 1])
            switch type {
            case 0x0800: return ip(p, at: payload, version: 4, time: time, body)
            case 0x86DD: return ip(p, at: payload, version: 6, time: time, body)
            case 0x8100, 0x88A8, 0x9100:
                // A VLAN tag: 2 bytes of tag control, then the inner EtherType.
                typeOffset = payload + 2
                payload = typeOffset + 2
            default:
                counts.otherPackets += 1
                return
            }
        }
    }

    @inline(__always)
    mutating func ip(_ p: UnsafeRawBufferPointer, at offset: Int, version: Int, time: Double, _ body: (TCPSegment) -> Void) {
        if version == 4 { ipv4(p, at: offset, time: time, body) } else if version == 6 { ipv6(p, at: offset, time: time, body) } else { counts.otherPackets += 1 }
    }

    mutating func ipv4(_ p: UnsafeRawBufferPointer, at o: Int, time: Double, _ body: (TCPSegment) -> Void) {
        guard p.count >= o + 20, p[o] >> 4 == 4 else { counts.malformed += 1; return }
        let headerLength = Int(p[o] & 0x0F) * 4
        let totalLength = Int(p[o + 2]) << 8 | Int(p[o + 3])
        guard headerLength >= 20, totalLength >= headerLength, p.count >= o + headerLength else { counts.malformed += 1; return }
        // Ethernet pads short frames; the IP total length says where the datagram ends. A
        // TSO capture writes 0 for a large segment: then the packet's own length is used.
        let end = totalLength == 0 ? p.count : min(o + totalLength, p.count)
        let proto = p[o + 9]
        guard proto == 6 else { counts.otherPackets += 1; return }
        let source = IPAddress(v4: p, at: o + 12)
        let destination = IPAddress(v4: p, at: o + 16)
        let flagsAndOffset = Int(p[o + 6]) << 8 | Int(p[o + 7])
        let moreFragments = flagsAndOffset & 0x2000 != 0
        let fragmentOffset = (flagsAndOffset & 0x1FFF) * 8
        if moreFragments || fragmentOffset != 0 {
            counts.fragments += 1
            let id = UInt32(p[o + 4]) << 8 | UInt32(p[o + 5])
            let key = FragmentReassembler.Key(source: source, destination: destination, id: id, proto: proto)
            let data = UnsafeRawBufferPointer(rebasing: p[(o + headerLength)..<end])
            if let datagram = fragments.add(key, offset: fragmentOffset, more: moreFragments, data: data, time: time, counts: &counts) {
                counts.reassembledDatagrams += 1
                datagram.withUnsafeBytes { tcp($0, at: 0, end: $0.count, source: source, destination: destination, time: time, body) }
            }
            return
        }
        tcp(p, at: o + headerLength, end: end, source: source, destination: destination, time: time, body)
    }

    mutating func ipv6(_ p: UnsafeRawBufferPointer, at o: Int, time: Double, _ body: (TCPSegment) -> Void) {
        guard p.count >= o + 40, p[o] >> 4 == 6 else { counts.malformed += 1; return }
        let payloadLength = Int(p[o + 4]) << 8 | Int(p[o + 5])
        let end = payloadLength == 0 ? p.count : min(o + 40 + payloadLength, p.count)
        let source = IPAddress(v6: p, at: o + 8)
        let destination = IPAddress(v6: p, at: o + 24)
        var next = p[o + 6]
        var k = o + 40
        // Extension headers (RFC 8200 section 4).
        while true {
            switch next {
            case 6:
                return tcp(p, at: k, end: end, source: source, destination: destination, time: time, body)
            case 0, 43, 60, 135, 139, 140:
                guard end >= k + 8 else { counts.malformed += 1; return }
                next = p[k]
                k += (Int(p[k + 1]) + 1) * 8
            case 51:
                guard end >= k + 8 else { counts.malformed += 1; return }
                next = p[k]
                k += (Int(p[k + 1]) + 2) * 4
            case 44:
                guard end >= k + 8 else { counts.malformed += 1; return }
                counts.fragments += 1
                let inner = p[k]
                let offsetAndFlags = Int(p[k + 2]) << 8 | Int(p[k + 3])
                let id = UInt32(p[k + 4]) << 24 | UInt32(p[k + 5]) << 16 | UInt32(p[k + 6]) << 8 | UInt32(p[k + 7])
                guard inner == 6 else { counts.otherPackets += 1; return }
                let key = FragmentReassembler.Key(source: source, destination: destination, id: id, proto: inner)
                let data = UnsafeRawBufferPointer(rebasing: p[(k + 8)..<end])
                if let datagram = fragments.add(key, offset: offsetAndFlags & 0xFFF8, more: offsetAndFlags & 1 != 0, data: data, time: time, counts: &counts) {
                    counts.reassembledDatagrams += 1
                    datagram.withUnsafeBytes { tcp($0, at: 0, end: $0.count, source: source, destination: destination, time: time, body) }
                }
                return
            default:
                counts.otherPackets += 1
                return
            }
        }
    }

    @inline(__always)
    mutating func tcp(_ p: UnsafeRawBufferPointer, at o: Int, end: Int, source: IPAddress, destination: IPAddress, time: Double, _ body: (TCPSegment) -> Void) {
        guard end >= o + 20 else { counts.malformed += 1; return }
        let dataOffset = Int(p[o + 12] >> 4) * 4
        guard dataOffset >= 20, end >= o + dataOffset else { counts.malformed += 1; return }
        counts.tcpSegments += 1
        let segment = TCPSegment(
            source: Endpoint(address: source, port: UInt16(p[o]) << 8 | UInt16(p[o + 1])),
            destination: Endpoint(address: destination, port: UInt16(p[o + 2]) << 8 | UInt16(p[o + 3])),
            sequence: UInt32(p[o + 4]) << 24 | UInt32(p[o + 5]) << 16 | UInt32(p[o + 6]) << 8 | UInt32(p[o + 7]),
            acknowledgment: UInt32(p[o + 8]) << 24 | UInt32(p[o + 9]) << 16 | UInt32(p[o + 10]) << 8 | UInt32(p[o + 11]),
            flags: p[o + 13],
            payload: UnsafeRawBufferPointer(rebasing: p[(o + dataOffset)..<end]),
            time: time)
        body(segment)
    }
}

/// IPv4 and IPv6 fragment reassembly (RFC 791, RFC 8200 section 4.5), bounded in the
/// number of datagrams held and in time.
struct FragmentReassembler {
    struct Key: Hashable {
        var source: IPAddress
        var destination: IPAddress
        var id: UInt32
        var proto: UInt8
    }

    struct Pending {
        var pieces: [(offset: Int, bytes: [UInt8])] = []
        var totalLength: Int?
        var firstSeen: Double
        var bytes = 0
    }

    var pending: [Key: Pending] = [:]
    static let maxDatagrams = 4096
    static let maxDatagramBytes = 65_535 + 8
    static let timeout = 30.0
    var lastSweep = 0.0

    mutating func add(_ key: Key, offset: Int, more: Bool, data: UnsafeRawBufferPointer, time: Double, counts: inout PacketCounts) -> [UInt8]? {
        if time - lastSweep > 5 {
            lastSweep = time
            let before = pending.count
            pending = pending.filter { time - $0.value.firstSeen < Self.timeout }
            counts.fragmentsExpired += before - pending.count
        }
        if pending[key] == nil {
            if pending.count >= Self.maxDatagrams, let oldest = pending.min(by: { $0.value.firstSeen < $1.value.firstSeen })?.key {
                pending[oldest] = nil
                counts.fragmentsExpired += 1
            }
            pending[key] = Pending(firstSeen: time)
        }
        guard offset + data.count <= Self.maxDatagramBytes else {
            pending[key] = nil
            counts.malformed += 1
            return nil
        }
        pending[key]!.pieces.append((offset, Array(data)))
        pending[key]!.bytes += data.count
        if !more { pending[key]!.totalLength = offset + data.count }
        guard let total = pending[key]!.totalLength, pending[key]!.bytes >= total else { return nil }
        // Overlapping fragments: the first copy of each byte wins.
        var datagram = [UInt8](repeating: 0, count: total)
        var covered = [Bool](repeating: false, count: total)
        var coveredCount = 0
        for piece in pending[key]!.pieces {
            for (k, byte) in piece.bytes.enumerated() where piece.offset + k < total && !covered[piece.offset + k] {
                datagram[piece.offset + k] = byte
                covered[piece.offset + k] = true
                coveredCount += 1
            }
        }
        guard coveredCount == total else { return nil }
        pending[key] = nil
        return datagram
    }
}
