/// Receives the byte streams a `TCPReassembler` rebuilds.
public protocol TCPStreamSink {
    /// A new connection. `midStream` is true when the capture began after its handshake.
    mutating func opened(_ flow: TCPFlowID, client: Endpoint, server: Endpoint, midStream: Bool, time: Double)
    /// The server's SYN-ACK of a connection the capture saw open (retransmissions repeat it).
    mutating func established(_ flow: TCPFlowID, time: Double)
    /// In-order bytes of one direction. The buffer is valid only during the call.
    mutating func data(_ flow: TCPFlowID, fromClient: Bool, _ bytes: UnsafeRawBufferPointer, time: Double)
    /// `length` bytes of one direction the capture does not have.
    mutating func gap(_ flow: TCPFlowID, fromClient: Bool, length: Int, time: Double)
    /// The connection ended (FIN both ways, RST, idle eviction, or the end of the capture).
    mutating func closed(_ flow: TCPFlowID, reason: TCPCloseReason, time: Double)
}

public typealias TCPFlowID = Int

public enum TCPCloseReason: String, Sendable {
    case fin, reset, idle, evicted = "flow-limit", endOfCapture = "end-of-capture", reused = "port-reused"
}

/// Counts of what reassembly saw and did, for the import summary and diagnostics.
public struct TCPCounts: Sendable, Hashable {
    public var flows = 0
    public var midStreamFlows = 0
    public var retransmittedSegments = 0
    /// Overlapping bytes that differed from the copy already held (the first copy wins).
    public var conflictingBytes = 0
    public var gaps = 0
    public var gapBytes = 0
    public var idleEvictions = 0
    public var limitEvictions = 0
    public var reusedPorts = 0
    public var maxOpenFlows = 0
}

/// Limits that bound reassembly's memory (docs/design.md, "Reliability and security").
public struct TCPLimits: Sendable, Hashable {
    /// Connections tracked at once; past it the least recently active is closed.
    public var maxOpenFlows: Int
    /// Seconds of capture time without a packet after which a connection is closed.
    public var idleTimeout: Double
    /// Out-of-order bytes held per direction before the missing bytes are declared lost.
    public var maxPendingBytes: Int

    public init(maxOpenFlows: Int = 10_000, idleTimeout: Double = 300, maxPendingBytes: Int = 4 << 20) {
        self.maxOpenFlows = maxOpenFlows
        self.idleTimeout = idleTimeout
        self.maxPendingBytes = maxPendingBytes
    }
}

/// TCP stream reassembly per connection and direction (docs/design.md, "Capture import and live capture"): out-of-order
/// segments, retransmissions and overlaps (the first copy wins, conflicts counted),
/// sequence wrap-around, SYN/FIN/RST, mid-stream starts, gaps, port reuse, and idle
/// eviction under a bound on open connections.
public struct TCPReassembler<Sink: TCPStreamSink> {
    public var sink: Sink
    public var limits: TCPLimits
    public private(set) var counts = TCPCounts()

    struct Key: Hashable {
        var a: Endpoint
        var b: Endpoint
        init(_ x: Endpoint, _ y: Endpoint) {
            if (x.address.high, x.address.low, x.port) < (y.address.high, y.address.low, y.port) {
                a = x
                b = y
            } else {
                a = y
                b = x
            }
        }

        /// Two words into the hasher, not the eight fields one by one: every packet looks
        /// its flow up. Equality still compares every field.
        func hash(into hasher: inout Hasher) {
            hasher.combine(a.address.low ^ a.address.high &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(a.port) << 48)
            hasher.combine(b.address.low ^ b.address.high &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(b.port) << 48)
        }
    }

    struct Direction {
        /// Sequence number of the next byte expected.
        var nextSeq: UInt32 = 0
        var started = false
        /// Out-of-order data not yet deliverable, keyed by distance ahead of `nextSeq` at
        /// the time it was stored; sorted by sequence.
        var pending: [(seq: UInt32, bytes: [UInt8])] = []
        var pendingBytes = 0
        var finSeq: UInt32?
        var finished = false
    }

    /// A class, so that the per-packet path updates it in place in the table.
    ///
    /// Its fields are unchecked: only the reassembler's thread touches a flow, one access
    /// at a time, and the runtime's exclusivity check on each was two calls a packet into
    /// the runtime's access set (callgrind, the bench's capture).
    final class Flow {
        let id: TCPFlowID
        let client: Endpoint
        @exclusivity(unchecked) var toServer = Direction()
        @exclusivity(unchecked) var toClient = Direction()
        @exclusivity(unchecked) var lastSeen: Double
        @exclusivity(unchecked) var closed = false
        @exclusivity(unchecked) var clientISN: UInt32?

