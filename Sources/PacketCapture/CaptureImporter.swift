import Foundation
import HTTPWire
import TrafficModel

/// From packets to recordings: the decoder, TCP reassembly and the HTTP collector in one
/// streaming pipeline (DESIGN.md section 3). Memory grows with the connections open at
/// once, not with the length of the capture, except for the exchanges themselves, which
/// the caller takes as they complete (`takeCompleted`).
public struct CaptureSession {
    public struct Options: Sendable {
        public var collector: HTTPStreamCollector.Options
        public var tcpLimits: TCPLimits
        /// One recording per client address instead of one per capture.
        public var splitByClient: Bool

        public init(collector: HTTPStreamCollector.Options = .init(), tcpLimits: TCPLimits = TCPLimits(), splitByClient: Bool = false) {
            self.collector = collector
            self.tcpLimits = tcpLimits
            self.splitByClient = splitByClient
        }
    }

    public var decoder: PacketDecoder
    public var reassembler: TCPReassembler<HTTPStreamCollector>
    public let options: Options
    public private(set) var firstPacketTime: Double?
    public private(set) var lastPacketTime: Double?

    public init(linkType: Int32, options: Options = Options()) {
        decoder = PacketDecoder(linkType: linkType)
        reassembler = TCPReassembler(sink: HTTPStreamCollector(options: options.collector), limits: options.tcpLimits)
        self.options = options
    }

    @inline(__always)
    public mutating func packet(_ bytes: UnsafeRawBufferPointer, time: Double) {
        if firstPacketTime == nil { firstPacketTime = time }
        lastPacketTime = time
        decoder.decode(bytes, time: time) { segment in reassembler.add(segment) }
    }

    /// Ends the capture: closes every connection and delivers what is left.
    public mutating func finish() {
        reassembler.finish()
    }

    /// Exchanges parsed since the last call, not yet built.
    public mutating func takePending() -> [HTTPStreamCollector.Pending] {
        let taken = reassembler.sink.pending
        reassembler.sink.pending.removeAll(keepingCapacity: true)
        return taken
    }

    /// Exchanges completed since the last call, built on this thread.
    public mutating func takeCompleted() -> [HTTPStreamCollector.Collected] {
        takePending().map { HTTPStreamCollector.build($0, options: options.collector) }
    }

    public var exchangeCount: Int { reassembler.sink.counts.exchanges }

    /// What the capture held that the recording does not show, as diagnostics.
    public var summaryDiagnostics: [Diagnostic] {
        var out = reassembler.sink.diagnostics
        let packets = decoder.counts
        let tcp = reassembler.counts
        let http = reassembler.sink.counts
        if http.tlsConnections > 0 {
            out.append(Diagnostic(.warning, code: "https-not-decodable", message: "\(http.tlsConnections) HTTPS connection\(http.tlsConnections == 1 ? "" : "s") (TLS) in the capture; their traffic is encrypted and not decodable, record those flows as HAR instead"))
        }
        if http.otherConnections > 0 {
            out.append(Diagnostic(.note, code: "non-http-connections", message: "\(http.otherConnections) TCP connection\(http.otherConnections == 1 ? "" : "s") carried neither HTTP/1.x nor TLS and were skipped"))
        }
        if tcp.midStreamFlows > 0 {
            out.append(Diagnostic(.note, code: "mid-stream-start", message: "\(tcp.midStreamFlows) connection\(tcp.midStreamFlows == 1 ? "" : "s") began before the capture did; parsing started at the first message boundary found"))
        }
        if tcp.gaps > 0 {
            out.append(Diagnostic(.warning, code: "tcp-gap", message: "\(tcp.gaps) gap\(tcp.gaps == 1 ? "" : "s") in TCP streams (\(tcp.gapBytes) bytes the capture does not have); the exchanges they touch are kept and marked incomplete"))
        }
        if tcp.conflictingBytes > 0 {
            out.append(Diagnostic(.warning, code: "tcp-overlap-conflict", message: "\(tcp.conflictingBytes) retransmitted byte\(tcp.conflictingBytes == 1 ? "" : "s") differed from the first copy; the first copy was kept"))
        }
        if tcp.limitEvictions > 0 {
            out.append(Diagnostic(.warning, code: "flow-limit", message: "\(tcp.limitEvictions) connection\(tcp.limitEvictions == 1 ? " was" : "s were") closed early because more than \(options.tcpLimits.maxOpenFlows) were open at once (--max-open-flows)"))
        }
        if packets.malformed > 0 {
            out.append(Diagnostic(.warning, code: "malformed-packets", message: "\(packets.malformed) packet\(packets.malformed == 1 ? "" : "s") too short or with a bad header were skipped"))
        }
        if packets.fragmentsExpired > 0 {
            out.append(Diagnostic(.warning, code: "ip-fragments-incomplete", message: "\(packets.fragmentsExpired) fragmented IP datagram\(packets.fragmentsExpired == 1 ? "" : "s") never completed and were dropped"))
        }
        return out
    }

