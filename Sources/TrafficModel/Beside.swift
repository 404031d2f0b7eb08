import Dispatch
import Synchronization

/// Work handed to another thread while this one goes on, which this thread does itself
/// when it needs the work done and no other thread has begun it.
///
/// Waiting for work queued on libdispatch's global queue can stall for a second: when
/// every thread of its pool is itself waiting (HAR files read inside a
/// `concurrentPerform`, each waiting for its entries' builders), queued work starts only
/// once libdispatch's monitor adds a thread, which it checks for once a second. Work here
/// is claimed by whichever thread comes first, so nothing waits for a thread that has
/// not started.
///
/// The owner calls `join` or `cancel` before anything the work reads goes away: work
/// left to itself still runs, whenever a thread of the queue takes it.
public final class Beside<Value>: @unchecked Sendable {
    private let claimed: Atomic<Bool>
    private let finished = DispatchSemaphore(value: 0)
    /// Read and cleared only by the thread that claimed the work.
    private var work: (() -> Value)?
    /// Written by the thread that claimed the work, read by the owner once it is done.
    private var value: Value?
    /// Whether the owner has its answer (`join` or `cancel` returned); the owner's alone.
    private var settled = false

    /// Queues `work` for another thread of `queue`.
    public init(on queue: DispatchQueue = .global(), _ work: @escaping @Sendable () -> Value) {
        claimed = Atomic(false)
        self.work = work
        queue.async { [self] in
            guard claim() else { return }
            run()
            finished.signal()
        }
    }

    /// Work already done here: for a caller that decided handing it over costs more.
    public init(done value: Value) {
        claimed = Atomic(true)
        self.value = value
        settled = true
    }

    private func claim() -> Bool {
        !claimed.exchange(true, ordering: .acquiringAndReleasing)
    }

    private func run() {
        let work = self.work!
        self.work = nil
        value = work()
    }

    /// The work's result: done here and now when no other thread has begun it, else
    /// waited for. Called by the thread that made this, any number of times.
    public func join() -> Value {
        if !settled {
            if claim() { run() } else { finished.wait() }
            settled = true
        }
        return value!
    }

    /// Makes sure the work is not running: when no other thread has begun it, it never
    /// runs; when one has, this waits for it to end. Its result, if it ran.
    @discardableResult
    public func cancel() -> Value? {
        if !settled {
            if claim() { work = nil } else { finished.wait() }
            settled = true
        }
        return value
    }
}
