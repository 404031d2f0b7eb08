import CookieJar
import Foundation
import HARFormat
import HTTPWire
import PacketCapture
import ReportStore
import TrafficModel

/// File in, Recording out, and into the store: the import half of the pipeline.
///
/// Its stages, each boundary a named type:
///
///     SourceFile (path, format told by content)
///       -> exchanges: HARImporter, or CaptureImporter's stream (pcap, pcapng, live)
///       -> ClassifyingStage: initiator, body kind, frames, redirect chains, cookie
///          provenance, one exchange at a time (bodies hashed once, when built)
///       -> ReportStore: a whole recording, or a RecordingWriter row by row
///
/// The CLI (`import`, `record`, `replay FILE`, `serve FILE`) and the bench call it; none
/// puts these stages together itself.
public struct ImportPipeline: Sendable {
    public var limits: ImportLimits
    /// Called with a progress line while a capture is read (packets, exchanges).
    public var progress: (@Sendable (String) -> Void)?

    public init(limits: ImportLimits = ImportLimits(), progress: (@Sendable (String) -> Void)? = nil) {
        self.limits = limits
        self.progress = progress
    }

    // MARK: - Stage 1: the source file

    /// A file to import, its format told by its first bytes: a HAR, a pcap or pcapng
    /// capture, or either compressed whole (gzip, or zlib as mitmproxy's `.zhar`), told by
    /// the first bytes it inflates to.
    public struct SourceFile: Sendable {
        public enum Format: String, Sendable { case har, pcap, pcapng }
        /// The file as given: what messages name and the recording keeps as its source.
        public var path: String
        public var format: Format
        /// The compression the recording is wrapped in; nil when it is not.
        public var compression: CompressedFile.Wrapper?

        /// Reads the first bytes of `path` and tells its format; a clear error otherwise.
        public init(path: String) throws {
            self.path = path
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { throw InputError(file: path, problem: "no such file") }
            if isDirectory.boolValue { throw InputError(file: path, problem: "is a folder, not a recording", fix: "pass the recording files in it") }
            var head: Data
            var problem: String?
            do {
                let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
                defer { try? handle.close() }
                head = try handle.read(upToCount: 64) ?? Data()
                if let wrapper = CompressedFile.wrapper(of: head) {
                    compression = wrapper
                    try handle.seek(toOffset: 0)
                    let start = try handle.read(upToCount: 1 << 16) ?? Data()
                    (head, problem) = CompressedFile.head(of: start, wrapper: wrapper, count: 64, whole: start.count < 1 << 16)
                }
            } catch {
                throw InputError(file: path, problem: "cannot read the file: \((error as NSError).localizedDescription)")
            }
            let wrapped = compression.map { "\($0.rawValue)-compressed, and what it holds is " } ?? ""
            // A start that inflates to fewer bytes than asked for says why: cut or corrupt.
            if let compression, let problem {
                throw InputError(file: path, problem: "\(compression.rawValue)-compressed: \(problem)")
            }
            if CaptureImporter.looksLikeCapture(head) {
                format = CaptureImporter.format(of: head) == "pcapng" ? .pcapng : .pcap
            } else if head.isEmpty {
                throw InputError(file: path, place: "offset 0", problem: compression == nil ? "the file is empty" : "\(wrapped)empty")
            } else if HARImporter.looksLikeHAR(head) {
                format = .har
            } else {
                throw InputError(file: path, place: "offset 0", problem: "\(wrapped)not a recording h5replay reads", fix: "expected HAR JSON, pcap or pcapng, or one of them compressed with gzip or zlib")
            }
        }

