import ArgumentParser
import Foundation
import Pipeline

extension H5Replay {
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Export a recording as HAR 1.2.",
            discussion: """
                The HAR reads back into h5replay, Chrome and mitmproxy; a round trip
                keeps every exchange's method, URL, headers, body bytes, status and
                redirect chain.

                A HAR is what people attach to bug reports, so the export is sanitized by
                default, as Chrome DevTools' is: cookie values (Cookie and Set-Cookie),
                Authorization and the other secret headers, and secret query values are
                replaced by stand-ins that keep each value's length and identity (equal values
                stay equal, so the findings of the export are the recording's). Bodies are
                kept. --include-secrets writes the exact copy.

                Examples:
                  h5replay export login-redirect --har -o bug-1234.har
                  h5replay export login-redirect --har -o exact.har --include-secrets
                """)

        @OptionGroup var database: DatabaseOptions

        @Option(name: .long, help: ArgumentHelp("Another header whose value is a secret (repeatable; also H5REPLAY_SECRET_HEADERS, comma-separated).", valueName: "name"))
        var secretHeader: [String] = []

        @Option(name: .long, help: ArgumentHelp("Another query parameter whose value is a secret (repeatable; also H5REPLAY_SECRET_QUERY).", valueName: "name"))
        var secretQuery: [String] = []

        @Flag(help: "Write cookie values, Authorization and the other secrets as recorded: an exact copy.")
        var includeSecrets = false

        @Flag(help: "Write HAR 1.2 (the only export format so far).")
        var har = false

        @Option(name: .shortAndLong, help: "The file to write.")
        var output: String

        @Argument(help: "The recording: a stored name, or a HAR or capture file (imported first).")
        var recording: String

        func validate() throws {
            if !har { throw ValidationError("choose an export format: --har") }
        }

        func run() async throws {
            let store = try database.openExisting()
            let source = try RecordingSource([recording], database: database.db)
            let recordings = try source.load(source.resolve(importer: ImportPipeline(), store: store, skipping: nil), from: store, provenance: false).recordings
            guard recordings.count == 1, let loaded = recordings.first else {
                throw InputError("\(recording): holds \(recordings.count) recordings; export one of them by name")
            }
            let names = includeSecrets ? nil : SecretNames.configured(headers: secretHeader, queryParameters: secretQuery)
            let data = try RecordingExport.har(loaded, redacting: names, toolVersion: H5Replay.version)
            do {
                try data.write(to: URL(fileURLWithPath: output), options: .atomic)
            } catch {
                throw InputError("\(output): cannot write: \((error as NSError).localizedDescription)")
            }
            print("exported \(loaded.name): \(loaded.exchanges.count) exchange(s) to \(output)" + (includeSecrets ? ", secrets included" : ", secrets replaced (--include-secrets for an exact copy)"))
        }
    }
}
