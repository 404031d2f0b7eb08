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

    /// Reads a capture; with a body sink (a streaming import) bodies go to the store as
    /// they are built.
    static func readCapture(_ path: String, name: String, limits: LimitOptions, splitByClient: Bool, bodySink: ReportStore.BodySink? = nil) throws -> [Recording] {
        let progress = Progress.line()
        defer { progress.end() }
        do {
            let result = try CaptureImporter.read(path: path, name: name, options: limits.captureOptions(splitByClient: splitByClient), bodySink: bodySink.map { sink in { try sink.store($0, $1) } }) { packets, exchanges in
                progress.show("\(path): \(packets) packets, \(exchanges) exchanges")
            }
            return result.recordings
        } catch let error as CaptureImporter.Failure {
            throw InputError(error.description)
        }
    }

    /// Imports a file into the store in one transaction; returns each recording and what
    /// the store did with it.
    /// With `redact`, secrets are replaced at rest (`SecretNames.redactAtRest`) before
    /// anything is stored.
    static func importFile(_ path: String, name: String?, replace: Bool, limits: LimitOptions, splitByClient: Bool = false, redact: SecretNames? = nil, into store: ReportStore) throws -> [(Recording, ReportStore.ImportResult)] {
        func redacted(_ recordings: [Recording]) -> [Recording] {
            guard let redact else { return recordings }
            return recordings.map { recording in
                var copy = recording
                redact.redactAtRest(&copy)
                return copy
            }
        }
        do {
            if CaptureImporter.looksLikeCapture(try head(path)) {
                // Captures stream: bodies are stored while the file is read, all in one
                // transaction, so memory does not grow with the capture.
                return try store.importStreaming(replace: replace) { sink in
                    redacted(try readCapture(path, name: name ?? defaultName(for: path), limits: limits, splitByClient: splitByClient, bodySink: sink))
                }
            }
            let recordings = redacted(try read(path, name: name, limits: limits, splitByClient: splitByClient))
            return Array(zip(recordings, try store.save(recordings, replace: replace)))
        } catch let error as ReportStore.NameTaken {
            throw InputError("\(path): \(error.description)")
        }
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