        /// The file the importers read: `path` itself, or an inflated copy in a private
        /// temporary folder when it is compressed. `discard()` it when the import is done.
        public func readable(limit: Int, flag: String = "--max-inflated-bytes") throws -> Readable {
            guard let compression else { return Readable(path: path, folder: nil) }
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-\(UUID().uuidString)")
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw InputError(file: path, problem: "cannot make a temporary folder to inflate it into: \((error as NSError).localizedDescription)", fix: "set TMPDIR to a writable folder")
            }
            var copy = Readable(path: folder.appendingPathComponent(defaultName + "." + format.rawValue).path, folder: folder.path)
            do throws(CompressedFile.Failure) {
                let inflated = try CompressedFile.inflate(path, wrapper: compression, into: copy.path, limit: limit)
                if inflated.endedEarly {
                    // A capture cut short keeps the records before the cut, as a truncated
                    // pcap does (and as Wireshark opens a cut .pcap.gz); half a HAR is no HAR.
                    guard format != .har else { throw CompressedFile.Failure(description: inflated.endedEarlyText(compression)) }
                    copy.endedEarly = Diagnostic(.captureTruncated, message: "\(path): \(inflated.endedEarlyText(compression)); everything inflated before the cut is read")
                }
            } catch {
                copy.discard()
                throw InputError(file: path, problem: "\(compression.rawValue)-compressed: \(error.description)", fix: error.description.contains("more than") ? "raise the limit with \(flag)" : nil)
            }
            return copy
        }

        /// A file ready to read, and the temporary folder that holds it when it is an
        /// inflated copy.
        public struct Readable: Sendable {
            public var path: String
            var folder: String?
            /// A compressed capture that ended early: said on its recordings.
            public var endedEarly: Diagnostic?

            /// Removes the inflated copy; nothing for a file read in place.
            public func discard() {
                if let folder { try? FileManager.default.removeItem(atPath: folder) }
            }
        }

        /// The extensions a folder's recordings carry: a folder given where recordings are
        /// expected stands for its files with these, in name order.
        public static let extensions: Set<String> = ["har", "pcap", "pcapng", "zhar"]

        /// Whether a folder's file is a recording by its name: one of `extensions`, or a
        /// recording's name with `.gz` after it (`session.har.gz`, `capture.pcap.gz`).
        static func isRecordingName(_ name: String) -> Bool {
            var ext = (name as NSString).pathExtension.lowercased()
            if ext == "gz" { ext = ((name as NSString).deletingPathExtension as NSString).pathExtension.lowercased() }
            return extensions.contains(ext)
        }

