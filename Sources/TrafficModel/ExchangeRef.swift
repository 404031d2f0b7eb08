/// A recorded exchange by its place: the recording's index in a list of recordings, and
/// the exchange's sequence in it. What `serve` matches an arrival to, and what the
/// observed run looks arrivals up by.
public struct ExchangeRef: Sendable, Hashable {
    public var recording: Int
    public var sequence: Int

    public init(recording: Int, sequence: Int) {
        self.recording = recording
        self.sequence = sequence
    }
}
