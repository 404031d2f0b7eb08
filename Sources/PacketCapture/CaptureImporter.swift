import Foundation
import HTTPWire
import TrafficModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// From packets to exchanges: the decoder, TCP reassembly and the HTTP collector in one
/// streaming pipeline (docs/design.md, "Capture import and live capture"). Memory grows with the connections open at
/// once, not with the length of the capture; the caller takes exchanges as they complete
/// (`takePending`, or `CaptureImporter.stream` in time order).
public struct CaptureSession {
    public struct Options: Sendable {
        public var collector: HTTPStreamCollector.Options
        public var tcpLimits: TCPLimits
        /// One recording per client address instead of one per capture.
        public var splitByClient: Bool
        /// Packets read between hand-offs to the builder thread. Exchanges leave in time
        /// order at hand-offs only, so fewer packets hold less in memory and cost more
        /// locking.
        public var batchPackets = 2048

        public init(collector: HTTPStreamCollector.Options = .init(), tcpLimits: TCPLimits = TCPLimits(), splitByClient: Bool = false) {
            self.collector = collector
            self.tcpLimits = tcpLimits
            self.splitByClient = splitByClient
        }
    }

    public var decoder: PacketDecoder
    public var reassembler: TCPReassembler<HTTPStreamCollector>
    public let options: Options
    /// The latest packet time seen, and the furthest a packet's time went back before it:
    /// captures merged from several queues are not always in time order.
    public private(set) var latestPacketTime = -Double.infinity
    public private(set) var largestTimeStepBack = 0.0

    public init(linkType: Int32, options: Options = Options()) {
        decoder = PacketDecoder(linkType: linkType)
        reassembler = TCPReassembler(sink: HTTPStreamCollector(options: options.collector), limits: options.tcpLimits)
        self.options = options
    }