        /// `paths` with each folder replaced by the recording files directly in it.
        public static func expandingFolders(_ paths: [String]) throws -> [String] {
            try paths.flatMap { path -> [String] in
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return [path] }
                let names: [String]
                do {
                    names = try FileManager.default.contentsOfDirectory(atPath: path)
                } catch {
                    throw InputError(file: path, problem: "cannot list the folder: \((error as NSError).localizedDescription)")
                }
                let files = names.filter(isRecordingName).sorted()
                guard !files.isEmpty else {
                    throw InputError(file: path, problem: "the folder holds no recording", fix: "put .har, .pcap or .pcapng files in it (or them compressed: .zhar, .har.gz, .pcap.gz), or pass the files")
                }
                return files.map { (path as NSString).appendingPathComponent($0) }
            }
        }

        /// The recording name for a file: its name without the extension.
        public var defaultName: String { Self.defaultName(for: path) }

        public static func defaultName(for path: String) -> String {
            let file = (path as NSString).lastPathComponent
            var stem = (file as NSString).deletingPathExtension
            // `session.har.gz` is `session`, as `session.har` is.
            if (file as NSString).pathExtension.lowercased() == "gz", extensions.contains((stem as NSString).pathExtension.lowercased()) {
                stem = (stem as NSString).deletingPathExtension
            }
            return stem.isEmpty ? file : stem
        }
    }

    // MARK: - Stage 3: classification and provenance, one exchange at a time

    /// Classifies each exchange as it comes, in time order, and walks its cookie
    /// provenance; what it learns later about exchanges already passed (a 3xx's next hop,
    /// the top-level site) comes back as revisions.
    public struct ClassifyingStage {
        var classifier = ExchangeClassifier.Stream()
        public var walker: CookieProvenance.Walker
        public private(set) var count = 0
        /// `import --redact`'s names: each exchange's secrets are replaced once it is
        /// classified and before its provenance is walked, so that the provenance stored is
        /// that of the exchange stored (as a whole file's, redacted before its walk).
        public var redact: SecretNames?

        /// `olderRequests` reads requests that left the walker's memory back from the store.
        public init(recentCapacity: Int? = 4096, olderRequests: ((_ before: Int, _ visit: (CookieProvenance.PastRequest) -> Bool) throws -> Void)? = nil) {
            walker = CookieProvenance.Walker(recentCapacity: recentCapacity, olderRequests: olderRequests)
        }

        /// The exchange classified, with its sequence set; its provenance; and the revisions
        /// to exchanges passed before. `traits`: the exchange's own, when the importer worked
        /// them out while building it (`ExchangeClassifier.Traits`).
        public mutating func add(_ exchange: inout Exchange, traits: ExchangeClassifier.Traits? = nil) throws -> Classified {
            exchange.sequence = count
            count += 1
            let revisions = classifier.add(&exchange, traits: traits)
            if let redact { redact.redactAtRest(&exchange) }
            let step = try walker.add(exchange)
            return Classified(sent: step.sent, inferred: step.inferred, revisions: revisions)
        }

        /// What classification tells of the recording as a whole, once every exchange is in.
        public var diagnostics: [Diagnostic] { classifier.diagnostics }

        public struct Classified {
            public var sent: [CookieProvenance.SentCookie]
            public var inferred: [CookieProvenance.Inference]
            public var revisions: [ExchangeClassifier.Stream.Revision]
        }
    }

    // MARK: - Whole files

    /// The recordings in a file: one, or one per client with `splitByClient` on a capture.
    public func read(_ path: String, name: String?, splitByClient: Bool = false) throws -> [Recording] {
        let source = try SourceFile(path: path)
        let recordingName = name ?? source.defaultName
        // A compressed HAR read whole is bounded by the HAR limit once inflated.
        let file = try source.readable(limit: source.format == .har ? limits.maxHarBytes : limits.maxInflatedBytes, flag: source.format == .har ? "--max-har-bytes" : "--max-inflated-bytes")
        defer { file.discard() }
        switch source.format {
        case .pcap, .pcapng:
            do {
                // The progress closure by its label: unlabelled, a trailing closure is taken
                // for `bodySink`, and every body goes to it.
                var recordings = try CaptureImporter.read(path: file.path, displayPath: path, name: recordingName, options: limits.captureOptions(splitByClient: splitByClient), progress: { packets, exchanges in
                    progress?("\(path): \(packets) packets, \(exchanges) exchanges")
                }).recordings
                if let cut = file.endedEarly {
                    for k in recordings.indices { recordings[k].diagnostics.insert(cut, at: 0) }
                }
                return recordings
            } catch let error as CaptureImporter.Failure {
                throw InputError(error.description)
            }
        case .har:
            if let size = (try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? Int, size > limits.maxHarBytes {
                throw InputError(file: path, problem: "the file is \(size) bytes, over the HAR size limit of \(limits.maxHarBytes)", fix: "raise it with --max-har-bytes")
            }
            let data: Data
            do {
                // Mapped, not copied: the reader makes one pass and the kernel may drop the
                // pages behind it.
                data = try Data(contentsOf: URL(fileURLWithPath: file.path), options: .alwaysMapped)
            } catch {
                throw InputError(file: path, problem: "cannot read the file: \((error as NSError).localizedDescription)")
            }
            do {
                return try HARImporter(maxFileBytes: limits.maxHarBytes).recordings(from: data, file: path, name: recordingName)
            } catch let error as HARImportError {
                throw InputError(error.description)
            }
        }
    }

    /// What an import stored of one recording, for `import` and `record` to print.
    public struct ImportedRecording: Sendable {
        public var name: String
        public var exchangeCount: Int
        /// The recording-level diagnostics, then the first per-exchange ones.
        public var diagnostics: [Diagnostic]
        /// Per-exchange diagnostics stored but not listed in `diagnostics`.
        public var moreDiagnostics: Int
        /// The file it came from, as given to `importFiles` (one file may hold several
        /// recordings: a capture split by client, a page-test tool's runs).
        public var file: String?

        public init(name: String, exchangeCount: Int, diagnostics: [Diagnostic], moreDiagnostics: Int = 0) {
            self.name = name
            self.exchangeCount = exchangeCount
            self.diagnostics = diagnostics
            self.moreDiagnostics = moreDiagnostics
        }

        public init(_ recording: Recording, file: String? = nil) {
            self.init(name: recording.name, exchangeCount: recording.exchanges.count, diagnostics: recording.diagnostics)
            self.file = file
        }
    }

    /// Imports a file into the store in one transaction; returns each recording and what
    /// the store did with it. With `redact`, secrets are replaced at rest
    /// (`SecretNames.redactAtRest`) before anything is stored.
    /// `inHand` receives each recording read whole (a HAR file) with the cookie provenance
    /// stored for it, once stored, so a replay of the file neither reads it back nor walks
    /// its provenance again.
    public func importFile(_ path: String, name: String?, replace: Bool, splitByClient: Bool = false, redact: SecretNames? = nil, into store: ReportStore, inHand: ((Recording, CookieProvenance) -> Void)? = nil) throws -> [(ImportedRecording, ReportStore.ImportResult)] {
        do {
            let source = try SourceFile(path: path)
            if source.format != .har || inHand == nil {
                // Streamed: a capture, or a HAR no caller keeps in hand.
                let file = try source.readable(limit: limits.maxInflatedBytes)
                defer { file.discard() }
                if source.format == .har {
                    return try importHAR(file.path, displayPath: path, name: name ?? source.defaultName, replace: replace, redact: redact, into: store)
                }
                let capture = CaptureSource(path: file.path, format: source.format.rawValue, recordedPath: path, leadingDiagnostics: file.endedEarly.map { [$0] } ?? [])
                return try importCapture(capture, name: name ?? source.defaultName, replace: replace, splitByClient: splitByClient, redact: redact, into: store)
            }
            var recordings = try read(path, name: name, splitByClient: splitByClient)
            if let redact {
                for k in recordings.indices { redact.redactAtRest(&recordings[k]) }
            }
            let withProvenance = recordings.map { ($0, CookieProvenance(recording: $0)) }
            let results = try store.save(withProvenance, replace: replace)
            withProvenance.forEach { inHand?($0.0, $0.1) }
            return Array(zip(recordings.map { ImportedRecording($0) }, results))
        } catch let error as ReportStore.NameTaken {
            throw InputError(file: path, problem: error.description)
        }
    }

    /// A HAR streams into the store as a capture does: its entries are read in time order
    /// a batch at a time (`HARImporter.stream`), each exchange classified, its provenance
    /// walked and its row stored as it comes, all in one transaction, and the file's pages
    /// let go once read. Memory holds a batch of entries, never the recording, so the file
    /// may be larger than memory; `--max-har-bytes` bounds only HAR files read whole.
    /// `readPath` is the file read; `displayPath` the one given, when `readPath` is its
    /// inflated copy.
    func importHAR(_ readPath: String, displayPath: String? = nil, name: String, replace: Bool, redact: SecretNames?, into store: ReportStore) throws -> [(ImportedRecording, ReportStore.ImportResult)] {
        let path = displayPath ?? readPath
        let file = try MappedFile(path: readPath)
        // The file's digest is worked out on another core while the entries are read,
        // not in a pass of its own before them. Each lets go of the pages behind it; a
        // page the other still needs is read again from the page cache.
        let hashing = HARImporter.hash(byteCount: file.bytes.count) { file.sha256Hex() }
        defer { hashing.cancel() }
        do {
            return try store.importStreaming { _, open in
                // One writer per browser session: a page-test tool's runs are recordings
                // of their own (`BrowserSessions`).
                var streams: [Int: StreamingRecording] = [:]
                func stream(_ session: Int) throws -> StreamingRecording {
                    if let stream = streams[session] { return stream }
                    let stream = StreamingRecording(writer: try open("har", path), redact: redact)
                    streams[session] = stream
                    return stream
                }
                var count = 0
                let end = try HARImporter().stream(file.bytes, file: path, release: file.release) { exchange, traits, diagnostics, session in
                    try stream(session).add(&exchange, traits: traits, diagnostics: diagnostics)
                    count += 1
                    if count % 4096 == 0 { progress?("\(path): \(count) exchanges") }
                }
                let sha256 = hashing.join()
                return try end.sessions.labels.indices.map { session in
                    let writer = try stream(session).writer
                    let recordingName = end.sessions.recordingName(name, session: session)
                    let byTool = end.notes.contains { $0.code == DiagnosticCode.nonBrowserClient.rawValue }
                    let classified = streams[session]!.stage.diagnostics.filter { !byTool || !HARImporter.saysNative($0) }
                    let recordingLevel = (end.sessions.isSplit ? [end.sessions.note(session: session)] : []) + end.notes + classified + end.unplaced[session]
                    let result = try writer.finish(name: recordingName, sourceSHA256: sha256, diagnostics: recordingLevel, replace: replace)
                    let imported = ImportedRecording(name: recordingName, exchangeCount: writer.exchangeCount, diagnostics: recordingLevel + writer.firstDiagnostics, moreDiagnostics: writer.diagnosticCount - writer.firstDiagnostics.count)
                    return (imported, result)
                }
            }
        } catch let error as HARImportError {
            throw InputError(error.description)
        }
    }

    /// Imports several files, each in its own transaction as `importFile` does, in order.
    /// HAR files are read and their provenance walked on every core, a batch at a time,
    /// then stored one by one; captures stream as they always do.
    ///
    /// `skipping`: where a file cannot be read, its path and `InputError` (naming the place)
    /// are handed here and the next file goes on; without it the first such file stops
    /// the call, the files before it imported.
    public func importFiles(_ paths: [String], replace: Bool, into store: ReportStore, inHand: ((Recording, CookieProvenance) -> Void)? = nil, skipping: ((String, InputError) -> Void)? = nil) throws -> [(ImportedRecording, ReportStore.ImportResult)] {
        var out: [(ImportedRecording, ReportStore.ImportResult)] = []
        let batches = stride(from: 0, to: paths.count, by: Self.batchSize).map { Array(paths[$0..<min($0 + Self.batchSize, paths.count)]) }
        // Each HAR file of a batch is read in parallel; nil where a file is not HAR (a
        // capture streams on its own below).
        @Sendable func parse(_ batch: [String]) -> [Result<[(Recording, CookieProvenance)], Error>?] {
            let parsed = UnsafeResultBuffer<Result<[(Recording, CookieProvenance)], Error>>(count: batch.count)
            DispatchQueue.concurrentPerform(iterations: batch.count) { k in
                guard (try? SourceFile(path: batch[k]).format) == .har else { return }
                parsed.set(k, Result { try read(batch[k], name: nil).map { ($0, CookieProvenance(recording: $0)) } })
            }
            return parsed.slots
        }
        // The next batch is read while this one is stored, in file order; what failed is
        // reported in that order too.
        try overlapping(batches, prepare: parse) { batch, parsed in
            // The batch's HAR files go to the store together, one transaction with a
            // savepoint per file (`ReportStore.save(files:)`); a capture streams in a
            // transaction of its own, after the files before it are stored.
            var waiting: [(path: String, read: Result<[(Recording, CookieProvenance)], InputError>)] = []
            func storeWaiting() throws {
                guard !waiting.isEmpty else { return }
                let files = waiting.compactMap { try? $0.read.get() }
                var saved = try store.save(files: files, replace: replace, continuing: skipping != nil).makeIterator()
                for (path, read) in waiting {
                    do {
                        let recordings = try read.get()
                        guard let result = saved.next() else { break }  // not stored: an earlier file failed
                        let results = try result.get()
                        recordings.forEach { inHand?($0.0, $0.1) }
                        out += zip(recordings.map { ImportedRecording($0.0, file: path) }, results)
                    } catch let error as ReportStore.NameTaken {
                        try skip(path, InputError(file: path, problem: error.description))
                    } catch let error as InputError {
                        try skip(path, error)
                    }
                }
                waiting = []
            }
            func skip(_ path: String, _ error: InputError) throws {
                // A file that fails leaves nothing of itself in the store.
                guard let skipping else { throw error }
                skipping(path, error)
            }
            for (k, path) in batch.enumerated() {
                guard let result = parsed[k] else {
                    try storeWaiting()
                    do {
                        out += try importFile(path, name: nil, replace: replace, into: store, inHand: inHand).map { imported, result in
                            var imported = imported
                            imported.file = path
                            return (imported, result)
                        }
                    } catch let error as InputError {
                        try skip(path, error)
                    }
                    continue
                }
                do {
                    waiting.append((path, .success(try result.get())))
                } catch let error as InputError {
                    // Without --keep-going, the files before it are stored, then the error goes on.
                    guard skipping != nil else { try storeWaiting(); throw error }
                    waiting.append((path, .failure(error)))
                }
            }
            try storeWaiting()
        }
        return out
    }

    /// HAR files read in parallel at a time: enough to keep every core busy, few enough
    /// that memory holds a batch, not a corpus.
    static let batchSize = 32

    /// A capture file to import, and what the recording says of its source.
    public struct CaptureSource: Sendable {
        public var path: String
        /// `pcap`, `pcapng`, or `live` for `record`.
        public var format: String
        /// The source path stored with the recording (nil for a live capture not kept).
        public var recordedPath: String?
        /// Store the file's SHA-256 (not for a live capture's temporary file).
        public var keepsSHA256 = true
        /// Recording-level diagnostics that go before the capture's own.
        public var leadingDiagnostics: [Diagnostic] = []

        public init(path: String, format: String, recordedPath: String?, keepsSHA256: Bool = true, leadingDiagnostics: [Diagnostic] = []) {
            self.path = path
            self.format = format
            self.recordedPath = recordedPath
            self.keepsSHA256 = keepsSHA256
            self.leadingDiagnostics = leadingDiagnostics
        }
    }

    /// Captures stream: each exchange is classified, its provenance walked and its row
    /// stored as soon as it is in time order, bodies as they are built, all in one
    /// transaction, so memory does not grow with the capture.
    public func importCapture(_ source: CaptureSource, name: String, replace: Bool, splitByClient: Bool, redact: SecretNames?, into store: ReportStore) throws -> [(ImportedRecording, ReportStore.ImportResult)] {
        // Messages name the file as given; `source.path` may be its inflated copy.
        let path = source.recordedPath ?? source.path
        let target = StreamTarget(format: source.format, recordedPath: source.recordedPath, label: path, name: name, replace: replace, splitByClient: splitByClient, redact: redact)
        return try importStream(target, into: store) { bodies, emit in
            // `stream` keeps the body closure no longer than the call.
            let end = try withoutActuallyEscaping(bodies) { bodies in
                try CaptureImporter.stream(
                    path: source.path, displayPath: path, options: limits.captureOptions(splitByClient: splitByClient), detachBodies: true,
                    bodies: bodies,
                    progress: { packets, exchanges in progress?("\(path): \(packets) packets, \(exchanges) exchanges") },
                    emit: emit)
            }
            return (end, source.leadingDiagnostics, source.keepsSHA256 ? end.sha256 : nil)
        }
    }

    /// Where a streamed capture goes: the recording's source as stored, the name messages
    /// give it, and how it is stored.
    struct StreamTarget {
        var format: String
        var recordedPath: String?
        var label: String
        var name: String
        var replace: Bool
        var splitByClient: Bool
        var redact: SecretNames?
    }

    /// Stores what `read` streams (a capture file, or a live capture as it runs): each
    /// exchange classified and written in one transaction, one recording per client with
    /// `splitByClient`. `read` hands bodies and exchanges on, and returns how the stream
    /// ended, the recording-level diagnostics that go first, and the SHA-256 to keep.
    func importStream(
        _ target: StreamTarget, into store: ReportStore,
        read: (_ bodies: (StoredBody) throws -> Void, _ emit: (inout HTTPStreamCollector.Collected) throws -> Void) throws -> (CaptureImporter.StreamEnd, [Diagnostic], String?)
    ) throws -> [(ImportedRecording, ReportStore.ImportResult)] {
        do {
            return try store.importStreaming { sink, open in
                // `read`'s emit opens writers through `open` only while `read` runs.
                try withoutActuallyEscaping(open) { open in
                    // One writer per client with --split client, else one for the capture.
                    var streams: [String: StreamingRecording] = [:]
                    func stream(_ client: String) throws -> StreamingRecording {
                        if let stream = streams[client] { return stream }
                        let stream = StreamingRecording(writer: try open(target.format, target.recordedPath), redact: target.redact)
                        streams[client] = stream
                        return stream
                    }
                    let (end, leading, sha256) = try read({ try sink.store($0) }) { item in
                        try stream(target.splitByClient ? item.client : "").add(&item.exchange, traits: item.traits, diagnostics: item.diagnostics)
                    }
                    if streams.isEmpty { _ = try stream("") }
                    let clients = streams.keys.sorted()
                    return try clients.map { client in
                        let writer = streams[client]!.writer
                        let recordingName = clients.count > 1 ? CaptureSession.recordingName(target.name, client: client) : target.name
                        let diagnostics = leading + streams[client]!.stage.diagnostics + end.diagnostics
                        let result = try writer.finish(name: recordingName, sourceSHA256: sha256, diagnostics: diagnostics, replace: target.replace)
                        let imported = ImportedRecording(name: recordingName, exchangeCount: writer.exchangeCount, diagnostics: diagnostics + writer.firstDiagnostics, moreDiagnostics: writer.diagnosticCount - writer.firstDiagnostics.count)
                        return (imported, result)
                    }
                }
            }
        } catch let error as CaptureImporter.Failure {
            throw InputError(error.description)
        } catch let error as ReportStore.NameTaken {
            throw InputError(file: target.label, problem: error.description)
        }
    }
}