        init(id: TCPFlowID, client: Endpoint, lastSeen: Double) {
            self.id = id
            self.client = client
            self.lastSeen = lastSeen
        }
    }

    var flows: [Key: Flow] = [:]
    /// The flow the last packet went to: a packet's flow is most often the one before's (a
    /// body's segments, a response after its request), and found here the table is not
    /// hashed. Forgotten whenever a flow leaves the table.
    var recent: (key: Key, flow: Flow)?
    var nextID = 0
    var lastSweep = 0.0
    var now = 0.0

    public init(sink: Sink, limits: TCPLimits = TCPLimits()) {
        self.sink = sink
        self.limits = limits
    }

    public var openFlows: Int { flows.count }

    /// Well-known HTTP server ports, to tell the server of a connection seen mid-stream.
    static func isServerPort(_ port: UInt16) -> Bool {
        switch port {
        case 80, 443, 8000, 8008, 8080, 8081, 8443, 8888, 3128, 3000, 5000, 9000: return true
        default: return false
        }
    }

    public mutating func add(_ segment: TCPSegment) {
        now = segment.time
        if now - lastSweep > 10 { sweep() }
        let key = Key(segment.source, segment.destination)
        let known: Flow?
        if let recent, recent.key == key {
            known = recent.flow
        } else {
            known = flows[key]
            recent = known.map { (key, $0) }
        }
        if let flow = known {
            if segment.isSYN, !segment.isACK, flow.closed || (flow.clientISN.map { $0 != segment.sequence } ?? true) && flow.toServer.started {
                // A new connection on the same ports (RFC 9293 section 3.6.1's TIME-WAIT reuse).
                counts.reusedPorts += 1
                close(flow, key: key, reason: .reused)
                flows[key] = nil
                recent = nil
                return add(segment)
            }
            if flow.closed {
                if !segment.payload.isEmpty { counts.retransmittedSegments += 1 }
                return
            }
            flow.lastSeen = now
            let fromClient = segment.source == flow.client
            if segment.isSYN, segment.isACK, !fromClient { sink.established(flow.id, time: now) }
            if fromClient {
                receive(segment, &flow.toServer, id: flow.id, fromClient: true)
            } else {
                receive(segment, &flow.toClient, id: flow.id, fromClient: false)
            }
            if segment.isRST || flow.toServer.finished && flow.toClient.finished {
                close(flow, key: key, reason: segment.isRST ? .reset : .fin)
            }
            return
        }
        // Only a SYN or data opens a connection; a stray ACK, FIN or RST does not.
        guard segment.isSYN || !segment.payload.isEmpty, !segment.isRST else { return }
        let client: Endpoint
        let server: Endpoint
        var midStream = false
        if segment.isSYN {
            (client, server) = segment.isACK ? (segment.destination, segment.source) : (segment.source, segment.destination)
            midStream = segment.isACK
        } else {
            midStream = true
            (client, server) = Self.guessRoles(segment)
        }
        if flows.count >= limits.maxOpenFlows { evictOldest() }
        let flow = Flow(id: nextID, client: client, lastSeen: now)
        nextID += 1
        if segment.isSYN, !segment.isACK { flow.clientISN = segment.sequence }
        counts.flows += 1
        if midStream { counts.midStreamFlows += 1 }
        sink.opened(flow.id, client: client, server: server, midStream: midStream, time: now)
        let fromClient = segment.source == client
        if fromClient {
            receive(segment, &flow.toServer, id: flow.id, fromClient: true)
        } else {
            receive(segment, &flow.toClient, id: flow.id, fromClient: false)
        }
        flows[key] = flow
        recent = (key, flow)
        counts.maxOpenFlows = max(counts.maxOpenFlows, flows.count)
    }

    static func guessRoles(_ segment: TCPSegment) -> (client: Endpoint, server: Endpoint) {
        let p = segment.payload
        if p.count >= 5, p[0] == 0x48, p[1] == 0x54, p[2] == 0x54, p[3] == 0x50, p[4] == 0x2F {  // "HTTP/"
            return (segment.destination, segment.source)
        }
        var k = 0
        while k < min(p.count, 16), p[k] >= 0x41, p[k] <= 0x5A { k += 1 }
        if k >= 3, k < p.count, p[k] == 0x20 { return (segment.source, segment.destination) }
        let sourceIsServer = isServerPort(segment.source.port)
        let destinationIsServer = isServerPort(segment.destination.port)
        if sourceIsServer != destinationIsServer {
            return sourceIsServer ? (segment.destination, segment.source) : (segment.source, segment.destination)
        }
        return segment.source.port < segment.destination.port ? (segment.destination, segment.source) : (segment.source, segment.destination)
    }

