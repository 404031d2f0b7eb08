import ArgumentParser
import Foundation
import Pipeline
import Reports

extension H5Replay {
    struct Gate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Fail a CI job when a run brings new findings at or above a severity.",
            discussion: """
                Compares a run with a baseline run (by id, or the latest run with a label) and
                prints what is new, what is fixed and what is unchanged; with no baseline every
                finding counts as new. A finding is the same across runs when it has the same
                recording, exchange (order, method and URL), preset, code and subject.

                Exit codes: 0 when nothing new reaches the bar, 1 when something does,
                2 for a usage or input error.

                Examples:
                  h5replay replay --label main                     # on the main branch
                  h5replay replay --label pr-42 && h5replay gate --baseline main
                  h5replay gate --fail-on warning --allow REDIRECT_HIDDEN,J3 --junit junit.xml
                  h5replay gate --fail-on error --min-rank api      # documents and API calls

                Ranks, most important first: important (a cookie a scenario names in
                importantCookies), document (the main frame's document), api (first-party
                XHR, fetch, beacon), subresource, third-party. A page on the app's own
                scheme (capacitor://localhost) is another site to every server, so its
                requests rank by what sent them: its API calls rank api.
                """)

        enum Bar: String, ExpressibleByArgument, CaseIterable { case error, warning }

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var secrets: SecretOptions

        @Option(help: ArgumentHelp("The run to judge: `latest` or a run id.", valueName: "latest|id"))
        var run: RunSelector = .latest

        @Option(help: ArgumentHelp("The baseline: a run id or a label (its latest run).", valueName: "run|label"))
        var baseline: String?

        @Option(name: .customLong("fail-on"), help: "The lowest severity of a new finding that fails the gate.")
        var failOn: Bar = .error

        @Option(name: .customLong("min-rank"), help: ArgumentHelp("The least important rank a new finding needs to fail the gate: important (a scenario's importantCookies), document, api (first-party XHR and fetch), subresource or third-party (every finding, the default).", valueName: "rank"))
        var minRank: Rank = .thirdParty

        @Option(help: ArgumentHelp("Finding codes or rule ids that never fail the gate, comma-separated.", valueName: "CODE|RULE,..."))
        var allow: String?

        @Option(help: ArgumentHelp("Also write the run as JUnit XML to this file.", valueName: "file"))
        var junit: String?

        @Option(help: ArgumentHelp("Also write the verdict and matrix as Markdown to this file (a CI job summary).", valueName: "file"))
        var markdown: String?

        func validate() throws {
        }

        func run() async throws {
            let store = try database.openExisting()
            guard let model = try ReportModel.load(from: store, run: run.id), let runID = model.run.id else {
                throw try run.notFound(in: store, db: database.db)
            }
            var baselineRun: RunRow?
            if let baseline {
                baselineRun = try Int64(baseline).flatMap { try store.run(id: $0) } ?? store.run(label: baseline, before: runID)
                guard let found = baselineRun else { throw InputError("\(database.db): no run with id or label \(baseline) to use as the baseline") }
                guard found.id != runID else { throw InputError("the baseline \(baseline) is run \(runID) itself; give an earlier run or label") }
            }
            let allowed = Set((allow ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
            let gate = Reports.Gate(failOn: failOn == .error ? .error : .warning, allow: allowed, minRank: minRank)
            let result = gate.evaluate(run: model.run, findings: model.findings, baseline: baselineRun,
                baselineFindings: try baselineRun.map { try store.findings(run: $0.id!) } ?? [])
            print(gate.text(result, redactor: secrets.redactor), terminator: "")
            if let junit { try writeReport(JUnitReport(showSecrets: secrets.showSecrets, secrets: secrets.names).render(model, gate: result), to: junit) }
            if let markdown { try writeReport(MarkdownReport(showSecrets: secrets.showSecrets, secrets: secrets.names).render(model, gate: result), to: markdown) }
            if !result.passed { throw ExitCode(1) }
        }
    }
}

extension Rank: ExpressibleByArgument {}