/// One recording streamed into the store: the classifying stage in front of its writer.
final class StreamingRecording {
    let writer: ReportStore.RecordingWriter
    var stage: ImportPipeline.ClassifyingStage

    init(writer: ReportStore.RecordingWriter, redact: SecretNames?) {
        self.writer = writer
        // A script-set window reaching past the walker's memory reads the rows back.
        stage = ImportPipeline.ClassifyingStage { [writer] before, visit in try writer.visitRequests(before: before, visit) }
        stage.redact = redact
    }

    /// Classifies and stores `e` in place: the exchange is the importer's own, and a copy
    /// to change would copy all its fields.
    func add(_ e: inout Exchange, traits: ExchangeClassifier.Traits?, diagnostics: [Diagnostic]) throws {
        let classified = try stage.add(&e, traits: traits)
        for revision in classified.revisions {
            switch revision {
            case .redirectNext(let sequence, let next):
                try writer.setRedirectNext(next, of: sequence)
            case .topSite(let top, let before):
                // The top-level site settled after these exchanges were stored: their
                // third-party mark follows their site.
                var changed: [(Int, Frame)] = []
                try writer.visitFrames(0..<before) { sequence, url, frame in
                    var updated = frame
                    updated.thirdParty = ExchangeClassifier.Stream.isThirdParty(RequestTarget(url).map { Site.of(host: $0.host) }, top: top)
                    if updated != frame { changed.append((sequence, updated)) }
                }
                for (sequence, frame) in changed { try writer.setFrame(frame, of: sequence) }
            case .iframe(let sequences):
                // A document read as the main frame's next page was an iframe's: it and the
                // requests it referred are stored again as the iframe's. Only their span is
                // read: from the first, a capture of 133,000 exchanges read the recording
                // back once per iframe, and its import took 43 s.
                guard let first = sequences.min(), let last = sequences.max() else { continue }
                let revised = Set(sequences)
                var changed: [(Int, Frame)] = []
                try writer.visitFrames(first..<last + 1) { sequence, _, frame in
                    if revised.contains(sequence) { changed.append((sequence, Frame(kind: .iframe, thirdParty: frame.thirdParty))) }
                }
                for (sequence, frame) in changed { try writer.setFrame(frame, of: sequence) }
            }
        }
        try writer.add(e, sent: classified.sent, inferred: classified.inferred, diagnostics: diagnostics)
    }
}