    @inline(__always)
    public mutating func packet(_ bytes: UnsafeRawBufferPointer, time: Double) {
        if time >= latestPacketTime {
            latestPacketTime = time
        } else if latestPacketTime - time > largestTimeStepBack {
            largestTimeStepBack = latestPacketTime - time
        }
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

    /// No exchange still to come started before this time: the earliest request still open
    /// on a connection, else the latest packet time less the furthest step back seen.
    public var startWatermark: Double {
        let latest = latestPacketTime - largestTimeStepBack
        guard let open = reassembler.sink.earliestOpenRequestStart else { return latest }
        return min(open, latest)
    }

    /// What the capture held that the recording does not show, as diagnostics.
    public var summaryDiagnostics: [Diagnostic] {
        var out = reassembler.sink.diagnostics
        let packets = decoder.counts
        let tcp = reassembler.counts
        let http = reassembler.sink.counts
        if http.tlsConnections > 0 {
            out.append(Diagnostic(.httpsNotDecodable, message: "\(http.tlsConnections) HTTPS connection\(http.tlsConnections == 1 ? "" : "s") (TLS) in the capture; their traffic is encrypted and not decodable, record those flows as HAR instead"))
        }
        if http.otherConnections > 0 {
            out.append(Diagnostic(.nonHttpConnections, message: "\(http.otherConnections) TCP connection\(http.otherConnections == 1 ? "" : "s") carried neither HTTP/1.x nor TLS and were skipped"))
        }
        if tcp.midStreamFlows > 0 {
            out.append(Diagnostic(.midStreamStart, message: "\(tcp.midStreamFlows) connection\(tcp.midStreamFlows == 1 ? "" : "s") began before the capture did; parsing started at the first message boundary found"))
        }
        if tcp.gaps > 0 {
            out.append(Diagnostic(.tcpGap, message: "\(tcp.gaps) gap\(tcp.gaps == 1 ? "" : "s") in TCP streams (\(tcp.gapBytes) bytes the capture does not have); the exchanges they touch are kept and marked incomplete"))
        }
        if tcp.conflictingBytes > 0 {
            out.append(Diagnostic(.tcpOverlapConflict, message: "\(tcp.conflictingBytes) retransmitted byte\(tcp.conflictingBytes == 1 ? "" : "s") differed from the first copy; the first copy was kept"))
        }
        if tcp.limitEvictions > 0 {
            out.append(Diagnostic(.flowLimit, message: "\(tcp.limitEvictions) connection\(tcp.limitEvictions == 1 ? " was" : "s were") closed early because more than \(options.tcpLimits.maxOpenFlows) were open at once (--max-open-flows)"))
        }
        if packets.malformed > 0 {
            out.append(Diagnostic(.malformedPackets, message: "\(packets.malformed) packet\(packets.malformed == 1 ? "" : "s") too short or with a bad header were skipped"))
        }
        if packets.fragmentsExpired > 0 {
            out.append(Diagnostic(.ipFragmentsIncomplete, message: "\(packets.fragmentsExpired) fragmented IP datagram\(packets.fragmentsExpired == 1 ? "" : "s") never completed and were dropped"))
        }
        return out
    }

    /// Builds the recordings from the collected exchanges: time order, sequences, then the
    /// same inference HAR import runs (initiator, body kind, frames, redirect chains).
    public func recordings(from collected: [HTTPStreamCollector.Collected], name: String, sourceFormat: String, sourcePath: String?, sourceSHA256: String?, summary: [Diagnostic]? = nil) -> [Recording] {
        let summary = summary ?? summaryDiagnostics
        if options.splitByClient {
            let groups = Dictionary(grouping: collected, by: \.client)
            if groups.count > 1 {
                return groups.keys.sorted().map { client in
                    Self.recording(groups[client]!, name: Self.recordingName(name, client: client), sourceFormat: sourceFormat, sourcePath: sourcePath, sourceSHA256: sourceSHA256, extra: summary)
                }
            }
        }
        return [Self.recording(collected, name: name, sourceFormat: sourceFormat, sourcePath: sourcePath, sourceSHA256: sourceSHA256, extra: summary)]
    }

    /// The name of one client's recording with `--split client`: NAME-ADDRESS, with the
    /// address's colons and brackets made safe for a name.
    public static func recordingName(_ name: String, client: String) -> String {
        let safe = client.replacingOccurrences(of: ":", with: "_").replacingOccurrences(of: "[", with: "").replacingOccurrences(of: "]", with: "")
        return "\(name)-\(safe)"
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
        let classified = ExchangeClassifier.classify(&exchanges)
        return Recording(name: name, sourceFormat: sourceFormat, sourcePath: sourcePath, sourceSHA256: sourceSHA256, exchanges: exchanges, diagnostics: classified + diagnostics)
    }
}

/// Reads a pcap or pcapng file into recordings.
public enum CaptureImporter {
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// `pcapng` or `pcap`, from the file's first bytes.
    public static func format(of head: Data) -> String {
        head.starts(with: [0x0A, 0x0D, 0x0D, 0x0A]) ? "pcapng" : "pcap"
    }

    /// Whether the bytes start like a pcap or pcapng file (any byte order, micro or nano).
    public static func looksLikeCapture(_ data: Data) -> Bool {
        let magics: [[UInt8]] = [[0xD4, 0xC3, 0xB2, 0xA1], [0xA1, 0xB2, 0xC3, 0xD4], [0x4D, 0x3C, 0xB2, 0xA1], [0xA1, 0xB2, 0x3C, 0x4D], [0x0A, 0x0D, 0x0D, 0x0A]]
        return magics.contains { data.starts(with: $0) }
    }

    /// What a streaming read leaves to say once every exchange is out.
    public struct StreamEnd {
        public var session: CaptureSession
        /// `pcap` or `pcapng`; `live` for a live capture.
        public var format: String
        public var sha256: String?
        /// Recording-level diagnostics: the session's summary, with a truncated file first.
        public var diagnostics: [Diagnostic]
        /// Why a live capture stopped reading early (its caller says it); nil for a file,
        /// whose read error is the first of `diagnostics`.
        public var liveReadError: String?
        /// When the last packet was read: a live capture's end, before its last exchanges
        /// are stored.
        public var readEnded: Date
    }

