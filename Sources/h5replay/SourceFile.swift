import Foundation
import HARFormat
import ReportStore
import TrafficModel

/// Reads a recording file whose format is detected by content.
enum SourceFile {
    /// The recording name for a file: its name without the extension.
    static func defaultName(for path: String) -> String {
        let file = (path as NSString).lastPathComponent
        let stem = (file as NSString).deletingPathExtension
        return stem.isEmpty ? file : stem
    }

    static func read(_ path: String, name: String?, limits: LimitOptions) throws -> Recording {
        if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size > limits.maxHarBytes,
            (try? FileHandle(forReadingFrom: URL(fileURLWithPath: path)).read(upToCount: 64)).map({ HARImporter.looksLikeHAR($0 ?? Data()) }) == true
        {
            throw InputError("\(path): the file is \(size) bytes, over the HAR size limit of \(limits.maxHarBytes) (raise it with --max-har-bytes)")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw InputError("\(path): cannot read the file: \((error as NSError).localizedDescription)")
        }
        let recordingName = name ?? defaultName(for: path)
        if HARImporter.looksLikeHAR(data) {
            do {
                return try limits.harImporter.recording(from: data, file: path, name: recordingName)
            } catch let error as HARImportError {
                throw InputError(error.description)
            }
        }
        if data.starts(with: [0xD4, 0xC3, 0xB2, 0xA1]) || data.starts(with: [0xA1, 0xB2, 0xC3, 0xD4]) || data.starts(with: [0x0A, 0x0D, 0x0D, 0x0A]) || data.starts(with: [0x4D, 0x3C, 0xB2, 0xA1]) {
            throw InputError("\(path): a pcap capture; pcap import is not built yet, export the flow as HAR instead")
        }
        throw InputError("\(path): offset 0: not a recording h5replay reads (expected HAR JSON)")
    }

    /// Imports a file into the store; returns the recording and what the store did.
    static func importFile(_ path: String, name: String?, replace: Bool, limits: LimitOptions, into store: ReportStore) throws -> (Recording, ReportStore.ImportResult) {
        let recording = try read(path, name: name, limits: limits)
        do {
            return (recording, try store.save(recording, replace: replace))
        } catch let error as ReportStore.NameTaken {
            throw InputError("\(path): \(error.description)")
        }
    }
}
