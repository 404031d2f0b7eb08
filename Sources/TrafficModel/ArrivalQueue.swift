/// Responses whose Set-Cookie has not reached the jar yet. A browser stores a response's
/// cookies when its head arrives (`Exchange.responseArrivedAt`), not when its request
/// left: a request sent while a response was still on its way went without its cookies,
/// whatever order the requests started in. The cookie provenance walker and the emulator
/// hold each response here and let it into their jars before the first request that left
/// after it arrived, so both read the recording's clock alike.
public struct ArrivalQueue<Payload> {
    struct Waiting {
        var at: Double
        var sequence: Int
        var chainStart: Int?
        var payload: Payload
    }

    /// Pending responses, in arrival order (by sequence where they arrived together).
    private var waiting: [Waiting] = []

    /// Recordings stamp times in milliseconds: a request that started within this of a
    /// response's arrival is taken to have left after it.
    public static var tolerance: Double { 0.002 }

    public init() {}

    public var isEmpty: Bool { waiting.isEmpty }

    /// Holds `payload`, the response of `exchange`, until it arrives.
    public mutating func hold(_ payload: Payload, of exchange: Exchange) {
        let item = Waiting(at: exchange.responseArrivedAt, sequence: exchange.sequence, chainStart: exchange.redirect?.chainStart, payload: payload)
        var i = waiting.count
        while i > 0, (waiting[i - 1].at, waiting[i - 1].sequence) > (item.at, item.sequence) { i -= 1 }
        waiting.insert(item, at: i)
    }

    /// The responses that arrived before `exchange`'s request left, in arrival order: those
    /// that arrived by its start, and every earlier hop of its redirect chain (the browser
    /// sent this hop because that response came).
    public mutating func arrived(before exchange: Exchange) -> [Payload] {
        guard !waiting.isEmpty else { return [] }
        let time = exchange.startedAt + Self.tolerance
        let chain = (exchange.redirect?.hop ?? 0) > 0 ? exchange.redirect?.chainStart : nil
        var out: [Payload] = []
        if waiting[0].at <= time || chain != nil {
            var kept: [Waiting] = []
            kept.reserveCapacity(waiting.count)
            for item in waiting {
                if item.at <= time || (chain != nil && item.chainStart == chain) { out.append(item.payload) } else { kept.append(item) }
            }
            waiting = kept
        }
        return out
    }

    /// The responses held up to and including the place of `exchange`'s response, in
    /// arrival order: a later request carried a cookie only that response set, so it had
    /// arrived, and so had those expected before it.
    public mutating func arrived(through exchange: Exchange) -> [Payload] {
        let place = (exchange.responseArrivedAt, exchange.sequence)
        guard let first = waiting.first, (first.at, first.sequence) <= place else { return [] }
        let end = waiting.firstIndex { ($0.at, $0.sequence) > place } ?? waiting.count
        defer { waiting.removeFirst(end) }
        return waiting[..<end].map(\.payload)
    }

    /// The first response held, in arrival order, that `matches`.
    public func first(where matches: (Payload) -> Bool) -> Payload? {
        waiting.first { matches($0.payload) }?.payload
    }

    /// Every response still held, in arrival order: the recording is over.
    public mutating func all() -> [Payload] {
        defer { waiting = [] }
        return waiting.map(\.payload)
    }
}