    /// Builds the recordings from the collected exchanges: time order, sequences, then the
    /// same inference HAR import runs (initiator, body kind, frames, redirect chains).
    public func recordings(from collected: [HTTPStreamCollector.Collected], name: String, sourceFormat: String, sourcePath: String?, sourceSHA256: String?) -> [Recording] {
        let summary = summaryDiagnostics
        if options.splitByClient {
            let groups = Dictionary(grouping: collected, by: \.client)
            if groups.count > 1 {
                return groups.keys.sorted().map { client in
                    let safe = client.replacingOccurrences(of: ":", with: "_").replacingOccurrences(of: "[", with: "").replacingOccurrences(of: "]", with: "")
                    return Self.recording(groups[client]!, name: "\(name)-\(safe)", sourceFormat: sourceFormat, sourcePath: sourcePath, sourceSHA256: sourceSHA256, extra: summary)
                }
            }
        }
        return [Self.recording(collected, name: name, sourceFormat: sourceFormat, sourcePath: sourcePath, sourceSHA256: sourceSHA256, extra: summary)]
    }

    static func recording(_ collected: [HTTPStreamCollector.Collected], name: String, sourceFormat: String, sourcePath: String?, sourceSHA256: String?, extra: [Diagnostic]) -> Recording {
        let ordered = collected.enumerated().sorted {
            ($0.element.exchange.startedAt, $0.offset) < ($1.element.exchange.startedAt, $1.offset)
        }.map(\.element)
        var exchanges: [Exchange] = []
        exchanges.reserveCapacity(ordered.count)
        var diagnostics = extra
        for (sequence, item) in ordered.enumerated() {
            var exchange = item.exchange
            exchange.sequence = sequence
            exchanges.append(exchange)
            for var d in item.diagnostics {
                d.sequence = sequence
                diagnostics.append(d)
            }
        }
        ExchangeClassifier.classify(&exchanges)
        return Recording(name: name, sourceFormat: sourceFormat, sourcePath: sourcePath, sourceSHA256: sourceSHA256, exchanges: exchanges, diagnostics: diagnostics)
    }
}

/// Reads a pcap or pcapng file into recordings.
public enum CaptureImporter {
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// Whether the bytes start like a pcap or pcapng file (any byte order, micro or nano).
    public static func looksLikeCapture(_ data: Data) -> Bool {
        let magics: [[UInt8]] = [[0xD4, 0xC3, 0xB2, 0xA1], [0xA1, 0xB2, 0xC3, 0xD4], [0x4D, 0x3C, 0xB2, 0xA1], [0xA1, 0xB2, 0x3C, 0x4D], [0x0A, 0x0D, 0x0D, 0x0A]]
        return magics.contains { data.starts(with: $0) }
    }

