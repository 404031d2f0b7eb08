import ArgumentParser
import Foundation
import Pipeline
import Reports

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
            let skipped = corpus.skippedFiles()
            let loaded = try loadRecordings(store, importer: limits.pipeline(progress), skipped: skipped)
            var runner = ReplayRunner(presets: selected, profile: try profileOptions.profile())
            runner.detector.minLikelihood = minLikelihood.value
            runner.baselinePreset = try baseline(among: selected)
            // The provenance walked when a file was imported, not walked again.
            runner.provenances = loaded.provenances
            try runner.setScenarios(explicit, for: loaded.recordings)
            let recordings = loaded.recordings
            let exchanges = recordings.reduce(0) { $0 + $1.exchanges.count }
            FileHandle.standardError.write(Data("replaying \(recordings.count) recording(s), \(exchanges) exchange(s), under \(runner.presets.count) preset(s), \(runner.profile.name)...\n".utf8))
            let git = ProcessInfo.processInfo.environment["GITHUB_SHA"] ?? ProcessInfo.processInfo.environment["CI_COMMIT_SHA"]
            // Rendered from the results as they went by; `report` reads a stored run back.
            // Unless every finding is printed, only those the report shows are kept.
            var builder = ReportModel.Builder(shownPerCode: verbose ? nil : quiet ? 0 : TableReport.shownPerCode, baselinePreset: runner.baselinePreset)
            let row = try runner.run(recordings, in: store, label: label, toolVersion: H5Replay.version, gitRevision: git) { builder.add($0) }
            let runID = row.id!
            let model = builder.model(run: row)
            let color = isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
            print(TableReport(color: color, showSecrets: secrets.showSecrets, secrets: secrets.names, width: TerminalWidth.current()).render(model, details: !quiet, verbose: verbose), terminator: "")
            print(Self.frameworks(recordings, presets: selected.map(\.name), redactor: secrets.redactor), terminator: "")
            if advise { print("\nAdvice, each change replayed on these recordings:\n" + Advise.table(Advise.advice(runner, recordings: recordings)), terminator: "") }
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

        /// The recordings to replay: named, imported from files, or the bundled folder
        /// (`RecordingSource`), the run's shard of them when it is one.
        func loadRecordings(_ store: ReportStore, importer: ImportPipeline, skipped: SkippedFiles?) throws -> RecordingSource.Loaded {
            let source = try RecordingSource(recordings, database: database.db)
            var resolved: RecordingSource.Resolved
            if recordings.isEmpty {
                resolved = try RecordingSource.bundledOrStored(importer: importer, store: store, skipping: skipped?.handler)
                if resolved.names.isEmpty { throw InputError("nothing to replay: no Recordings/ folder here and no recordings in \(database.db); pass HAR files or recording names") }
            } else {
                resolved = try source.resolve(importer: importer, store: store, skipping: skipped?.handler)
                warn(resolved.imported)
            }
            if resolved.names.isEmpty, let skipped, skipped.count > 0 { throw InputError("nothing to replay: every file given was skipped as unreadable") }
            if let (index, count) = shard.map({ ($0.index, $0.count) }) {
                // A deterministic slice: every n-th name of the sorted list, from the i-th.
                resolved.names = Array(Set(resolved.names)).sorted().enumerated().filter { $0.offset % count == index }.map(\.element)
                if resolved.names.isEmpty { FileHandle.standardError.write(Data("shard \(index + 1)/\(count) holds no recording\n".utf8)) }
            }
            return try source.load(resolved, from: store)
        }

        /// What the import warns of in a file named here (a capture with no page's request,
        /// NC1; entries with no response) goes to stderr, as `import` prints it.
        func warn(_ imported: [ImportPipeline.ImportedRecording]) {
            for recording in imported {
                let warnings = recording.diagnostics.filter { $0.severity != .note }
                for d in warnings.prefix(3) {
                    FileHandle.standardError.write(Data("\(recording.name): \(d.severity.rawValue): \(secrets.redactor.text(d.message))\n".utf8))
                }
                if warnings.count > 3 || recording.moreDiagnostics > 0 {
                    FileHandle.standardError.write(Data("\(recording.name): more diagnostics; `h5replay show \(recording.name)` lists them\n".utf8))
                }
            }
        }
    }
}
