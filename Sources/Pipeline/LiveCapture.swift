import Foundation
import PacketCapture
import ReportStore
import TrafficModel

/// `record -i`: packets captured on an interface through libpcap and imported as they
/// come (`ImportPipeline.importLive`): each packet is parsed once, by the same streaming
/// pipeline a capture file goes through, and each exchange stored in time order while
/// the capture runs (into a scratch database, copied into the store at the end), so
/// memory stays flat however long it runs. With `--write-pcap` every packet is also
/// written to a pcap file, which is not read back.
public final class LiveCapture {
    /// What the capture came to, for `record` to say and the recording to keep.
    public struct Summary: Sendable {
        public var packets: Int
        public var elapsed: Double
        public var dropped: UInt32
        public var interfaceDropped: UInt32
        /// What the recording says first: a read that failed, packets libpcap dropped.
        public var leadingDiagnostics: [Diagnostic]
    }

    public let interface: String
    let source: PcapSource
    let limits: ImportLimits
    /// The pcap file every packet is written to; nil when none is kept.
    let dump: String?

    /// Opens the interface with `filter`, and starts writing every packet to `dump` when
    /// one is given.
    public init(interface: String, filter: String?, dump: String?, limits: ImportLimits) throws {
        do {
            source = try PcapSource.live(interface: interface, filter: filter)
            if let dump { try source.writeCopy(to: dump) }
        } catch {
            throw InputError(error.description)
        }
        guard PacketDecoder.supportedLinkTypes.contains(source.linkType) else {
            throw InputError("interface \(interface): link type \(source.linkTypeName) is not one h5replay reads")
        }
        self.interface = interface
        self.limits = limits
        self.dump = dump
    }

    /// How the capture reads: until `stopped` says so or `limit` seconds have passed, then
    /// what the kernel captured before the stop, for at most a second, so that an
    /// exchange completed before Ctrl-C is kept. `show` gets a progress line twice a second.
    func reading(started: Date, limit: Double?, stopped: @escaping @Sendable () -> Bool, show: @escaping @Sendable (String) -> Void) -> CaptureImporter.LiveReading {
        CaptureImporter.LiveReading(started: started, limit: limit, stopped: stopped) { [interface] packets, exchanges, drops in
            show("\(interface): \(packets) packets, \(exchanges) exchanges, \(drops) dropped by the kernel, \(Int(Date().timeIntervalSince(started))) s")
        }
    }

    /// Closes the pcap file and says what the capture lost.
    func finish(_ end: CaptureImporter.StreamEnd, started: Date) -> Summary {
        let stats = source.statistics()
        source.closeCopy()
        var leading: [Diagnostic] = []
        if let readError = end.liveReadError {
            leading.append(Diagnostic(.captureError, message: "capture on \(interface) stopped: \(readError)"))
        }
        if let stats, stats.dropped > 0 || stats.interfaceDropped > 0 {
            leading.append(Diagnostic(.captureDrops, message: "libpcap dropped \(stats.dropped) packets (kernel buffer full) and the interface \(stats.interfaceDropped); exchanges they touch are marked incomplete"))
        }
        return Summary(packets: end.session.decoder.counts.packets, elapsed: end.readEnded.timeIntervalSince(started),
                       dropped: stats?.dropped ?? 0, interfaceDropped: stats?.interfaceDropped ?? 0, leadingDiagnostics: leading)
    }
}

extension ImportPipeline {
    /// Captures with `capture` and imports what it captures as it comes: every exchange
    /// classified and stored as for a capture file, under `name` (one recording per client
    /// with `splitByClient`), into a scratch database in the temporary folder while the
    /// capture runs, then copied into `store` in one transaction once it stops, so that
    /// `store`'s write lock is not held while the capture runs. Returns what the capture
    /// came to and what was stored.
    public func importLive(
        _ capture: LiveCapture, started: Date, limit: Double?, stopped: @escaping @Sendable () -> Bool, show: @escaping @Sendable (String) -> Void,
        name: String, replace: Bool, splitByClient: Bool, redact: SecretNames?, into store: ReportStore
    ) throws -> (LiveCapture.Summary, [(ImportedRecording, ReportStore.ImportResult)]) {
        let label = capture.dump ?? capture.interface
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-record-\(UUID().uuidString).sqlite").path
        defer {
            for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: scratch + suffix) }
        }
        let target = StreamTarget(format: "live", recordedPath: capture.dump, label: label, name: name, replace: false, splitByClient: splitByClient, redact: redact)
        var summary: LiveCapture.Summary?
        let imported = try importStream(target, into: try ReportStore.open(path: scratch, newFile: .rollbackJournal)) { bodies, emit in
            // `stream` keeps the body closure no longer than the call.
            let end = try withoutActuallyEscaping(bodies) { bodies in
                try CaptureImporter.stream(
                    capture.source, label: label, format: "live", live: capture.reading(started: started, limit: limit, stopped: stopped, show: show),
                    options: limits.captureOptions(splitByClient: splitByClient), detachBodies: true, bodies: bodies, progress: nil, emit: emit)
            }
            let finished = capture.finish(end, started: started)
            summary = finished
            return (end, finished.leadingDiagnostics, nil)
        }
        do {
            let results = try store.copyRecordings(named: imported.map { $0.0.name }, from: scratch, replace: replace)
            return (summary!, Array(zip(imported.map { $0.0 }, results)))
        } catch let error as ReportStore.NameTaken {
            throw InputError(file: label, problem: error.description)
        }
    }
}
