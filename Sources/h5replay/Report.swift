import ArgumentParser
import Foundation
import ReportStore
import Reports

extension H5Replay {
    struct Report: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a run's matrix and findings.",
            discussion: """
                The table shows the side-by-side matrix (recordings x presets, counts per
                severity) and, per preset, the findings grouped by code. JSON is a stable
                object for scripts: {run, summary, matrix, findings}. Cookie values are
                redacted unless --show-secrets.
                """)

        enum Format: String, ExpressibleByArgument, CaseIterable { case table, json }

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var secrets: SecretOptions

        @Option(help: ArgumentHelp("The run: `latest` or a run id.", valueName: "latest|id"))
        var run: String = "latest"

        @Option(help: "Output format: table or json.")
        var format: Format = .table

        @Option(name: .shortAndLong, help: "Write the report to a file instead of standard output.")
        var output: String?

        func validate() throws {
            if run != "latest" && Int64(run) == nil { throw ValidationError("--run takes `latest` or a run id, not \(run)") }
        }

        func run() async throws {
            let store = try database.openExisting()
            guard let model = try ReportModel.load(from: store, run: Int64(run)) else {
                throw InputError(run == "latest" ? "\(database.db) holds no run yet; `h5replay replay` makes one" : "\(database.db) has no run \(run)")
            }
            let text: String
            switch format {
            case .table:
                let color = output == nil && isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
                text = TableReport(color: color, showSecrets: secrets.showSecrets).render(model)
            case .json:
                text = try JSONReport(showSecrets: secrets.showSecrets).render(model) + "\n"
            }
            if let output {
                do {
                    try Data(text.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
                } catch {
                    throw InputError("\(output): cannot write the report: \((error as NSError).localizedDescription)")
                }
            } else {
                print(text, terminator: "")
            }
        }
    }
}
