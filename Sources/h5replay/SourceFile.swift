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

    static func read(_ path: String, name: String?) throws -> Recording {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw InputError("\(path): cannot read the file: \((error as NSError).localizedDescription)")
        }
        let recordingName = name ?? defaultName(for: path)
        if HARImporter.looksLikeHAR(data) {
            do {
                return try HARImporter().recording(from: data, file: path, name: recordingName)
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
    static func importFile(_ path: String, name: String?, replace: Bool, into store: ReportStore) throws -> (Recording, ReportStore.ImportResult) {
        let recording = try read(path, name: name)
        do {
            return (recording, try store.save(recording, replace: replace))
        } catch let error as ReportStore.NameTaken {
            throw InputError("\(path): \(error.description)")
        }
    }
}
