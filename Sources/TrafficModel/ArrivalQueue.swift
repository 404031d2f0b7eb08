/// Responses whose Set-Cookie has not reached the jar yet. A browser stores a response's
/// cookies when its head arrives (`Exchange.responseArrivedAt`), not when its request
/// left: a request sent while a response was still on its way went without its cookies,
/// whatever order the requests started in. The cookie provenance walker and the emulator
/// hold each response here and let it into their jars before the first request that left
/// after it arrived, so both read the recording's clock alike.
///
/// Inlinable: the emulator holds one per preset and recording and asks at every exchange;
/// a generic type's unspecialized code looks its metadata up at each call.
public struct ArrivalQueue<Payload> {
    @usableFromInline struct Waiting {
        @usableFromInline var at: Double
        @usableFromInline var sequence: Int
        @usableFromInline var chainStart: Int?
        @usableFromInline var payload: Payload

        @inlinable init(at: Double, sequence: Int, chainStart: Int?, payload: Payload) {
            (self.at, self.sequence, self.chainStart, self.payload) = (at, sequence, chainStart, payload)
        }
    }

    /// Pending responses, in arrival order (by sequence where they arrived together).
    @usableFromInline var waiting: [Waiting] = []

    /// Recordings stamp times in milliseconds: a request that started within this of a
    /// response's arrival is taken to have left after it.
    @inlinable public static var tolerance: Double { 0.002 }

    @inlinable public init() {}

    @inlinable public var isEmpty: Bool { waiting.isEmpty }

    /// Holds `payload`, the response of `exchange`, until it arrives.
    @inlinable public mutating func hold(_ payload: Payload, of exchange: Exchange) {
        let item = Waiting(at: exchange.responseArrivedAt, sequence: exchange.sequence, chainStart: exchange.redirect?.chainStart, payload: payload)
        var i = waiting.count
        while i > 0, (waiting[i - 1].at, waiting[i - 1].sequence) > (item.at, item.sequence) { i -= 1 }
        waiting.insert(item, at: i)
    }

    /// The responses that arrived before `exchange`'s request left, in arrival order: those
    /// that arrived by its start, and every earlier hop of its redirect chain (the browser
    /// sent this hop because that response came).
    @inlinable public mutating func arrived(before exchange: Exchange) -> [Payload] {
        var out: [Payload] = []
        land(before: exchange) { out.append($0) }
        return out
    }

    /// Hands `body` the responses `arrived(before:)` gives, in the same order, without a
    /// list: the emulator asks once per exchange and preset.
    @inlinable public mutating func land(before exchange: Exchange, _ body: (Payload) -> Void) {
        guard !waiting.isEmpty else { return }
        let time = exchange.startedAt + Self.tolerance
        let chain = (exchange.redirect?.hop ?? 0) > 0 ? exchange.redirect?.chainStart : nil
        guard let chain else {
            // In arrival order, so what arrived is a prefix.
            var end = 0
            while end < waiting.count, waiting[end].at <= time { body(waiting[end].payload); end += 1 }
            if end > 0 { waiting.removeFirst(end) }
            return
        }
        var kept: [Waiting] = []
        kept.reserveCapacity(waiting.count)
        for item in waiting {
            if item.at <= time || item.chainStart == chain { body(item.payload) } else { kept.append(item) }
        }
        waiting = kept
    }

    /// The responses held up to and including the place of `exchange`'s response, in
    /// arrival order: a later request carried a cookie only that response set, so it had
    /// arrived, and so had those expected before it.
    @inlinable public mutating func arrived(through exchange: Exchange) -> [Payload] {
        let place = (exchange.responseArrivedAt, exchange.sequence)
        guard let first = waiting.first, (first.at, first.sequence) <= place else { return [] }
        let end = waiting.firstIndex { ($0.at, $0.sequence) > place } ?? waiting.count
        defer { waiting.removeFirst(end) }
        return waiting[..<end].map(\.payload)
    }

    /// The first response held, in arrival order, that `matches`.
    @inlinable public func first(where matches: (Payload) -> Bool) -> Payload? {
        waiting.first { matches($0.payload) }?.payload
    }

    /// Every response still held, in arrival order: the recording is over.
    @inlinable public mutating func all() -> [Payload] {
        defer { waiting = [] }
        return waiting.map(\.payload)
    }
}
