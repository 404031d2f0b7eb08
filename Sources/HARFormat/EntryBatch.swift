import Dispatch
import Foundation
import Synchronization
import TrafficModel

/// HAR entries read onto token lists a batch at a time, whose exchanges are built on every
/// core while the reader goes on with the next batch.
///
/// Reading the JSON is one pass and stays on the calling thread; building an exchange from
/// an entry's tokens (headers, bodies, base64, URL parsing) is most of an import's work and
/// each entry's is independent of the others', so a full batch is handed to the workers and
/// the reader fills a second one meanwhile, then takes what is left of the first beside
/// them, a run of entries at a time. Exchanges and diagnostics are handed on in entry
/// order, a batch at a time, when the batch after it is handed to the workers (or at
/// `finish`). At most two batches of tokens are held at once, whatever the file's size.
final class EntryBatch {
    let importer: HARImporter
    let file: String
    /// Entries per batch: large enough to keep every core busy, small enough that a batch's
    /// tokens stay a few megabytes.
    static let size = 512
    /// Threads that build exchanges: every core (at most 8); `H5REPLAY_HAR_WORKERS` sets it
    /// (1 builds on the reading thread, one batch after the other, for comparison).
    let workers = ProcessInfo.processInfo.environment["H5REPLAY_HAR_WORKERS"].flatMap { Int($0) } ?? max(1, min(ProcessInfo.processInfo.activeProcessorCount, 8))

    /// One batch: its entries' tokens and file indices, then what they gave, in memory the
    /// workers write to without a lock (each its own runs of entries).
    final class Slot: @unchecked Sendable {
        var indices: [Int] = []
        var tokens: [[JSONTape.Token]] = []
        var count = 0
        let built = UnsafeMutableBufferPointer<Built>.allocate(capacity: EntryBatch.size)
        var builtCount = 0
        /// The runs of `EntryBatch.run` entries taken by a builder so far.
        let taken = Atomic<Int>(0)
        /// The file's bytes the tokens point into, while the batch is being built.
        var bytes = UnsafeBufferPointer<UInt8>(start: nil, count: 0)

        func clear() {
            built.baseAddress!.deinitialize(count: builtCount)
            builtCount = 0
            count = 0
            taken.store(0, ordering: .relaxed)
        }

        deinit {
            clear()
            built.deallocate()
        }
    }

    /// What one entry gave.
    struct Built {
        var exchange: Exchange?
        /// What the classifier reads from the exchange alone, worked out here on every core.
        var traits: ExchangeClassifier.Traits?
        var diagnostics: [Diagnostic] = []
        var error: Error?
    }

    /// The batch being read into.
    private var filling = Slot()
    /// The batch the workers are building, if any, and the workers' part in it.
    private var building: Slot?
    private var helpers: Beside<Void>?
    private var spare: Slot?

    init(importer: HARImporter, file: String) {
        self.importer = importer
        self.file = file
    }

    deinit {
        // Never leave workers reading tokens or bytes that are about to go.
        helpers?.cancel()
    }

    var isFull: Bool { filling.count == Self.size }

    /// Takes an entry's tokens by swapping `entry` with the batch's spare list for it: the
    /// caller gets back a list to read the next entry onto (empty it first), and the
    /// tokens are not copied.
    func add(index: Int, swapping entry: inout [JSONTape.Token]) {
        let slot = filling
        if slot.count == slot.tokens.count {
            slot.tokens.append([])
            slot.indices.append(0)
        }
        swap(&slot.tokens[slot.count], &entry)
        slot.indices[slot.count] = index
        slot.count += 1
    }

    /// Hands the batch read so far to the workers, then hands on the batch before it, built:
    /// each entry's index in the file and what it gave (its exchange or nil when skipped,
    /// the exchange's traits, its diagnostics), to be taken from in place.
    /// `bytes` must stay valid until `finish` or `wait` returns.
    func build(bytes: UnsafeBufferPointer<UInt8>, _ each: (_ index: Int, inout Built) throws -> Void) throws {
        let previous = waitForWorkers()
        if filling.count > 0 {
            let slot = filling
            filling = spare ?? Slot()
            spare = nil
            start(slot, bytes: bytes)
        }
        if let previous {
            defer { recycle(previous) }
            try handOn(previous, each)
        }
    }