    /// How a live capture is read (`record -i`): until `stopped` says so or `limit`
    /// seconds have passed since `started`, then what the kernel captured before the stop,
    /// for at most a second more, so that an exchange completed before Ctrl-C is kept.
    /// `show` gets the packets, the exchanges parsed and the kernel's drops twice a second.
    public struct LiveReading: Sendable {
        public var started: Date
        public var limit: Double?
        public var stopped: @Sendable () -> Bool
        public var show: @Sendable (_ packets: Int, _ exchanges: Int, _ dropped: UInt32) -> Void

        public init(started: Date, limit: Double?, stopped: @escaping @Sendable () -> Bool, show: @escaping @Sendable (Int, Int, UInt32) -> Void) {
            self.started = started
            self.limit = limit
            self.stopped = stopped
            self.show = show
        }
    }

    /// Reads a capture and hands each exchange to `emit` in time order (start time, then
    /// the order exchanges completed: the order a whole-capture sort gives), as soon as no
    /// exchange still to come can start before it. Memory holds the open connections and
    /// the exchanges that completed while an earlier one is still open, not the capture.
    ///
    /// With `detachBodies`, bodies leave each exchange on the builder thread and `bodies`
    /// receives them (a compressed response as it crossed the wire: `StoredBody`), in
    /// completion order, before the exchange itself is emitted.
    /// `emit` may change the exchange in place (classify it) rather than copy it; once it
    /// returns, the exchange is freed on another thread. `displayPath` names the file in
    /// messages when `path` is a copy of it (a compressed capture inflated).
    public static func stream(
        path: String, displayPath: String? = nil, options: CaptureSession.Options = .init(), detachBodies: Bool = false,
        bodies: ((StoredBody) throws -> Void)? = nil,
        progress: ((Int, Int) -> Void)? = nil,
        emit: (inout HTTPStreamCollector.Collected) throws -> Void
    ) throws -> StreamEnd {
        let label = displayPath ?? path
        let source: PcapSource
        do {
            source = try PcapSource.open(file: path)
        } catch {
            throw Failure(description: displayPath.map { error.description.replacingOccurrences(of: path, with: $0) } ?? error.description)
        }
        guard PacketDecoder.supportedLinkTypes.contains(source.linkType) else {
            throw Failure(description: "\(label): link type \(source.linkTypeName) is not one h5replay reads (Ethernet, Linux cooked SLL/SLL2, BSD loopback, raw IP)")
        }
        let format = (try? FileHandle(forReadingFrom: URL(fileURLWithPath: path)).read(upToCount: 4)).flatMap { $0 }.map(Self.format(of:)) ?? "pcap"
        return try stream(source, label: label, format: format, live: nil, options: options, detachBodies: detachBodies, bodies: bodies, progress: progress, emit: emit)
    }

