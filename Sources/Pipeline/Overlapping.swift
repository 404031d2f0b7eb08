import Dispatch
import TrafficModel

/// Hands each batch and what `prepare` made of it to `consume`, in order, while the next
/// batch is prepared on another thread: a stage that is one thread's work (storing in
/// SQLite) and one that uses every core (reading files, replaying) then overlap instead
/// of taking turns. Memory holds two prepared batches at most. Nothing prepared outlives
/// the call, even when `consume` throws.
func overlapping<Batch: Sendable, Prepared>(_ batches: [Batch], prepare: @escaping @Sendable (Batch) -> Prepared, consume: (Batch, Prepared) throws -> Void) rethrows {
    guard let first = batches.first else { return }
    var prepared = prepare(first)
    for (k, batch) in batches.enumerated() {
        // The next batch on another thread, or on this one when none has begun it by the
        // time this batch is consumed.
        let next = k + 1 < batches.count ? batches[k + 1] : nil
        let following = next.map { next in Beside<Prepared> { prepare(next) } }
        defer { following?.cancel() }
        try consume(batch, prepared)
        if let following { prepared = following.join() }
    }
}
