import ArgumentParser
import Foundation
import Pipeline

/// `h5replay advise`: per preset of a stored run, the changes that remove its findings,
/// each replayed on the run's recordings and counted (Pipeline's Adviser).
extension H5Replay {
    struct Advise: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Advise the changes that remove a run's findings, each proven by replay.",
            discussion: """
                For each preset of the run, the findings are grouped by code and acting rule;
                the model proposes changes for each group (one more registered mitigation whose
                cited rules act on that code, the first framework release where the rule no
                longer holds, another preset of the run), and each is replayed on the run's
                recordings. Shown: the best few per preset (none added first, then most
                errors removed), each with the preset-file snippet that makes it, and the
                groups no shown change removes. A change that adds an error, or removes a
                finding only by sending no request, is never advised. A finding the run's
                baseline preset shares is the web view's own: nothing to fix.

                The run's recordings are replayed under its iOS version and device kind;
                give the profile file and the scenario the run was given again
                (--profile-file, --scenario...), as for its presets of your own
                (--preset-file). Without --scenario, each recording's sidecar scenario.

                Examples:
                  h5replay replay && h5replay advise
                  h5replay advise --preset urlprotocol-naive --format json
                """)

        enum Format: String, ExpressibleByArgument, CaseIterable { case table, json }

        @OptionGroup var database: DatabaseOptions

        @Option(help: ArgumentHelp("The run: `latest` or a run id.", valueName: "latest|id"))
        var run: RunSelector = .latest

        @Option(help: ArgumentHelp("Only these presets of the run, comma-separated names or * globs.", valueName: "a,b*"))
        var preset: String?

        @Option(name: .customLong("preset-file"), help: ArgumentHelp("The preset files the run was given, for its presets of your own; repeatable.", valueName: "file"))
        var presetFiles: [String] = []

        @Option(help: "Output format: table or json.")
        var format: Format = .table

        @OptionGroup var inputs: AdviceInputs

        func run() async throws {
            let store = try database.openExisting()
            guard let row = try store.run(id: run.id) else { throw try run.notFound(in: store, db: database.db) }
            let advice = try inputs.advice(for: row, in: store, presetFiles: presetFiles, only: preset)
            print(format == .json ? try Self.json(advice) : Self.table(advice), terminator: "")
        }

        /// The run's presets at the releases it replayed, and of them those `only` selects.
        static func presets(of row: RunRow, files: [String], only: String?) throws -> (all: [Preset], chosen: [Preset]) {
            let available = try PresetOptions.available(files)
            let names = row.presets.split(separator: ",").map(String.init)
            let wanted = only.map { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } }
            let chosen = names.filter { name in wanted.map { $0.contains { Scenario.Override.glob($0, name) } } ?? true }
            if chosen.isEmpty { throw InputError("--preset \(only ?? ""): the run replayed none of it; its presets: \(names.joined(separator: ", "))") }
            let all = try names.map { name in
                guard let found = try? Preset.selecting(name, in: available).presets.first else {
                    throw InputError("the run's preset \(name) is not built in; pass the preset file it came from with --preset-file")
                }
                return found
            }
            return (all, all.filter { chosen.contains($0.name) })
        }

        /// The advice for `chosen` among the runner's presets, on recordings it has made
        /// ready; the runner's baseline preset says which findings are the web view's own.
        static func advice(_ runner: ReplayRunner, recordings: [Recording], chosen: [Preset]? = nil) -> [PresetAdvice] {
            let adviser = Adviser(runner: runner, recordings: recordings)
            return adviser.advise(all: chosen ?? runner.presets, others: runner.presets)
        }

        /// One block per preset: its advice, one line each, then what stays unsolved.
        static func table(_ all: [PresetAdvice]) -> String {
            var out = ""
            for p in all where p.findings > 0 {
                out += "\(p.preset): \(p.findings) finding(s)\n"
                if p.advice.isEmpty { out += "  no change the model proposes removes one without adding an error\n" }
                for a in p.advice {
                    let codes = a.codes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                    let added = a.added.sorted { $0.key < $1.key }.map { " \($0.key) \($0.value)" }.joined(separator: ",")
                    out += "  \(a.kind.rawValue): \(a.snippet)  removes \(a.removes) (\(codes)), adds \(a.adds)\(added.isEmpty ? "" : " (\(added.dropFirst()))")\n"
                }
                let unsolved = p.unsolved.prefix(6).map { "\($0.code) (\($0.rules.joined(separator: ", "))) \($0.count)" }
                let more = p.unsolved.count > 6 ? "; \(p.unsolved.count - 6) more group(s)" : ""
                if !unsolved.isEmpty { out += "  unsolved: \(unsolved.joined(separator: "; "))\(more)\n" }
            }
            return out.isEmpty ? "No findings: nothing to advise.\n" : out
        }

        /// `{"advice": [...], "unsolved": [...]}`, one advice object per line of the table.
        static func json(_ all: [PresetAdvice]) throws -> String {
            struct Unsolved: Encodable { var preset: String; var groups: [PresetAdvice.Group] }
            struct Out: Encodable { var advice: [Advice]; var unsolved: [Unsolved] }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let out = Out(advice: all.flatMap(\.advice), unsolved: all.filter { !$0.unsolved.isEmpty }.map { Unsolved(preset: $0.preset, groups: $0.unsolved) })
            return String(decoding: try encoder.encode(out), as: UTF8.self) + "\n"
        }
    }
}

/// What `advise` and `report --advise` replay a stored run's recordings with, beyond what
/// the run stored (its presets, iOS version, device kind and baseline preset): the profile
/// file and the scenario the run was given.
struct AdviceInputs: ParsableArguments {
    @Option(name: .customLong("profile-file"), help: ArgumentHelp("The profile file the run was given (JSON numbers over its iOS version and device kind).", valueName: "file"))
    var profileFile: String?

    @OptionGroup var scenarioOptions: ScenarioOptions

    /// The run's profile: its iOS version and device kind, then the profile file's numbers.
    func profile(of row: RunRow) throws -> Profile {
        let base = Profile(ios: IOSVersion(row.ios) ?? .newest, simulator: row.simulator)
        return try profileFile.map { try ProfileOptions.applying(file: $0, to: base) } ?? base
    }

    /// The advice for the run's presets (those `only` selects), each replayed on the run's
    /// recordings as the run replayed them.
    func advice(for row: RunRow, in store: ReportStore, presetFiles: [String], only: String?) throws -> [PresetAdvice] {
        let (all, chosen) = try H5Replay.Advise.presets(of: row, files: presetFiles, only: only)
        // Each with the provenance stored for it, not walked again.
        let stored = try store.recordingNames(run: row.id!).compactMap { try store.recordingWithProvenance(named: $0) }
        let recordings = stored.map(\.recording)
        var runner = ReplayRunner(presets: all, profile: try profile(of: row))
        for (recording, provenance) in stored { runner.provenances[recording.name] = provenance }
        runner.baselinePreset = row.baselinePreset
        try runner.setScenarios(try scenarioOptions.explicitScenario(), for: recordings)
        return H5Replay.Advise.advice(runner, recordings: recordings, chosen: chosen)
    }
}
