import ArgumentParser
import Foundation
import Pipeline
import Reports

extension H5Replay {
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a recording: its exchanges, where every cookie came from, and the import diagnostics.",
            discussion: """
                Each cookie a request carries is server-set (by which exchange and redirect
                hop), script-set (inferred: written by script just before the request that
                first carries it) or pre-existing (there before the flow began). Script writes
                and deletions inferred at an exchange are listed under it. An exchange that
                is no evidence of the page's cookies says why (E1-E6). Cookie values are
                redacted unless --show-secrets.

                Examples:
                  h5replay show login-redirect
                  h5replay show login-redirect --format json > login-redirect.json
                  h5replay show login-redirect --headers
                """)

        enum Format: String, ExpressibleByArgument, CaseIterable { case table, json }

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var secrets: SecretOptions

        @Option(help: "Output format: table or json.")
        var format: Format = .table

        @Flag(help: "Print each exchange's recorded request and response headers, each Set-Cookie with what a browser's jar does with it (stored, deletes, or refused and why).")
        var headers = false

        @Argument(help: "The recording's name.")
        var recording: String

        func run() async throws {
            let store = try database.openExisting()
            guard let detail = try store.detail(named: recording) else {
                throw InputError("\(recording): no such recording in \(database.db); `h5replay import FILE` stores one")
            }
            let report = RecordingReport(showSecrets: secrets.showSecrets, secrets: secrets.names)
            switch format {
            case .table: print(report.table(detail, headers: headers), terminator: "")
            case .json: print(try report.json(detail, headers: headers))
            }
        }
    }
}
