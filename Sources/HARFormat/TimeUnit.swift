import TrafficModel

/// The unit a HAR's entry times are really in. The format says milliseconds; some
/// converters write nanoseconds or microseconds (pcap2har-go's `time` in nanoseconds read
/// a 40 ms request as eleven hours). Told from the entries' own durations against when
/// they started: durations far beyond the file's whole span that fit it once read in a
/// smaller unit are in that unit.
struct TimeUnit {
    /// What a file's millisecond figures are multiplied by.
    let scale: Double
    let name: String

    /// The unit of a file's entry times (`time`, in the file's figures), given when each
    /// entry started (seconds); nil when they read as milliseconds.
    static func of(durations: [Double], starts: [Double]) -> TimeUnit? {
        let known = durations.filter { $0.isFinite && $0 > 0 }.sorted()
        guard !known.isEmpty else { return nil }
        let median = known[known.count / 2]
        // The file's span in milliseconds: no real request takes ten minutes beyond it.
        let finite = starts.filter(\.isFinite)
        let span = ((finite.max() ?? 0) - (finite.min() ?? 0)) * 1000
        guard median > span + 600_000 else { return nil }
        // The unit in which a typical request fits the file's span (a second at least).
        for unit in [TimeUnit(scale: 1e-3, name: "microseconds"), TimeUnit(scale: 1e-6, name: "nanoseconds")] where median * unit.scale <= max(span, 1000) {
            return unit
        }
        return nil
    }

    /// The note the recording carries.
    func note(durations: [Double]) -> Diagnostic {
        let known = durations.filter { $0.isFinite && $0 > 0 }.sorted()
        let median = known.isEmpty ? 0 : known[known.count / 2]
        return Diagnostic(.timeUnitCorrected, message: "the entries' times are in \(name), not milliseconds (a median request of \(Int(median)) would take \(Self.span(median / 1000)); read in \(name), \(Self.span(median * scale / 1000))): read as \(name)")
    }

    static func span(_ seconds: Double) -> String {
        seconds >= 3600 ? "\(Int(seconds / 3600)) h" : seconds >= 1 ? "\((seconds * 10).rounded() / 10) s" : "\((seconds * 10000).rounded() / 10) ms"
    }

    /// The exchange's times in seconds once the unit is known.
    func apply(to exchange: inout Exchange) {
        exchange.duration *= scale
        if let start = exchange.responseStart { exchange.responseStart = start * scale }
    }
}