/// The import limits (`--max-*` flags), with the defaults of each stage.
public struct ImportLimits: Sendable {
    public var maxHarBytes = HARImporter.defaultMaxFileBytes
    public var maxHeaderBytes = HTTPLimits.default.maxHeaderBytes
    public var maxHeaderCount = HTTPLimits.default.maxHeaderCount
    public var maxBodyBytes = HTTPLimits.default.maxBodyBytes
    public var maxDecodedBytes = ContentDecoder().maxDecodedBytes
    public var maxDecodeRatio = ContentDecoder().maxRatio
    public var maxOpenFlows = TCPLimits().maxOpenFlows
    /// Largest size a compressed recording (`.zhar`, `.har.gz`, `.pcap.gz`) may inflate
    /// to; the inflated copy is written to the temporary folder while it is read.
    public var maxInflatedBytes = 32 << 30
    /// `--strict-http`: captures refuse every framing oddity rather than decode it as a
    /// browser would.
    public var strictHTTP = false

    public init() {}

    public func captureOptions(splitByClient: Bool) -> CaptureSession.Options {
        var options = CaptureSession.Options(
            collector: .init(
                httpLimits: HTTPLimits(maxHeaderBytes: maxHeaderBytes, maxHeaderCount: maxHeaderCount, maxBodyBytes: maxBodyBytes),
                decoder: ContentDecoder(maxDecodedBytes: maxDecodedBytes, maxRatio: maxDecodeRatio),
                strictness: strictHTTP ? .strict : .tolerant),
            tcpLimits: TCPLimits(maxOpenFlows: maxOpenFlows),
            splitByClient: splitByClient)
        // Tuning: packets read between hand-offs to the builder thread (default 2048).
        if let batch = ProcessInfo.processInfo.environment["H5REPLAY_BATCH_PACKETS"].flatMap(Int.init), batch > 0 {
            options.batchPackets = batch
        }
        return options
    }
}

extension ReportStore {
    /// Opens (or creates) a database and computes the cookie provenance of recordings
    /// stored before it was kept: the step migration v7 leaves to the pipeline.
    public static func openForPipeline(path: String, newFile: NewFile = .wal) throws -> ReportStore {
        let store = try ReportStore.open(path: path, newFile: newFile)
        for name in try store.recordingsAwaitingProvenance() {
            guard let recording = try store.recording(named: name) else { continue }
            try store.storeProvenance(CookieProvenance(recording: recording), of: name)
        }
        return store
    }

    /// Stores a recording after walking its cookie provenance.
    @discardableResult
    public func save(_ recording: Recording, replace: Bool = false) throws -> ImportResult {
        try save(recording, provenance: CookieProvenance(recording: recording), replace: replace)
    }
}

