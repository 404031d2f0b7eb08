import CookieJar
import Foundation
import ReportStore
import TrafficModel

/// The one way in for recordings that a command names (`replay`, `serve`, `export`): each
/// argument is a stored recording's name, a file (a HAR or a capture, imported first and
/// named after the file), or a folder, which stands for the recording files in it.
///
/// Resolving imports the files together (HARs read in parallel, `ImportPipeline.importFiles`)
/// and keeps in hand each recording read whole, with the cookie provenance walked for it:
/// such a recording is replayed as read, neither read back from the store nor walked
/// again. A recording named, or a capture streamed into the store, is read back with the
/// provenance stored for it (walked when replayed only if it was stored before v24 kept it
/// whole, until the pipeline's next open of the store walks it once).
public struct RecordingSource {
    /// The arguments with each folder replaced by its recording files, in order.
    public let items: [String]
    /// The database's path, for messages.
    public let database: String

    public init(_ arguments: [String], database: String) throws {
        items = try ImportPipeline.SourceFile.expandingFolders(arguments)
        self.database = database
    }

    /// What resolving the arguments gave: the recording names in order, what was imported,
    /// and the recordings read whole on the way.
    public struct Resolved {
        /// Every recording, in the order given (a file may hold several).
        public var names: [String]
        /// What each file imported, in the order the files were imported.
        public var imported: [ImportPipeline.ImportedRecording]
        var inHand: [String: Recording] = [:]
        var provenances: [String: CookieProvenance] = [:]
    }

    /// The recordings and the cookie provenance of each, ready to replay or serve.
    public struct Loaded {
        public var recordings: [Recording]
        /// By recording name: the provenance already walked or stored. A recording missing
        /// here is walked when replayed (`ReplayInput`).
        public var provenances: [String: CookieProvenance]
    }

    /// Imports the files among the items (each replacing a recording of its name) and
    /// lists every recording's name. A file `skipping` takes as unreadable is left out.
    public func resolve(importer: ImportPipeline, store: ReportStore, skipping: ((String, InputError) -> Void)?) throws -> Resolved {
        var skipped: Set<String> = []
        let skip = skipping.map { handler in { (path: String, error: InputError) in skipped.insert(path); handler(path, error) } }
        return try Self.importing(items.filter { FileManager.default.fileExists(atPath: $0) }, importer: importer, store: store, skipping: skip) { results in
            let byFile = Dictionary(grouping: results.map { $0.name }, by: { $0.file ?? "" })
            return items.flatMap { item -> [String] in
                if skipped.contains(item) { return [] }
                // One file may hold several recordings (a page-test tool's runs).
                return FileManager.default.fileExists(atPath: item) ? byFile[item]?.map(\.name) ?? [] : [item]
            }
        }
    }

    /// Imports `files` and lists the names `list` makes of what they imported.
    static func importing(_ files: [String], importer: ImportPipeline, store: ReportStore, skipping: ((String, InputError) -> Void)?,
                          list: ([(name: ImportPipeline.ImportedRecording, result: ReportStore.ImportResult)]) -> [String] = { $0.map { $0.name.name } }) throws -> Resolved {
        var resolved = Resolved(names: [], imported: [])
        let results = try importer.importFiles(files, replace: true, into: store, inHand: { recording, provenance in
            resolved.inHand[recording.name] = recording
            resolved.provenances[recording.name] = provenance
        }, skipping: skipping).map { (name: $0.0, result: $0.1) }
        resolved.imported = results.map { $0.name }
        resolved.names = list(results)
        return resolved
    }

    /// With no arguments: the bundled `Recordings/` folder of the current directory,
    /// imported, or else every recording in the store.
    public static func bundledOrStored(importer: ImportPipeline, store: ReportStore, skipping: ((String, InputError) -> Void)?) throws -> Resolved {
        let bundled = "Recordings"
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: bundled, isDirectory: &isDirectory), isDirectory.boolValue else {
            return Resolved(names: try store.recordingNames(), imported: [])
        }
        return try importing(ImportPipeline.SourceFile.expandingFolders([bundled]), importer: importer, store: store, skipping: skipping)
    }

    /// The recordings `names` lists (all of `resolved`'s when nil), in hand or read back
    /// from the store, each with its cookie provenance; without `provenance` (a caller that
    /// replays nothing: `serve`, `export`), a stored recording's is not read.
    public func load(_ resolved: Resolved, names: [String]? = nil, from store: ReportStore, provenance: Bool = true) throws -> Loaded {
        try Self.load(resolved, names: names, from: store, database: database, provenance: provenance)
    }

    static func load(_ resolved: Resolved, names: [String]?, from store: ReportStore, database: String, provenance: Bool = true) throws -> Loaded {
        var loaded = Loaded(recordings: [], provenances: resolved.provenances)
        for name in names ?? resolved.names {
            if let recording = resolved.inHand[name] {
                loaded.recordings.append(recording)
                continue
            }
            let stored: (recording: Recording, provenance: CookieProvenance?)?
            if provenance {
                stored = try store.recordingWithProvenance(named: name)
            } else {
                stored = try store.recording(named: name).map { ($0, nil) }
            }
            guard let stored else {
                throw InputError("\(name): no such recording in \(database) and no such file; `h5replay import FILE` stores one")
            }
            loaded.recordings.append(stored.recording)
            // Read with the recording, not walked again.
            if let kept = stored.provenance { loaded.provenances[name] = kept }
        }
        return loaded
    }
}
