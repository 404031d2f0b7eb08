import ArgumentParser
import Foundation
import ReportStore

extension H5Replay {
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import recordings (HAR) into the database.",
            discussion: """
                Each file becomes one recording, named after the file without its extension.
                HAR from Safari, Chrome, Firefox, Charles, Proxyman, mitmproxy, Playwright and
                Polly.js is read, with each exporter's quirks. A malformed file is rejected with
                exit code 2 and a message naming the file, the entry and the field; nothing of
                it is stored. All files of one call are imported in order; one failing stops
                the call, and the files before it stay imported.
                """)

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var limits: LimitOptions

        @Option(help: "The recording's name (only with one file).")
        var name: String?

        @Flag(help: "Replace a recording of the same name that holds a different file.")
        var replace = false

        @Argument(help: ArgumentHelp("HAR files to import.", valueName: "file"))
        var files: [String]

        func validate() throws {
            if files.isEmpty { throw ValidationError("give at least one file to import") }
            if name != nil && files.count > 1 { throw ValidationError("--name applies to one file; import the files one by one") }
        }

        func run() async throws {
            let store = try database.open()
            for file in files {
                let (recording, result) = try SourceFile.importFile(file, name: name, replace: replace, limits: limits, into: store)
                let verb: String
                switch result {
                case .imported(_, let replaced): verb = replaced ? "replaced" : "imported"
                case .unchanged: verb = "unchanged"
                }
                print("\(verb) \(recording.name): \(recording.exchanges.count) exchange(s) from \(file)")
                for d in recording.diagnostics where d.severity != .note {
                    print("  \(d.severity.rawValue): \(d.message)")
                }
                let notes = recording.diagnostics.filter { $0.severity == .note }.count
                if notes > 0 { print("  \(notes) note(s); `h5replay report` and the diagnostic table hold them") }
            }
        }
    }
}