    /// Imports a capture file. `progress` is called now and then with packets and exchanges.
    ///
    /// With `bodySink`, bodies go to it as exchanges are built and the recordings hold them
    /// detached (`RecordedRequest.bodyDetached`, `RecordedResponse.detachedBody`): memory
    /// then depends on the connections open at once, not on the size of the capture.
    public static func read(path: String, name: String, options: CaptureSession.Options = .init(), bodySink: ((Data, BodyFingerprint) throws -> Void)? = nil, progress: ((Int, Int) -> Void)? = nil) throws -> (recordings: [Recording], session: CaptureSession) {
        let source: PcapSource
        do {
            source = try PcapSource.open(file: path)
        } catch {
            throw Failure(description: error.description)
        }
        guard PacketDecoder.supportedLinkTypes.contains(source.linkType) else {
            throw Failure(description: "\(path): link type \(source.linkTypeName) is not one h5replay reads (Ethernet, Linux cooked SLL/SLL2, BSD loopback, raw IP)")
        }
        let format = (try? FileHandle(forReadingFrom: URL(fileURLWithPath: path)).read(upToCount: 4)).flatMap { $0 }.map { $0.starts(with: [0x0A, 0x0D, 0x0D, 0x0A]) ? "pcapng" : "pcap" } ?? "pcap"
        var session = CaptureSession(linkType: source.linkType, options: options)
        // Parsing stays on this thread; building exchanges (content decoding, hashing)
        // runs on a second one, fed in batches through a bounded queue.
        let builder = BuildPipeline(options: options.collector, detach: bodySink != nil, hashing: path)
        var collected: [HTTPStreamCollector.Collected] = []
        func take(_ batch: [HTTPStreamCollector.Collected]) throws {
            guard let bodySink else { return collected.append(contentsOf: batch) }
            for var item in batch {
                for (data, fingerprint) in item.detached { try bodySink(data, fingerprint) }
                item.detached = []
                collected.append(item)
            }
        }
        var sincePass = 0
        var passes = 0
        var readError: String?
        while true {
            let next: PcapSource.Next
            do {
                next = try source.next { time, bytes, _ in session.packet(bytes, time: time) }
            } catch {
                // A truncated or corrupt file: keep everything read before the bad record.
                readError = error.description
                break
            }
            if next == .end { break }
            sincePass += 1
            if sincePass == 2048 {
                sincePass = 0
                builder.submit(session.takePending())
                do {
                    try take(builder.takeBuilt())
                } catch {
                    // The store refused a body: stop the builder thread before giving up.
                    _ = builder.finish()
                    throw error
                }
                passes += 1
                if passes & 31 == 0 { progress?(session.decoder.counts.packets, session.exchangeCount) }
            }
        }
        session.finish()
        builder.submit(session.takePending())
        let (rest, digest) = builder.finish()
        try take(rest)
        progress?(session.decoder.counts.packets, session.exchangeCount)
        var recordings = session.recordings(from: collected, name: name, sourceFormat: format, sourcePath: path, sourceSHA256: digest)
        if let readError {
            for k in recordings.indices {
                recordings[k].diagnostics.insert(Diagnostic(.warning, code: "capture-truncated", message: "\(path): reading stopped after packet \(session.decoder.counts.packets): \(readError); everything before it is kept"), at: 0)
            }
        }
        return (recordings, session)
    }

}

/// Builds exchanges on a second thread, in submission order, with at most a few batches
/// waiting: the reader blocks rather than let memory grow. While idle it hashes the source
/// file, so that the recording's SHA-256 costs the reading thread nothing.
final class BuildPipeline: @unchecked Sendable {
    let options: HTTPStreamCollector.Options
    let detach: Bool
    let condition = NSCondition()
    var queue: [[HTTPStreamCollector.Pending]] = []
    var done = false
    var finished = false
    var built: [HTTPStreamCollector.Collected] = []
    var file: FileHandle?
    var hasher = StreamingSHA256()
    static let maxWaiting = 4

    init(options: HTTPStreamCollector.Options, detach: Bool, hashing path: String) {
        self.options = options
        self.detach = detach
        self.file = FileHandle(forReadingAtPath: path)
        let thread = Thread { [self] in run() }
        thread.name = "h5replay-build"
        thread.start()
    }

    func submit(_ batch: [HTTPStreamCollector.Pending]) {
        guard !batch.isEmpty else { return }
        condition.lock()
        while queue.count >= Self.maxWaiting { condition.wait() }
        queue.append(batch)
        condition.broadcast()
        condition.unlock()
    }

    /// What has been built so far, in order.
    func takeBuilt() -> [HTTPStreamCollector.Collected] {
        condition.lock()
        defer { condition.unlock() }
        let taken = built
        built.removeAll(keepingCapacity: true)
        return taken
    }

    /// Waits for every batch to be built; returns what is left and the file's SHA-256.
    func finish() -> ([HTTPStreamCollector.Collected], String?) {
        condition.lock()
        done = true
        condition.broadcast()
        while !finished { condition.wait() }
        let result = built
        built = []
        condition.unlock()
        return (result, file == nil ? hasher.finalizeHex() : nil)
    }

    /// Hashes the next block of the source file; false when the file is done.
    private func hashBlock() -> Bool {
        guard let handle = file else { return false }
        if let block = try? handle.read(upToCount: 4 << 20), !block.isEmpty {
            hasher.update(block)
            return true
        }
        try? handle.close()
        file = nil
        return false
    }

    private func run() {
        while true {
            condition.lock()
            while queue.isEmpty && !done {
                if file != nil {
                    condition.unlock()
                    _ = hashBlock()
                    condition.lock()
                    continue
                }
                condition.wait()
            }
            if queue.isEmpty && done {
                condition.unlock()
                while hashBlock() {}
                condition.lock()
                finished = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let batch = queue.removeFirst()
            condition.broadcast()
            condition.unlock()
            let results = batch.map { pending -> HTTPStreamCollector.Collected in
                var item = HTTPStreamCollector.build(pending, options: options)
                if detach { item.detach() }
                return item
            }
            condition.lock()
            built.append(contentsOf: results)
            condition.unlock()
        }
    }
}
