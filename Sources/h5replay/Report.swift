import ArgumentParser
import Foundation
import Pipeline
import Reports

extension H5Replay {
    struct Report: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a run's matrix and findings.",
            discussion: """
                The table shows the side-by-side matrix (recordings x presets, counts per
                severity) and, per preset, the findings grouped by code. Markdown suits a CI
                job summary and stays under 1,000,000 bytes (GitHub shows none over 1 MiB):
                each code's most important findings always, the rest as far as that allows,
                then counted. JUnit XML has one test case per recording and preset and a
                failure per error finding; HTML is one self-contained file with the matrix,
                every finding with expected vs actual, the redirect chains and both cookie
                jars' timelines. JSON is a stable object for scripts: {run, summary, matrix,
                findings}. Cookie values are redacted unless --show-secrets.

                With --advise, the run's recordings are replayed again for the changes that
                remove each preset's findings (as `h5replay advise`, which takes the same
                --preset-file, --profile-file and --scenario): JSON fills its `advice`
                array, Markdown and the table show them under each preset, HTML in a
                section of their own.

                Examples:
                  h5replay report
                  h5replay report --format html -o report.html
                  h5replay report --run 3 --format junit -o junit.xml
                  h5replay report --recording checkout --format html -o checkout.html
                  h5replay report --advise --format json
                """)

        enum Format: String, ExpressibleByArgument, CaseIterable { case table, markdown, junit, html, json }

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var secrets: SecretOptions

        @Option(help: ArgumentHelp("The run: `latest` or a run id.", valueName: "latest|id"))
        var run: RunSelector = .latest

        @Option(help: "Output format: table, markdown, junit, html or json.")
        var format: Format = .table

        @Flag(help: "In the table, every finding, not only the three most important of each code per preset.")
        var verbose = false

        @Option(name: .shortAndLong, help: "Write the report to a file instead of standard output.")
        var output: String?

        @Option(name: .customLong("recording"), help: ArgumentHelp("Only this recording of the run (repeatable): its matrix row, findings and counts.", valueName: "name"))
        var recordings: [String] = []

        @Flag(help: "Add per preset the changes that remove its findings, each replayed on the run's recordings (as `h5replay advise`).")
        var advise = false

        @Option(name: .customLong("preset-file"), help: ArgumentHelp("With --advise: the preset files the run was given, for its presets of your own; repeatable.", valueName: "file"))
        var presetFiles: [String] = []

        @OptionGroup var adviceInputs: AdviceInputs

        func run() async throws {
            let store = try database.openExisting()
            guard var model = try ReportModel.load(from: store, run: run.id) else {
                throw try run.notFound(in: store, db: database.db)
            }
            if !recordings.isEmpty {
                for name in recordings where !model.recordings.contains(name) {
                    let guess = Suggestion.closest(to: name, among: model.recordings).map { "did you mean \($0)? " } ?? ""
                    throw InputError("--recording \(name): run \(model.run.id ?? 0) replayed no such recording; \(guess)its recordings: \(model.recordings.prefix(20).joined(separator: ", "))\(model.recordings.count > 20 ? ", ..." : "")")
                }
                model = model.only(recordings: Set(recordings))
            }
            let advice = advise ? try adviceInputs.advice(for: model.run, in: store, presetFiles: presetFiles, only: nil) : []
            model.advice = advice.flatMap(\.advice).map(AdviceLine.init)
            let text: String
            switch format {
            case .table:
                let color = output == nil && isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
                text = TableReport(color: color, showSecrets: secrets.showSecrets, secrets: secrets.names, width: TerminalWidth.current()).render(model, verbose: verbose)
                    + (advise ? "\nAdvice, each change replayed on the run's recordings:\n" + Advise.table(advice) : "")
            case .markdown:
                text = MarkdownReport(showSecrets: secrets.showSecrets, secrets: secrets.names).render(model)
            case .junit:
                text = JUnitReport(showSecrets: secrets.showSecrets, secrets: secrets.names).render(model)
            case .html:
                text = HTMLReport(showSecrets: secrets.showSecrets, secrets: secrets.names).render(model, context: try .load(from: store, model: model))
            case .json:
                // Written as it is made: a large run's report is never held whole.
                let report = JSONReport(showSecrets: secrets.showSecrets, secrets: secrets.names)
                try writeReport(to: output) { sink in
                    try report.write(model, to: sink)
                    try sink([0x0A])
                }
                return
            }
            if let output {
                try writeReport(text, to: output)
            } else {
                print(text, terminator: "")
            }
        }
    }
}

/// Writes a report made a part at a time to standard output, or to `path` atomically (a
/// file beside it, renamed over it once complete), naming the file when it cannot.
func writeReport(to path: String?, _ make: ((ArraySlice<UInt8>) throws -> Void) throws -> Void) throws {
    guard let path else {
        try make { part in try part.withUnsafeBytes { try FileHandle.standardOutput.write(contentsOf: $0) } }
        return
    }
    let url = URL(fileURLWithPath: path)
    let partial = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(getpid()).partial")
    func failed(_ error: Error) -> InputError {
        InputError("\(path): cannot write the report: \((error as NSError).localizedDescription)")
    }
    guard FileManager.default.createFile(atPath: partial.path, contents: nil), let handle = try? FileHandle(forWritingTo: partial) else {
        throw InputError("\(path): cannot write the report: cannot create \(partial.path)")
    }
    do {
        defer { try? handle.close() }
        try make { part in try part.withUnsafeBytes { try handle.write(contentsOf: $0) } }
    } catch {
        try? FileManager.default.removeItem(at: partial)
        throw failed(error)
    }
    // rename(2) puts the complete file in place at once, over an older report if any.
    guard rename(partial.path, path) == 0 else {
        let reason = String(cString: strerror(errno))
        try? FileManager.default.removeItem(at: partial)
        throw InputError("\(path): cannot write the report: \(reason)")
    }
}

/// Writes a report file atomically, naming the file when it cannot.
func writeReport(_ text: String, to path: String) throws {
    try writeReport(to: path) { try $0(ArraySlice(text.utf8)) }
}

extension AdviceLine {
    /// The report's line for an advice the Adviser proved.
    init(_ a: Advice) {
        self.init(preset: a.preset, kind: a.kind.rawValue, change: a.change, snippet: a.snippet, removes: a.removes, adds: a.adds, codes: a.codes, added: a.added)
    }
}