    /// `stream` from a source already open: a file, or with `live` an interface, whose
    /// exchanges are emitted while the capture runs, each packet parsed once.
    public static func stream(
        _ source: PcapSource, label: String, format: String, live: LiveReading?, options: CaptureSession.Options, detachBodies: Bool,
        bodies: ((StoredBody) throws -> Void)?,
        progress: ((Int, Int) -> Void)?,
        emit: (inout HTTPStreamCollector.Collected) throws -> Void
    ) throws -> StreamEnd {
        // Three threads: one reads and parses packets, one builds exchanges (content
        // decoding, hashing bodies), and this one puts exchanges in time order and hands
        // them to `emit`, which stores them; it builds too while the batch it needs next
        // is not built yet, and any of the three hashes the file when it would wait.
        let pipeline = CapturePipeline(source: source, options: options, detach: detachBodies, live: live)
        var order = TimeOrder()
        var lastProgress = 0
        // Exchanges done with, and the batches that brought them (they hold the bodies),
        // go back to the pipeline to be freed on another thread (`CapturePipeline.spent`).
        var spent: [[HTTPStreamCollector.Collected]] = []
        do {
            while true {
                var taken = pipeline.take(returning: &spent)
                for i in taken.items.indices {
                    // The exchange moves out of the batch, so that `emit` numbers and
                    // classifies the one reference in place rather than a copy of all its
                    // fields; the batch keeps the detached bodies, to be freed with it.
                    var item = Self.placeholder
                    swap(&item, &taken.items[i])
                    if let bodies {
                        // Each body handed on in place, through the buffer: a loop over
                        // the list, or its subscript, copies it (a retain and a release).
                        try item.detached.withUnsafeBufferPointer { list in
                            for k in list.indices { try bodies(list[k]) }
                        }
                    }
                    swap(&item.detached, &taken.items[i].detached)
                    order.push(consume item)
                }
                spent.append(taken.items)
                var emitted: [HTTPStreamCollector.Collected] = []
                while var item = order.pop(upTo: taken.watermark) {
                    order.noteEmitted(item.exchange.startedAt)
                    try emit(&item)
                    emitted.append(consume item)
                }
                spent.append(emitted)
                if let progress, taken.packets - lastProgress >= 65536 || options.batchPackets < 64 {
                    lastProgress = taken.packets
                    progress(taken.packets, taken.exchanges)
                }
                if taken.finished { break }
            }
        } catch {
            // The consumer refused an exchange or a body: stop the other threads first.
            pipeline.cancel()
            throw error
        }
        let (session, readError, digest, readEnded) = pipeline.result()
        progress?(session.decoder.counts.packets, session.exchangeCount)
        var diagnostics = session.summaryDiagnostics
        if order.outOfOrder > 0 {
            diagnostics.append(Diagnostic(.packetsOutOfTimeOrder, message: "\(label): packet times went back by up to \(String(format: "%.3f", session.largestTimeStepBack)) s; \(order.outOfOrder) exchange\(order.outOfOrder == 1 ? "" : "s") started before one already numbered and follow it"))
        }
        if let readError, live == nil {
            diagnostics.insert(Diagnostic(.captureTruncated, message: "\(label): reading stopped after packet \(session.decoder.counts.packets): \(readError); everything before it is kept"), at: 0)
        }
        return StreamEnd(session: session, format: format, sha256: digest, diagnostics: diagnostics, liveReadError: live == nil ? nil : readError, readEnded: readEnded)
    }

    /// Imports a capture file into recordings held in memory. `progress` is called now and
    /// then with packets and exchanges.
    ///
    /// With `bodySink`, bodies go to it as exchanges are built and the recordings hold them
    /// detached (`RecordedRequest.bodyDetached`, `RecordedResponse.detachedBody`).
    public static func read(path: String, displayPath: String? = nil, name: String, options: CaptureSession.Options = .init(), bodySink: ((StoredBody) throws -> Void)? = nil, progress: ((Int, Int) -> Void)? = nil) throws -> (recordings: [Recording], session: CaptureSession) {
        var collected: [HTTPStreamCollector.Collected] = []
        let end = try stream(path: path, displayPath: displayPath, options: options, detachBodies: bodySink != nil, bodies: bodySink, progress: progress) { collected.append($0) }
        let recordings = end.session.recordings(from: collected, name: name, sourceFormat: end.format, sourcePath: displayPath ?? path, sourceSHA256: end.sha256, summary: end.diagnostics)
        return (recordings, end.session)
    }
}

extension CaptureImporter {
    /// What a batch handed over holds in place of an exchange moved out of it.
    static let placeholder = HTTPStreamCollector.Collected(
        exchange: Exchange(sequence: 0, startedAt: 0, request: RecordedRequest(method: "GET", url: ""), response: RecordedResponse(status: 0)),
        client: "", diagnostics: [])
}

/// Exchanges waiting for their turn in time order: a binary heap on (start time, arrival)
/// over small keys, the exchanges themselves staying put in slots.
struct TimeOrder {
    struct Key {
        var time: Double
        var arrival: Int
        var slot: Int