    /// Sequence distance from `a` to `b`, with wrap-around (RFC 1982 serial arithmetic).
    @inline(__always)
    static func distance(_ a: UInt32, _ b: UInt32) -> Int { Int(Int32(bitPattern: b &- a)) }

    mutating func receive(_ segment: TCPSegment, _ d: inout Direction, id: TCPFlowID, fromClient: Bool) {
        // A SYN takes one sequence number; data starts after it.
        let seq = segment.isSYN ? segment.sequence &+ 1 : segment.sequence
        if !d.started {
            d.nextSeq = seq
            d.started = true
        }
        let payload = segment.payload
        if !payload.isEmpty, !d.finished {
            accept(seq, payload, &d, id: id, fromClient: fromClient)
        }
        if segment.isFIN {
            d.finSeq = seq &+ UInt32(truncatingIfNeeded: payload.count)
        }
        if let fin = d.finSeq, !d.finished {
            if d.pending.isEmpty, Self.distance(d.nextSeq, fin) <= 0 {
                d.finished = true
            }
        }
    }

    mutating func accept(_ seq: UInt32, _ payload: UnsafeRawBufferPointer, _ d: inout Direction, id: TCPFlowID, fromClient: Bool) {
        let start = Self.distance(d.nextSeq, seq)
        let end = start + payload.count
        if end <= 0 {
            counts.retransmittedSegments += 1
            return
        }
        if start <= 0 {
            // In order, possibly overlapping bytes already delivered: deliver the new part
            // straight from the packet, without copying.
            if start < 0 { counts.retransmittedSegments += 1 }
            let fresh = UnsafeRawBufferPointer(rebasing: payload[(-start)...])
            d.nextSeq = d.nextSeq &+ UInt32(truncatingIfNeeded: fresh.count)
            sink.data(id, fromClient: fromClient, fresh, time: now)
            drain(&d, id: id, fromClient: fromClient)
            return
        }
        // Ahead of what is expected: hold it, keeping the first copy of every byte.
        store(seq, payload, &d)
        if d.pendingBytes > limits.maxPendingBytes {
            // The missing bytes are not coming (the capture dropped them): declare a gap.
            skipToPending(&d, id: id, fromClient: fromClient)
        }
    }

    /// Inserts out-of-order bytes, trimming what overlaps bytes already held.
    mutating func store(_ seq: UInt32, _ payload: UnsafeRawBufferPointer, _ d: inout Direction) {
        var pieces: [(seq: UInt32, bytes: ArraySlice<UInt8>)] = [(seq, ArraySlice(payload))]
        // Cut the new data around every held piece it overlaps.
        for held in d.pending {
            var next: [(seq: UInt32, bytes: ArraySlice<UInt8>)] = []
            for piece in pieces {
                let heldStart = Self.distance(d.nextSeq, held.seq)
                let heldEnd = heldStart + held.bytes.count
                let pieceStart = Self.distance(d.nextSeq, piece.seq)
                let pieceEnd = pieceStart + piece.bytes.count
                if pieceEnd <= heldStart || pieceStart >= heldEnd {
                    next.append(piece)
                    continue
                }
                let overlapStart = max(pieceStart, heldStart)
                let overlapEnd = min(pieceEnd, heldEnd)
                var differing = 0
                for k in overlapStart..<overlapEnd where piece.bytes[piece.bytes.startIndex + k - pieceStart] != held.bytes[k - heldStart] {
                    differing += 1
                }
                counts.conflictingBytes += differing
                if pieceStart < heldStart {
                    next.append((piece.seq, piece.bytes.prefix(heldStart - pieceStart)))
                }
                if pieceEnd > heldEnd {
                    next.append((held.seq &+ UInt32(held.bytes.count), piece.bytes.suffix(pieceEnd - heldEnd)))
                }
            }
            pieces = next
            if pieces.isEmpty {
                counts.retransmittedSegments += 1
                return
            }
        }
        for piece in pieces {
            let distance = Self.distance(d.nextSeq, piece.seq)
            let index = d.pending.firstIndex { Self.distance(d.nextSeq, $0.seq) > distance } ?? d.pending.count
            d.pending.insert((piece.seq, Array(piece.bytes)), at: index)
            d.pendingBytes += piece.bytes.count
        }
    }

