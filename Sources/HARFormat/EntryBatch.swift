import Dispatch
import Foundation
import TrafficModel

/// A batch of HAR entries read onto token lists, whose exchanges are built on every core.
///
/// Reading the JSON is one pass and stays on the calling thread; building an exchange from
/// an entry's tokens (headers, bodies, base64, URL parsing) is most of an import's work and
/// each entry's is independent of the others', so a batch's entries are shared among
/// workers, then their exchanges and diagnostics are put back in entry order.
final class EntryBatch {
    let importer: HARImporter
    let file: String
    /// Entries per batch: large enough to keep every core busy, small enough that a batch's
    /// tokens stay a few megabytes.
    static let size = 512
    /// Threads that build exchanges: every core (at most 8); `H5REPLAY_HAR_WORKERS` sets it
    /// (1 reads a HAR on one thread, for comparison).
    let workers = ProcessInfo.processInfo.environment["H5REPLAY_HAR_WORKERS"].flatMap { Int($0) } ?? max(1, min(ProcessInfo.processInfo.activeProcessorCount, 8))

    var indices: [Int] = []
    var tokens: [[JSONTape.Token]] = []
    var count = 0

    init(importer: HARImporter, file: String) {
        self.importer = importer
        self.file = file
    }

    var isFull: Bool { count == Self.size }

    func add(index: Int, _ entry: UnsafeBufferPointer<JSONTape.Token>) {
        if count == tokens.count {
            tokens.append([])
            indices.append(0)
        }
        tokens[count].removeAll(keepingCapacity: true)
        tokens[count].append(contentsOf: entry)
        indices[count] = index
        count += 1
    }

    /// What one entry gave.
    struct Built {
        var exchange: Exchange?
        var diagnostics: [Diagnostic] = []
        var error: Error?
    }

    /// Builds the batch's exchanges and hands each entry's on in batch order (its index in
    /// the file, its exchange or nil when skipped, its diagnostics); then empties the batch.
    func build(bytes: UnsafeBufferPointer<UInt8>, _ each: (_ index: Int, Exchange?, [Diagnostic]) throws -> Void) throws {
        guard count > 0 else { return }
        var built = [Built](repeating: Built(), count: count)
        let n = count
        let importer = self.importer
        let file = self.file
        built.withUnsafeMutableBufferPointer { out in
            let out = UncheckedSendable(out)
            let tokens = UncheckedSendable(self.tokens)
            let indices = self.indices
            let bytes = UncheckedSendable(bytes)
            let stride = workers == 1 || n < 2 * workers ? 1 : workers
            let work: @Sendable (Int) -> Void = { worker in
                // Each worker takes a contiguous run of entries (no two write one cache
                // line) and its own copy of the file name (no reference count shared across
                // cores).
                let context = ImportContext(file: String(decoding: Array(file.utf8), as: UTF8.self))
                let run = (n + stride - 1) / stride
                for k in (worker * run)..<min(n, (worker + 1) * run) {
                    let index = indices[k]
                    context.entryIndex = index
                    var result = Built()
                    tokens.value[k].withUnsafeBufferPointer { entryTokens in
                        let entry = JSONNode(view: JSONView(tokens: entryTokens, bytes: bytes.value), index: 0, context: context)
                        do {
                            result.exchange = try importer.exchange(from: entry, index: index, diagnostics: &result.diagnostics)
                        } catch let error as HARImportError where error.entryIndex != nil {
                            // One odd entry does not refuse the file: it is skipped, named by its path.
                            result.diagnostics.append(Diagnostic(.entryInvalid, message: "\(error.field): \(error.problem); the entry is skipped"))
                        } catch {
                            result.error = error
                        }
                    }
                    out.value[k] = result
                }
                withExtendedLifetime(context) {}
            }
            if stride == 1 {
                work(0)
            } else {
                DispatchQueue.concurrentPerform(iterations: workers, execute: work)
            }
        }
        count = 0
        for (k, result) in built.enumerated() {
            if let error = result.error { throw error }
            try each(indices[k], result.exchange, result.diagnostics)
        }
    }
}

/// A value handed to worker threads that the batch guarantees none of them writes to
/// concurrently (each worker touches only its own slots).
struct UncheckedSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