        func before(_ other: Key) -> Bool { time < other.time || (time == other.time && arrival < other.arrival) }
    }

    var heap: [Key] = []
    var slots: [HTTPStreamCollector.Collected?] = []
    var freeSlots: [Int] = []
    var arrivals = 0
    /// The latest start time handed on, and the exchanges handed on after one that
    /// started later (packet times that went back).
    var lastEmitted = -Double.infinity
    var outOfOrder = 0

    mutating func noteEmitted(_ time: Double) {
        if time < lastEmitted { outOfOrder += 1 }
        lastEmitted = max(lastEmitted, time)
    }

    mutating func push(_ item: consuming HTTPStreamCollector.Collected) {
        let time = item.exchange.startedAt
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = consume item
        } else {
            slot = slots.count
            slots.append(consume item)
        }
        heap.append(Key(time: time, arrival: arrivals, slot: slot))
        arrivals += 1
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].before(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// The earliest exchange, when it started at or before `watermark`.
    mutating func pop(upTo watermark: Double) -> HTTPStreamCollector.Collected? {
        guard let first = heap.first, first.time <= watermark else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var best = parent
                if left < heap.count, heap[left].before(heap[best]) { best = left }
                if right < heap.count, heap[right].before(heap[best]) { best = right }
                if best == parent { break }
                heap.swapAt(parent, best)
                parent = best
            }
        }
        let item = slots[first.slot].take()
        freeSlots.append(first.slot)
        return item
    }
}

/// The reading and building threads of a streaming capture read, and what passes between
/// them and the consumer. Each queue is bounded: a slow consumer stops the building, which
/// stops the reader, rather than let memory grow.
///
/// Building a parsed batch (URLs, content decoding, body hashes) needs nothing of the
/// batches before it, and two threads do it: the builder, and the consumer whenever the
/// batch it needs next is not built yet. Batches are numbered as the reader hands them
/// over and taken in that order, whichever thread built them. With the builder alone, the
/// consumer, the lightest of the three, waited half the stage, and while it waited the
/// reader and the builder waited on each other in turn (the queue between them full, then
/// empty): a core sat idle for 9-15 % of the stage (processor time against twice the
/// wall time).
///
/// The file's SHA-256 is taken the same way, by whichever thread would otherwise wait,
/// a block at a time, read again from the page cache; the reader takes it up itself only
/// when it falls `hashLag` behind. With the building shared, the reader, which hashed each
/// block as libpcap read it, became the stage's bottleneck, and the builder waited on it
/// for a third of the stage; the builder now hashes nearly the whole file in that time.
final class CapturePipeline: @unchecked Sendable {
    struct Taken {
        var items: [HTTPStreamCollector.Collected]
        /// No exchange still to come starts before this.
        var watermark: Double
        var packets: Int
        var exchanges: Int
        /// Everything has been read and built; `items` are the last.
        var finished: Bool
    }

    /// A parsed batch, numbered in the order the reader handed it over.
    struct Parsed {
        var number: Int
        var batch: [HTTPStreamCollector.Pending]
        var watermark: Double
    }

    /// What a building thread remembers of the bodies it has met: its own, so that the two
    /// building threads share no state (a body met on the other thread is hashed again).
    struct BuildMemory {
        /// Response bodies met before.
        var repeatedBodies = RepeatedBodies()
        /// Compressed response bodies met before and what they decoded to.
        var decodings = RecentBodies<HTTPStreamCollector.Decoding>(budget: 4 << 20)
    }