    /// Delivers held data that has become contiguous.
    mutating func drain(_ d: inout Direction, id: TCPFlowID, fromClient: Bool) {
        while let first = d.pending.first {
            let start = Self.distance(d.nextSeq, first.seq)
            if start > 0 { return }
            d.pending.removeFirst()
            d.pendingBytes -= first.bytes.count
            let skip = -start
            guard skip < first.bytes.count else { continue }
            // Bytes already delivered are compared: the first copy wins.
            first.bytes.withUnsafeBytes { raw in
                let fresh = UnsafeRawBufferPointer(rebasing: raw[skip...])
                d.nextSeq = d.nextSeq &+ UInt32(truncatingIfNeeded: fresh.count)
                sink.data(id, fromClient: fromClient, fresh, time: now)
            }
        }
    }

    /// Declares the bytes before the first held piece lost, then delivers what follows.
    mutating func skipToPending(_ d: inout Direction, id: TCPFlowID, fromClient: Bool) {
        while let first = d.pending.first {
            let missing = Self.distance(d.nextSeq, first.seq)
            if missing > 0 {
                counts.gaps += 1
                counts.gapBytes += missing
                sink.gap(id, fromClient: fromClient, length: missing, time: now)
                d.nextSeq = first.seq
            }
            drain(&d, id: id, fromClient: fromClient)
            if d.pendingBytes <= limits.maxPendingBytes / 2 { return }
        }
    }

    mutating func close(_ flow: Flow, key: Key, reason: TCPCloseReason) {
        guard !flow.closed else { return }
        // Whatever is still held comes after a gap.
        let id = flow.id
        flushPending(&flow.toServer, id: id, fromClient: true)
        flushPending(&flow.toClient, id: id, fromClient: false)
        if reason == .fin || reason == .reset {
            // A FIN whose sequence lies past the data seen means bytes before it were lost.
            for fromClient in [true, false] {
                let d = fromClient ? flow.toServer : flow.toClient
                if let fin = d.finSeq, d.started {
                    let missing = Self.distance(d.nextSeq, fin)
                    if missing > 0, missing < 1 << 30 {
                        counts.gaps += 1
                        counts.gapBytes += missing
                        sink.gap(flow.id, fromClient: fromClient, length: missing, time: now)
                    }
                }
            }
        }
        flow.closed = true
        flow.toServer = Direction()
        flow.toClient = Direction()
        sink.closed(flow.id, reason: reason, time: now)
    }

    mutating func flushPending(_ d: inout Direction, id: TCPFlowID, fromClient: Bool) {
        guard !d.pending.isEmpty else { return }
        let saved = limits.maxPendingBytes
        limits.maxPendingBytes = 0
        skipToPending(&d, id: id, fromClient: fromClient)
        limits.maxPendingBytes = saved
    }

    /// Closes connections idle past the timeout, and forgets closed ones.
    mutating func sweep() {
        lastSweep = now
        recent = nil
        for key in Array(flows.keys) {
            guard let flow = flows[key] else { continue }
            if now - flow.lastSeen > limits.idleTimeout || flow.closed && now - flow.lastSeen > 60 {
                if !flow.closed {
                    counts.idleEvictions += 1
                    close(flow, key: key, reason: .idle)
                }
                flows[key] = nil
            }
        }
    }

    /// Makes room under the flow limit: forgets closed connections first, then closes the
    /// least recently active tenth.
    mutating func evictOldest() {
        recent = nil
        for (key, flow) in flows where flow.closed { flows[key] = nil }
        guard flows.count >= limits.maxOpenFlows else { return }
        let victims = flows.sorted { $0.value.lastSeen < $1.value.lastSeen }.prefix(max(1, limits.maxOpenFlows / 10))
        for (key, _) in victims {
            guard let flow = flows[key] else { continue }
            counts.limitEvictions += 1
            close(flow, key: key, reason: .evicted)
            flows[key] = nil
        }
    }

    /// The end of the capture: closes every open connection, in the order they opened.
    public mutating func finish() {
        // The flows sorted with their keys: a comparison that looked both flows up by key
        // cost two hash lookups each.
        for (key, flow) in flows.sorted(by: { $0.value.id < $1.value.id }) {
            close(flow, key: key, reason: .endOfCapture)
        }
        flows = [:]
        recent = nil
    }
}
