import Dispatch

/// Hands each batch and what `prepare` made of it to `consume`, in order, while the next
/// batch is prepared on another thread: a stage that is one thread's work (storing in
/// SQLite) and one that uses every core (reading files, replaying) then overlap instead
/// of taking turns. Memory holds two prepared batches at most. Nothing prepared outlives
/// the call, even when `consume` throws.
func overlapping<Batch: Sendable, Prepared>(_ batches: [Batch], prepare: @escaping @Sendable (Batch) -> Prepared, consume: (Batch, Prepared) throws -> Void) rethrows {
    guard let first = batches.first else { return }
    var prepared = prepare(first)
    for (k, batch) in batches.enumerated() {
        let following = UnsafeResultBuffer<Prepared>(count: 1)
        let preparing = DispatchGroup()
        if k + 1 < batches.count {
            let next = batches[k + 1]
            DispatchQueue.global().async(group: preparing) { following.set(0, prepare(next)) }
        }
        defer { preparing.wait() }
        try consume(batch, prepared)
        preparing.wait()
        if let next = following.slots[0] { prepared = next }
    }
}