    let source: PcapSource
    let options: CaptureSession.Options
    let detach: Bool
    let condition = NSCondition()
    /// Consumer to builder: exchanges stored and the batches that brought them, to be
    /// freed. Freeing an exchange (its fields, its bodies) is a fair share of an import's
    /// work, and the consumer's thread, which classifies and stores in time order, is the
    /// one the import waits on.
    ///
    /// Memory goes back to a thread that allocated much of it: an exchange to the builder,
    /// a parsed batch (`consumed`) to the reader. With glibc's malloc, a block freed on
    /// another thread than its own took that thread's arena lock, and the threads slept on
    /// each other's locks 6,000-12,000 times in a 1.5 s capture when the reader freed built
    /// exchanges and the builder parsed batches; the executables now link jemalloc, and
    /// the split stays, as each thread's freeing is work off the consumer's.
    var spent: [[HTTPStreamCollector.Collected]] = []
    /// Reader to the building threads.
    var parsed: [Parsed] = []
    /// Batches numbered so far.
    var submitted = 0
    /// Building threads to reader: parsed batches once built, to be freed.
    var consumed: [[HTTPStreamCollector.Pending]] = []
    /// Building threads to consumer: built batches by number, with their watermarks.
    var built: [Int: (items: [HTTPStreamCollector.Collected], watermark: Double)] = [:]
    /// Exchanges in `built`.
    var builtExchanges = 0
    /// The number of the batch the consumer takes next.
    var nextToTake = 0
    var packets = 0
    var exchanges = 0
    var readerDone = false
    var builderDone = false
    var cancelled = false
    var session: CaptureSession?
    var readEnded = Date()
    var readError: String?
    /// The file's SHA-256, once the reader is done.
    var digest: String?
    /// How far the reader and the building threads may run ahead. With two parsed batches
    /// and 256 built exchanges, the reader waited on a full queue and the consumer on an
    /// empty one at the same time, and a core sat idle: a tenth of a capture's time on two
    /// cores. With four and 1,024 the threads kept both cores 90-95 % busy, for 6 MB more
    /// resident memory; eight and 2,048 gained nothing more.
    static let maxParsedBatches = 4
    /// A thread holds the file's hash; the whole file is hashed; how far.
    var hashing = false
    var hashFinished = false
    var hashedBytes = 0
    /// How far the hash may fall behind the reader before the reader takes it up itself.
    static let hashLag = 16 << 20
    static let maxBuilt = 1024

    /// The builder's memory (its thread alone) and the consumer's (its thread alone).
    private var builderMemory = BuildMemory()
    private var consumerMemory = BuildMemory()

    /// How a live capture is read; nil for a file.
    let live: CaptureImporter.LiveReading?

    init(source: PcapSource, options: CaptureSession.Options, detach: Bool, live: CaptureImporter.LiveReading? = nil) {
        self.source = source
        self.options = options
        self.detach = detach
        self.live = live
        let reader = Thread { [self] in read() }
        reader.name = "h5replay-read"
        reader.start()
        let builder = Thread { [self] in build() }
        builder.name = "h5replay-build"
        builder.start()
    }

    // MARK: Reader thread

    private func read() {
        var session = CaptureSession(linkType: source.linkType, options: options)
        let error: String?
        if let live {
            error = readLive(&session, live)
        } else {
            error = readFile(&session)
        }
        let ended = Date()
        condition.lock()
        let stop = cancelled
        while hashing { condition.wait() }
        hashing = true
        condition.unlock()
        // What libpcap did not read (past a corrupt record) is hashed too.
        let digest = stop ? nil : source.finishDigest()
        condition.lock()
        hashing = false
        hashFinished = true
        condition.unlock()
        if !stop {
            session.finish()
            _ = submit(session.takePending(), watermark: .infinity, session: session)
        }
        condition.lock()
        self.session = session
        readEnded = ended
        self.digest = digest
        readError = error
        readerDone = true
        condition.broadcast()
        condition.unlock()
    }

