import Foundation
import PacketCapture
import TrafficModel

/// `record -i`: packets captured on an interface through libpcap, written to a pcap file
/// as they come (`--write-pcap`, else a temporary one) and parsed live for the progress
/// line's count of exchanges, which are let go at once. The import streams that file when
/// the capture stops (`ImportPipeline.importCapture`), so memory stays flat however long
/// the capture runs.
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

    /// Opens the interface with `filter` and starts writing every packet to `dump`.
    public init(interface: String, filter: String?, dump: String, limits: ImportLimits) throws {
        do {
            source = try PcapSource.live(interface: interface, filter: filter)
            try source.writeCopy(to: dump)
        } catch {
            throw InputError(error.description)
        }
        guard PacketDecoder.supportedLinkTypes.contains(source.linkType) else {
            throw InputError("interface \(interface): link type \(source.linkTypeName) is not one h5replay reads")
        }
        self.interface = interface
        self.limits = limits
    }

    /// Captures until `stopped` says so or `limit` seconds have passed; what the kernel
    /// captured before the stop is still read, for at most a second, so that an exchange
    /// completed before Ctrl-C is kept. `show` gets a progress line twice a second.
    public func run(started: Date, limit: Double?, stopped: () -> Bool, show: (String) -> Void) -> Summary {
        var session = CaptureSession(linkType: source.linkType, options: limits.captureOptions(splitByClient: false))
        var lastShown = Date.distantPast
        var readError: String?
        var drainUntil: Date?
        while true {
            if drainUntil == nil, stopped() || limit.map({ Date().timeIntervalSince(started) >= $0 }) == true {
                drainUntil = Date().addingTimeInterval(1)
            }
            if let drainUntil, Date() >= drainUntil { break }
            do {
                let next = try source.next(wait: drainUntil == nil) { time, bytes, _ in session.packet(bytes, time: time) }
                if next == .end || (next == .timeout && drainUntil != nil) { break }
            } catch {
                readError = error.description
                break
            }
            // Counted (exchangeCount) and let go: the import reads the file afterwards.
            if !session.reassembler.sink.pending.isEmpty { session.reassembler.sink.pending.removeAll(keepingCapacity: true) }
            if Date().timeIntervalSince(lastShown) >= 0.5 {
                lastShown = Date()
                let drops = source.statistics()?.dropped ?? 0
                show("\(interface): \(session.decoder.counts.packets) packets, \(session.exchangeCount) exchanges, \(drops) dropped by the kernel, \(Int(Date().timeIntervalSince(started))) s")
            }
        }
        return finish(session, started: started, readError: readError)
    }

    /// Closes the pcap file and says what the capture lost.
    func finish(_ session: CaptureSession, started: Date, readError: String?) -> Summary {
        let stats = source.statistics()
        source.closeCopy()
        var leading: [Diagnostic] = []
        if let readError {
            leading.append(Diagnostic(.captureError, message: "capture on \(interface) stopped: \(readError)"))
        }
        if let stats, stats.dropped > 0 || stats.interfaceDropped > 0 {
            leading.append(Diagnostic(.captureDrops, message: "libpcap dropped \(stats.dropped) packets (kernel buffer full) and the interface \(stats.interfaceDropped); exchanges they touch are marked incomplete"))
        }
        return Summary(packets: session.decoder.counts.packets, elapsed: Date().timeIntervalSince(started),
                       dropped: stats?.dropped ?? 0, interfaceDropped: stats?.interfaceDropped ?? 0, leadingDiagnostics: leading)
    }
}