    /// Builds what is left and hands on every batch not yet handed on.
    func finish(bytes: UnsafeBufferPointer<UInt8>, _ each: (_ index: Int, inout Built) throws -> Void) throws {
        try build(bytes: bytes, each)
        if let last = waitForWorkers() {
            defer { recycle(last) }
            try handOn(last, each)
        }
    }

    /// Waits until no worker is building; call before the bytes or tokens go away when an
    /// import stops early.
    func wait() {
        helpers?.cancel()
    }

    /// Builds what the workers have not taken yet of the batch they are building, then
    /// waits for those still at a run: the reader, done with the next batch, is a builder
    /// too. Workers that have not begun by then never do, so a reader whose workers find
    /// no free thread (every thread of the pool waiting, as when files are read side by
    /// side) builds the batch alone rather than wait for one.
    private func waitForWorkers() -> Slot? {
        guard let slot = building else { return nil }
        Self.buildRuns(of: slot, importer: importer, file: file)
        helpers?.cancel()
        helpers = nil
        building = nil
        return slot
    }

    private func recycle(_ slot: Slot) {
        slot.clear()
        spare = slot
    }

    private func handOn(_ slot: Slot, _ each: (_ index: Int, inout Built) throws -> Void) throws {
        for k in 0..<slot.count {
            if let error = slot.built[k].error { throw error }
            try each(slot.indices[k], &slot.built[k])
        }
    }

    /// Entries a builder takes at a time: small enough that builders finish a batch
    /// together, large enough that no two write one cache line of results often.
    static let run = 16

    private func start(_ slot: Slot, bytes: UnsafeBufferPointer<UInt8>) {
        let n = slot.count
        precondition(n <= Self.size)
        slot.built.baseAddress!.initialize(repeating: Built(), count: n)
        slot.builtCount = n
        slot.bytes = bytes
        building = slot
        if workers == 1 || n <= Self.run {
            // One thread, or a batch one builder takes whole (a small file, the last entries
            // of a large one): built here and now, as a reader without workers would.
            Self.buildRuns(of: slot, importer: importer, file: file)
            return
        }
        let (workers, importer, file) = (self.workers, self.importer, self.file)
        helpers = Beside {
            DispatchQueue.concurrentPerform(iterations: workers) { _ in Self.buildRuns(of: slot, importer: importer, file: file) }
        }
    }

    /// Builds runs of the batch's entries until none is left to take. Workers and the
    /// reader call it side by side; each run is one builder's, so each result is written
    /// by one thread without a lock.
    private static func buildRuns(of slot: Slot, importer: HARImporter, file: String) {
        let n = slot.count
        // Each builder has its own copy of the file name (no reference count shared
        // across cores).
        let context = ImportContext(file: String(decoding: Array(file.utf8), as: UTF8.self))
        let out = slot.built
        while true {
            let first = slot.taken.add(1, ordering: .relaxed).oldValue * Self.run
            guard first < n else { break }
            for k in first..<min(n, first + Self.run) {
                let index = slot.indices[k]
                context.entryIndex = index
                var result = Built()
                slot.tokens[k].withUnsafeBufferPointer { entryTokens in
                    let entry = JSONNode(view: JSONView(tokens: entryTokens, bytes: slot.bytes), index: 0, context: context)
                    do {
                        result.exchange = try importer.exchange(from: entry, index: index, diagnostics: &result.diagnostics)
                        if result.exchange != nil { result.traits = ExchangeClassifier.Traits(&result.exchange!) }
                    } catch let error as HARImportError where error.entryIndex != nil {
                        // One odd entry does not refuse the file: it is skipped, named by its path.
                        result.diagnostics.append(Diagnostic(.entryInvalid, message: "\(error.field): \(error.problem); the entry is skipped"))
                    } catch {
                        result.error = error
                    }
                }
                out[k] = result
            }
        }
        withExtendedLifetime(context) {}
    }
}
