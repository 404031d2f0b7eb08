import ArgumentParser
import CookieJar
import Foundation
import Pipeline
import ReportStore
import Reports
import TrafficModel
import WebViewEmulation

extension H5Replay {
    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replay recordings through emulated WKWebView strategies side by side.",
            discussion: """
                A RECORDING is a name in the database, a file path (a file is imported
                first, named after the file), or a folder, which stands for its .har, .pcap
                and .pcapng files. With none, the bundled Recordings/ folder of the current
                directory is imported and replayed; without that folder, every recording in
                the database is. Each preset replays each recording; the findings go to the
                database as one run, and the side-by-side matrix is printed.

                Examples:
                  h5replay replay
                  h5replay replay Recordings/login-redirect.har --preset plain,urlprotocol-naive
                  h5replay replay checkout --ios 11.0 --simulator --label nightly
                """)

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var limits: LimitOptions
        @OptionGroup var profileOptions: ProfileOptions
        @OptionGroup var secrets: SecretOptions
        @OptionGroup var scenarioOptions: ScenarioOptions

        @OptionGroup var presetOptions: PresetOptions
        @OptionGroup var corpus: CorpusOptions

        @Option(help: "A label for the run, for baselines (`gate --baseline LABEL`).")
        var label: String?

        @Option(help: ArgumentHelp("Replay only slice i of n (1-based) of the recordings, sorted by name, for parallel CI jobs; `h5replay merge` combines the shards' databases.", valueName: "i/n"))
        var shard: ShardSlice?

        @Flag(help: "Print every finding, not only the three most important of each code per preset.")
        var verbose = false

        @Option(help: ArgumentHelp("Leave out cookie findings less likely than P (0 to 1, or a percentage): a script-written cookie is missed with likelihood delay/window; 0.1 keeps only warnings and errors.", valueName: "P"))
        var minLikelihood: Likelihood = Likelihood(0)

        @Flag(help: "Print the matrix only, not every finding.")
        var quiet = false

        @Flag(help: "After the matrix, print per preset the changes that remove its findings, each replayed on these recordings (as `h5replay advise`).")
        var advise = false

        @Option(help: ArgumentHelp("The preset whose findings are the web view's own (ITP, the recording browser's differences from WKWebView): another preset's finding that it shares is counted under it alone. `none` counts every finding under its own preset. Default: plain, when the run has it.", valueName: "NAME"))
        var baselinePreset: String?

        @Argument(help: ArgumentHelp("Recording names, files, or folders of recordings.", valueName: "recording"))
        var recordings: [String] = []

        func run() async throws {
            // Files the run is given are read first: a bad one stores nothing.
            let explicit = try scenarioOptions.explicitScenario()
            let selected = try presetOptions.selected()
            let store = try database.open(bulk: true)
            let progress = Progress.line()
            defer { progress.end() }
            let importer = limits.pipeline(progress)
            var provenances: [String: CookieProvenance] = [:]
            let skipped = corpus.skippedFiles()
            let loaded = try loadRecordings(store, importer: importer, provenances: &provenances, skipped: skipped)
            var runner = ReplayRunner(presets: selected, profile: try profileOptions.profile())
            runner.detector.minLikelihood = minLikelihood.value
            runner.baselinePreset = try baseline(among: selected)
            // The provenance walked when a file was imported, not walked again.
            runner.provenances = provenances
            if let explicit {
                runner.scenario = explicit
            } else {
                for recording in loaded {
                    if let sidecar = try ScenarioOptions.sidecar(for: recording.sourcePath) { runner.scenarios[recording.name] = sidecar }
                }
            }
            let exchanges = loaded.reduce(0) { $0 + $1.exchanges.count }
            FileHandle.standardError.write(Data("replaying \(loaded.count) recording(s), \(exchanges) exchange(s), under \(runner.presets.count) preset(s), \(runner.profile.name)...\n".utf8))
            let git = ProcessInfo.processInfo.environment["GITHUB_SHA"] ?? ProcessInfo.processInfo.environment["CI_COMMIT_SHA"]
            // Rendered from the results as they went by; `report` reads a stored run back.
            // Unless every finding is printed, only those the report shows are kept.
            var builder = ReportModel.Builder(shownPerCode: verbose ? nil : quiet ? 0 : TableReport.shownPerCode, baselinePreset: runner.baselinePreset)
            let row = try runner.run(loaded, in: store, label: label, toolVersion: H5Replay.version, gitRevision: git) { builder.add($0) }
            let runID = row.id!
            let model = builder.model(run: row)
            let color = isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
            print(TableReport(color: color, showSecrets: secrets.showSecrets, secrets: secrets.names, width: TerminalWidth.current()).render(model, details: !quiet, verbose: verbose), terminator: "")
            print(Self.frameworks(loaded, presets: selected.map(\.name), redactor: secrets.redactor), terminator: "")
            if advise { print("\nAdvice, each change replayed on these recordings:\n" + Advise.table(Advise.advice(runner, recordings: loaded)), terminator: "") }
            print("\nStored as run \(runID) in \(database.db). `h5replay report --run \(runID) --format json` gives it to scripts.")
            if let summary = skipped?.summary { print(summary) }
        }

        /// The recordings made inside a framework, each with the presets that replay it and
        /// whether the run had them; "" when none shows one.
        static func frameworks(_ recordings: [Recording], presets: [String], redactor: Redactor) -> String {
            var out = ""
            for recording in recordings {
                guard let framework = RecordedFramework.detect(in: recording) else { continue }
                let replayed = presets.contains { name in framework.presets.contains { Scenario.Override.glob($0, name.split(separator: "@").first.map(String.init) ?? name) } }
                out += "  \(recording.name): \(redactor.text(framework.sentence))\(replayed ? "" : " (not among this run's presets)")\n"
            }
            return out.isEmpty ? "" : "\nRecorded inside a framework:\n" + out
        }

        /// The baseline preset: the one named, which must be among the run's presets; by
        /// default plain when the run has it.
        func baseline(among selected: [Preset]) throws -> String? {
            guard let name = baselinePreset else { return selected.contains { $0.name == "plain" } ? "plain" : nil }
            if name == "none" { return nil }
            guard selected.contains(where: { $0.name == name }) else {
                let guess = Suggestion.closest(to: name, among: selected.map(\.name)).map { "did you mean \($0)? " } ?? ""
                throw InputError("--baseline-preset \(name) is not among the run's presets (\(selected.map(\.name).joined(separator: ", "))); \(guess)add it to --preset, or say none")
            }
            return name
        }

        /// The recordings to replay: named, imported from files, or the bundled folder.
        /// A HAR file is replayed as read, not read back from the database; a capture,
        /// streamed into the store without being held, is read back.
        func loadRecordings(_ store: ReportStore, importer: ImportPipeline, provenances: inout [String: CookieProvenance], skipped: SkippedFiles?) throws -> [Recording] {
            var names: [String] = []
            var inHand: [String: Recording] = [:]
            var walked: [String: CookieProvenance] = [:]
            let keep: (Recording, CookieProvenance) -> Void = { recording, provenance in
                inHand[recording.name] = recording
                walked[recording.name] = provenance
            }
            if recordings.isEmpty {
                let bundled = "Recordings"
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: bundled, isDirectory: &isDirectory), isDirectory.boolValue {
                    for (recording, _) in try importer.importFiles(ImportPipeline.SourceFile.expandingFolders([bundled]), replace: true, into: store, inHand: keep, skipping: skipped?.handler) {
                        names.append(recording.name)
                    }
                } else {
                    names = try store.recordingNames()
                }
                if names.isEmpty { throw InputError("nothing to replay: no Recordings/ folder here and no recordings in \(database.db); pass HAR files or recording names") }
            } else {
                // Files are imported together (HARs read in parallel), names kept in order.
                // A folder stands for the recordings in it.
                let items = try ImportPipeline.SourceFile.expandingFolders(recordings)
                let files = items.filter { FileManager.default.fileExists(atPath: $0) }
                let results = try importer.importFiles(files, replace: true, into: store, inHand: keep, skipping: skipped?.handler)
                // What the import warns of in a file named here (a capture with no page's
                // request, NC1; entries with no response) goes to stderr, as `import` prints it.
                for (recording, _) in results {
                    let warnings = recording.diagnostics.filter { $0.severity != .note }
                    for d in warnings.prefix(3) {
                        FileHandle.standardError.write(Data("\(recording.name): \(d.severity.rawValue): \(secrets.redactor.text(d.message))\n".utf8))
                    }
                    if warnings.count > 3 || recording.moreDiagnostics > 0 {
                        FileHandle.standardError.write(Data("\(recording.name): more diagnostics; `h5replay show \(recording.name)` lists them\n".utf8))
                    }
                }
                let byFile = Dictionary(grouping: results.map(\.0), by: { $0.file ?? "" })
                for item in items {
                    if skipped?.paths.contains(item) == true { continue }
                    if FileManager.default.fileExists(atPath: item) {
                        // One file may hold several recordings (a page-test tool's runs).
                        names += byFile[item]?.map(\.name) ?? []
                    } else {
                        names.append(item)
                    }
                }
            }
            if names.isEmpty, let skipped, skipped.count > 0 { throw InputError("nothing to replay: every file given was skipped as unreadable") }
            if let (index, count) = shard.map({ ($0.index, $0.count) }) {
                // A deterministic slice: every n-th name of the sorted list, from the i-th.
                names = Array(Set(names)).sorted().enumerated().filter { $0.offset % count == index }.map(\.element)
                if names.isEmpty { FileHandle.standardError.write(Data("shard \(index + 1)/\(count) holds no recording\n".utf8)) }
            }
            provenances = walked
            return try names.map { name in
                if let recording = inHand[name] { return recording }
                guard let recording = try store.recording(named: name) else {
                    throw InputError("\(name): no such recording in \(database.db) and no such file; `h5replay import FILE` stores one")
                }
                return recording
            }
        }
    }
}
