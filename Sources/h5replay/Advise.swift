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
                finding only by sending no request, is never advised.

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

        func run() async throws {
            let store = try database.openExisting()
            guard let row = try store.run(id: run.id) else { throw try run.notFound(in: store, db: database.db) }
            let presets = try Self.presets(of: row, files: presetFiles, only: preset)
            let recordings = try store.recordingNames(run: row.id!).compactMap { try store.recording(named: $0) }
            let advice = try Self.advice(presets, recordings: recordings, profile: Profile(ios: IOSVersion(row.ios) ?? .newest, simulator: row.simulator))
            print(format == .json ? try Self.json(advice) : Self.table(advice), terminator: "")
        }

        /// The run's presets (those `only` selects), at the releases the run replayed.
        static func presets(of row: RunRow, files: [String], only: String?) throws -> [Preset] {
            let all = try PresetOptions.available(files)
            let names = row.presets.split(separator: ",").map(String.init)
            let wanted = only.map { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } }
            let chosen = names.filter { name in wanted.map { $0.contains { Scenario.Override.glob($0, name) } } ?? true }
            if chosen.isEmpty { throw InputError("--preset \(only ?? ""): the run replayed none of it; its presets: \(names.joined(separator: ", "))") }
            return try chosen.map { name in
                guard let found = try? Preset.selecting(name, in: all).presets.first else {
                    throw InputError("the run's preset \(name) is not built in; pass the preset file it came from with --preset-file")
                }
                return found
            }
        }

        /// Every preset's advice, each replayed on the recordings with their sidecar scenarios.
        static func advice(_ presets: [Preset], recordings: [Recording], profile: Profile) throws -> [PresetAdvice] {
            var runner = ReplayRunner(presets: presets, profile: profile)
            try runner.setScenarios(nil, for: recordings)
            return advice(runner, recordings: recordings)
        }

        /// Every preset of the runner's advice, on recordings it has made ready (`replay --advise`).
        static func advice(_ runner: ReplayRunner, recordings: [Recording]) -> [PresetAdvice] {
            let adviser = Adviser(runner: runner, recordings: recordings)
            return runner.presets.map { adviser.advise($0, others: runner.presets) }
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
