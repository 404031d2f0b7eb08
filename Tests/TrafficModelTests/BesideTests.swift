import Dispatch
import Foundation
import Testing
@testable import TrafficModel

/// Work handed to another thread must never leave its owner waiting for a thread that has
/// not begun it: a queue that cannot run it now stands for libdispatch's pool when every
/// one of its threads is waiting, which it relieved only once a second.
@Suite("Work beside the current thread")
struct BesideTests {
    /// What the work saw, written from whichever thread runs it.
    final class Record: @unchecked Sendable {
        private let lock = NSLock()
        private var _runs = 0
        private var _ranHere = false
        var runs: Int { lock.withLock { _runs } }
        var ranHere: Bool { lock.withLock { _ranHere } }
        func ran(here: Bool) { lock.withLock { _runs += 1; _ranHere = here } }
    }

    /// A queue that runs nothing until `resume` is called, or two seconds have passed: an
    /// owner that waited for the queue would then see its work done on the queue's thread,
    /// and fail, rather than wait for ever.
    final class StalledQueue: @unchecked Sendable {
        let queue = DispatchQueue(label: "h5replay.test.stalled")
        private let lock = NSLock()
        private var stalled = true

        init() {
            queue.suspend()
            DispatchQueue.global().asyncAfter(deadline: .now() + 2) { [self] in resume() }
        }

        /// Lets the queue run what it holds, and waits until it has.
        func resume() {
            let resumed = lock.withLock {
                defer { stalled = false }
                return stalled
            }
            if resumed { queue.resume() }
            queue.sync {}
        }
    }

    @Test("join does the work here when no thread has begun it, and the work runs once")
    func joinWithoutAThread() {
        let stalled = StalledQueue()
        let record = Record()
        let owner = pthread_self()
        let work = Beside<Int>(on: stalled.queue) {
            record.ran(here: pthread_equal(pthread_self(), owner) != 0)
            return 42
        }
        #expect(work.join() == 42)
        #expect(work.join() == 42)
        #expect(record.ranHere)
        // The queued copy, once its queue runs, finds the work taken.
        stalled.resume()
        #expect(record.runs == 1)
    }

    @Test("cancel before any thread begins the work means it never runs")
    func cancelUnstarted() {
        let stalled = StalledQueue()
        let record = Record()
        let work = Beside<Int>(on: stalled.queue) {
            record.ran(here: true)
            return 1
        }
        #expect(work.cancel() == nil)
        stalled.resume()
        #expect(record.runs == 0)
    }

    @Test("join and cancel wait for work another thread has begun, and see its result")
    func waitsForARunningThread() {
        let began = DispatchSemaphore(value: 0)
        let mayEnd = DispatchSemaphore(value: 0)
        let record = Record()
        let work = Beside<[Int]>(on: DispatchQueue(label: "h5replay.test.running")) {
            record.ran(here: false)
            began.signal()
            mayEnd.wait()
            return Array(0..<1000)
        }
        began.wait()
        // The worker is inside the work: ending it later must not let join return early.
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { mayEnd.signal() }
        #expect(work.join() == Array(0..<1000))
        #expect(work.cancel() == Array(0..<1000))
        #expect(record.runs == 1)
    }

    @Test("work already done is handed back as it is, and nothing is queued")
    func done() {
        let work = Beside(done: "abc")
        #expect(work.join() == "abc")
        #expect(work.cancel() == "abc")
    }
}