    /// Reads a file to its end; a read error (a truncated or corrupt file) stops it, keeping
    /// everything read before the bad record.
    private func readFile(_ session: inout CaptureSession) -> String? {
        var sincePass = 0
        while true {
            let next: PcapSource.Next
            do {
                next = try source.next { time, bytes, _ in session.packet(bytes, time: time) }
            } catch let failure {
                return failure.description
            }
            if next == .end { return nil }
            sincePass += 1
            if sincePass >= options.batchPackets {
                sincePass = 0
                guard submit(session.takePending(), watermark: session.startWatermark, session: session) else { return nil }
            }
        }
    }

    /// Reads an interface until `live` says stop, then drains what the kernel holds for at
    /// most a second. Exchanges are handed on when a batch fills and whenever the
    /// interface is quiet, so that they are stored while the capture runs.
    private func readLive(_ session: inout CaptureSession, _ live: CaptureImporter.LiveReading) -> String? {
        var sincePass = 0
        var lastShown = Date.distantPast
        var drainUntil: Date?
        while true {
            // One clock read a packet: the stop, the drain and the progress line share it.
            let now = Date()
            if drainUntil == nil, live.stopped() || live.limit.map({ now.timeIntervalSince(live.started) >= $0 }) == true {
                drainUntil = now.addingTimeInterval(1)
            }
            if let drainUntil, now >= drainUntil { return nil }
            let next: PcapSource.Next
            do {
                next = try source.next(wait: drainUntil == nil) { time, bytes, _ in session.packet(bytes, time: time) }
            } catch let failure {
                return failure.description
            }
            if next == .end || (next == .timeout && drainUntil != nil) { return nil }
            if next == .packet { sincePass += 1 }
            if sincePass >= options.batchPackets || (next == .timeout && !session.reassembler.sink.pending.isEmpty) {
                sincePass = 0
                guard submit(session.takePending(), watermark: session.startWatermark, session: session) else { return nil }
            }
            if now.timeIntervalSince(lastShown) >= 0.5 {
                lastShown = now
                live.show(session.decoder.counts.packets, session.exchangeCount, source.statistics()?.dropped ?? 0)
            }
        }
    }

    /// False once the consumer has given up.
    private func submit(_ batch: [HTTPStreamCollector.Pending], watermark: Double, session: CaptureSession) -> Bool {
        var freeing: [[HTTPStreamCollector.Pending]] = []
        defer { freeing = [] }  // after the unlock below: freed outside the lock
        condition.lock()
        defer { condition.unlock() }
        while parsed.count >= Self.maxParsedBatches && !cancelled {
            if hashInsteadOfWaiting() { continue }
            condition.wait()
        }
        if cancelled { return false }
        parsed.append(Parsed(number: submitted, batch: batch, watermark: watermark))
        submitted += 1
        packets = session.decoder.counts.packets
        exchanges = session.exchangeCount
        swap(&freeing, &consumed)
        condition.broadcast()
        // The hash is the reader's to keep up when no other thread has had time for it.
        while source.bytesRead - hashedBytes > Self.hashLag, hashInsteadOfWaiting() {}
        return true
    }

    /// Hashes the file's next block, with the lock held on entry and exit, when no other
    /// thread is hashing: what a thread that would wait does instead. True when it hashed
    /// (what it waited for may have come meanwhile).
    private func hashInsteadOfWaiting() -> Bool {
        guard !hashing, !hashFinished, !cancelled else { return false }
        hashing = true
        condition.unlock()
        let (more, hashed) = source.hashNextBlock()
        condition.lock()
        hashing = false
        hashedBytes = hashed
        if !more { hashFinished = true }
        condition.broadcast()
        return true
    }

    // MARK: Building

