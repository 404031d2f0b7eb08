import Foundation
import HARFormat
import PacketCapture
import ReportStore
import TrafficModel

/// Reads a recording file whose format is detected by content: HAR, pcap or pcapng.
enum SourceFile {
    /// The recording name for a file: its name without the extension.
    static func defaultName(for path: String) -> String {
        let file = (path as NSString).lastPathComponent
        let stem = (file as NSString).deletingPathExtension
        return stem.isEmpty ? file : stem
    }

    static func head(_ path: String) throws -> Data {
        guard FileManager.default.fileExists(atPath: path) else { throw InputError("\(path): no such file") }
        do {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            return try handle.read(upToCount: 64) ?? Data()
        } catch {
            throw InputError("\(path): cannot read the file: \((error as NSError).localizedDescription)")
        }
    }

    /// The recordings in a file: one, or one per client with `splitByClient` on a capture.
    static func read(_ path: String, name: String?, limits: LimitOptions, splitByClient: Bool = false) throws -> [Recording] {
        let start = try head(path)
        let recordingName = name ?? defaultName(for: path)
        if CaptureImporter.looksLikeCapture(start) {
            return try readCapture(path, name: recordingName, limits: limits, splitByClient: splitByClient)
        }
        if start.isEmpty { throw InputError("\(path): offset 0: the file is empty") }
        if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size > limits.maxHarBytes, HARImporter.looksLikeHAR(start) {
            throw InputError("\(path): the file is \(size) bytes, over the HAR size limit of \(limits.maxHarBytes) (raise it with --max-har-bytes)")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw InputError("\(path): cannot read the file: \((error as NSError).localizedDescription)")
        }
        if HARImporter.looksLikeHAR(data) {
            do {
                return [try limits.harImporter.recording(from: data, file: path, name: recordingName)]
            } catch let error as HARImportError {
                throw InputError(error.description)
            }
        }
        throw InputError("\(path): offset 0: not a recording h5replay reads (expected HAR JSON, pcap or pcapng)")
    }

    /// Reads a capture into recordings held in memory.
    static func readCapture(_ path: String, name: String, limits: LimitOptions, splitByClient: Bool) throws -> [Recording] {
        let progress = Progress.line()
        defer { progress.end() }
        do {
            return try CaptureImporter.read(path: path, name: name, options: limits.captureOptions(splitByClient: splitByClient)) { packets, exchanges in
                progress.show("\(path): \(packets) packets, \(exchanges) exchanges")
            }.recordings
        } catch let error as CaptureImporter.Failure {
            throw InputError(error.description)
        }
    }

    /// Imports a file into the store in one transaction; returns each recording and what
    /// the store did with it.
    /// With `redact`, secrets are replaced at rest (`SecretNames.redactAtRest`) before
    /// anything is stored.
    static func importFile(_ path: String, name: String?, replace: Bool, limits: LimitOptions, splitByClient: Bool = false, redact: SecretNames? = nil, into store: ReportStore) throws -> [(ImportedRecording, ReportStore.ImportResult)] {
        do {
            let head = try head(path)
            if CaptureImporter.looksLikeCapture(head) {
                let source = CaptureSource(path: path, format: CaptureImporter.format(of: head), recordedPath: path)
                return try importCapture(source, name: name ?? defaultName(for: path), replace: replace, limits: limits, splitByClient: splitByClient, redact: redact, into: store)
            }
            var recordings = try read(path, name: name, limits: limits, splitByClient: splitByClient)
            if let redact {
                for k in recordings.indices { redact.redactAtRest(&recordings[k]) }
            }
            return Array(zip(recordings.map(ImportedRecording.init), try store.save(recordings, replace: replace)))
        } catch let error as ReportStore.NameTaken {
            throw InputError("\(path): \(error.description)")
        }
    }

    /// Captures stream: each exchange is stored as soon as it is in time order, bodies as
    /// they are built, all in one transaction, so memory does not grow with the capture.
    /// A capture file to import, and what the recording says of its source.
    struct CaptureSource {
        var path: String
        /// `pcap`, `pcapng`, or `live` for `record`.
        var format: String
        /// The source path stored with the recording (nil for a live capture not kept).
        var recordedPath: String?
        /// Store the file's SHA-256 (not for a live capture's temporary file).
        var keepsSHA256 = true
        /// Recording-level diagnostics that go before the capture's own.
        var leadingDiagnostics: [Diagnostic] = []
    }

    static func importCapture(_ source: CaptureSource, name: String, replace: Bool, limits: LimitOptions, splitByClient: Bool, redact: SecretNames?, into store: ReportStore) throws -> [(ImportedRecording, ReportStore.ImportResult)] {
        let path = source.path
        let progress = Progress.line()
        defer { progress.end() }
        do {
            return try store.importStreaming { sink, open in
                // One writer per client with --split client, else one for the capture.
                var writers: [String: ReportStore.RecordingWriter] = [:]
                func writer(_ client: String) throws -> ReportStore.RecordingWriter {
                    if let writer = writers[client] { return writer }
                    let writer = try open(source.format, source.recordedPath, redact)
                    writers[client] = writer
                    return writer
                }
                let end = try CaptureImporter.stream(
                    path: path, options: limits.captureOptions(splitByClient: splitByClient), detachBodies: true,
                    bodies: { try sink.store($0, $1) },
                    progress: { packets, exchanges in progress.show("\(path): \(packets) packets, \(exchanges) exchanges") }
                ) { item in
                    try writer(splitByClient ? item.client : "").add(item.exchange, diagnostics: item.diagnostics)
                }
                if writers.isEmpty { _ = try writer("") }
                let clients = writers.keys.sorted()
                return try clients.map { client in
                    let writer = writers[client]!
                    let recordingName = clients.count > 1 ? CaptureSession.recordingName(name, client: client) : name
                    let diagnostics = source.leadingDiagnostics + end.diagnostics
                    let result = try writer.finish(name: recordingName, sourceSHA256: source.keepsSHA256 ? end.sha256 : nil, diagnostics: diagnostics, replace: replace)
                    let imported = ImportedRecording(name: recordingName, exchangeCount: writer.exchangeCount, diagnostics: diagnostics + writer.firstDiagnostics, moreDiagnostics: writer.diagnosticCount - writer.firstDiagnostics.count)
                    return (imported, result)
                }
            }
        } catch let error as CaptureImporter.Failure {
            throw InputError(error.description)
        }
    }
}

/// What `import` and `record` print about a stored recording.
struct ImportedRecording {
    var name: String
    var exchangeCount: Int
    /// The recording-level diagnostics, then the first per-exchange ones.
    var diagnostics: [Diagnostic]
    /// Per-exchange diagnostics stored but not listed in `diagnostics`.
    var moreDiagnostics: Int

    init(name: String, exchangeCount: Int, diagnostics: [Diagnostic], moreDiagnostics: Int = 0) {
        self.name = name
        self.exchangeCount = exchangeCount
        self.diagnostics = diagnostics
        self.moreDiagnostics = moreDiagnostics
    }

    init(_ recording: Recording) {
        self.init(name: recording.name, exchangeCount: recording.exchanges.count, diagnostics: recording.diagnostics)
    }
}

/// A progress line on standard error, redrawn in place, shown only on a terminal.
final class Progress {
    let enabled: Bool
    var shown = false

    init(enabled: Bool) { self.enabled = enabled }

    static func line() -> Progress { Progress(enabled: isatty(2) == 1) }

    func show(_ text: String) {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8))
        shown = true
    }

    func end() {
        guard enabled, shown else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        shown = false
    }
}