    private func build() {
        while true {
            condition.lock()
            while (parsed.isEmpty || builtExchanges >= Self.maxBuilt) && !(parsed.isEmpty && readerDone) && !cancelled {
                if hashInsteadOfWaiting() { continue }
                condition.wait()
            }
            if cancelled || (parsed.isEmpty && readerDone) {
                builderDone = true
                condition.broadcast()
                condition.unlock()
                return
            }
            var job = parsed.removeFirst()
            // What the consumer hands back is freed here, where most of it was allocated.
            var freeing: [[HTTPStreamCollector.Collected]] = []
            swap(&freeing, &spent)
            condition.broadcast()
            condition.unlock()
            freeing = []
            let results = build(&job.batch, memory: &builderMemory)
            condition.lock()
            deliver(results, of: job)
            condition.unlock()
        }
    }

    /// Builds a parsed batch's exchanges in order, emptying the batch.
    private func build(_ batch: inout [HTTPStreamCollector.Pending], memory: inout BuildMemory) -> [HTTPStreamCollector.Collected] {
        // Each parsed exchange moved out of the batch (`popLast` takes it, in order once
        // the batch is reversed) and taken apart by `build`: its header lists become the
        // exchange's. `map`, a loop over the batch or its subscript would copy it (a
        // retain of each of its parts, and a release once built).
        var results: [HTTPStreamCollector.Collected] = []
        results.reserveCapacity(batch.count)
        // Through the buffer: `reverse()` on the array copies each exchange it moves.
        batch.withUnsafeMutableBufferPointer { $0.reverse() }
        while let pending = batch.popLast() {
            results.append(HTTPStreamCollector.build(consume pending, options: options.collector, decodings: &memory.decodings))
            // Changed in place in the list: one built, changed and then appended was copied.
            let last = results.count - 1
            if detach {
                results[last].detach(fingerprinting: &memory.repeatedBodies)
            } else {
                results[last].wireResponse = nil
                results[last].decoding = nil
            }
        }
        return results
    }

    /// Hands a built batch to the consumer, and its emptied list to the reader to free;
    /// with the lock held.
    private func deliver(_ results: [HTTPStreamCollector.Collected], of job: Parsed) {
        built[job.number] = (results, job.watermark)
        builtExchanges += results.count
        if !readerDone { consumed.append(job.batch) }
        condition.broadcast()
    }

    // MARK: Consumer

    /// The next batch in the reader's order, built by the builder or, while it is not yet,
    /// by this thread from the oldest batch still to build; takes `spent` over, to be freed
    /// on the builder's thread.
    func take(returning spent: inout [[HTTPStreamCollector.Collected]]) -> Taken {
        condition.lock()
        defer { condition.unlock() }
        if !spent.isEmpty {
            self.spent += spent
            spent.removeAll()
        }
        while true {
            if let ready = built.removeValue(forKey: nextToTake) {
                nextToTake += 1
                builtExchanges -= ready.items.count
                condition.broadcast()
                let finished = readerDone && nextToTake == submitted
                return Taken(items: ready.items, watermark: finished ? .infinity : ready.watermark, packets: packets, exchanges: exchanges, finished: finished)
            }
            if readerDone && nextToTake == submitted {
                return Taken(items: [], watermark: .infinity, packets: packets, exchanges: exchanges, finished: true)
            }
            if !parsed.isEmpty && builtExchanges < Self.maxBuilt && !cancelled {
                var job = parsed.removeFirst()
                condition.broadcast()
                condition.unlock()
                let results = build(&job.batch, memory: &consumerMemory)
                condition.lock()
                deliver(results, of: job)
                continue
            }
            if hashInsteadOfWaiting() { continue }
            condition.wait()
        }
    }

    /// Stops both threads and waits for them.
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        while !(readerDone && builderDone) { condition.wait() }
        condition.unlock()
    }

    /// After the last `take`: the session, the read error if any, the file's SHA-256, and
    /// when reading ended.
    func result() -> (CaptureSession, String?, String?, Date) {
        condition.lock()
        while !readerDone { condition.wait() }
        let session = self.session!
        let error = readError
        let digest = self.digest
        condition.unlock()
        return (session, error, digest, readEnded)
    }
}
