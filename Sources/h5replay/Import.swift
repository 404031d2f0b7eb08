import ArgumentParser
import Foundation
import Pipeline

extension H5Replay {
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import recordings (HAR, pcap, pcapng) into the database.",
            discussion: """
                Each file becomes one recording, named after the file without its extension;
                the format is told by content, not by the name.

                HAR from Safari, Chrome, Firefox, Charles, Proxyman, mitmproxy, Playwright
                and Polly.js is read, with each exporter's quirks. A malformed file is
                rejected with exit code 2 and a message naming the file, the entry and the
                field.

                pcap and pcapng captures (tcpdump, Wireshark, `h5replay record`) are read
                through libpcap: TCP streams are reassembled and HTTP/1.1 is parsed, with
                bodies decoded (gzip, deflate, br). HTTPS connections are counted and reported
                as not decodable. A gap, a truncated body or a malformed message becomes a
                diagnostic on the recording; the exchange is kept and marked. `--split client`
                makes one recording per client address (NAME-ADDRESS).

                Any of them compressed whole reads as the file itself: gzip (session.har.gz,
                capture.pcap.gz) or zlib (mitmproxy's .zhar). It is inflated into the
                temporary folder while it is read (--max-inflated-bytes bounds it).

                Each file is stored in one transaction: all of it or nothing. The files of one
                call are imported in order; one failing stops the call, and the files before
                it stay imported. With --keep-going a file that cannot be read is named on
                stderr and skipped, and the others go on.

                Examples:
                  h5replay import login.har
                  h5replay import staging.pcapng --split client
                  h5replay import flows.zhar bug-4711.har.gz
                  h5replay import exports/ --keep-going
                """)

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var limits: LimitOptions
        @OptionGroup var secrets: SecretOptions
        @OptionGroup var corpus: CorpusOptions

        @Flag(help: "Store cookie values, Authorization and the other secret headers and query values as stand-ins that keep their length and identity, never the values. Bodies are kept.")
        var redact = false

        @Option(help: "The recording's name (only with one file).")
        var name: String?

        @Flag(help: "Replace a recording of the same name that holds a different file.")
        var replace = false

        @Option(help: ArgumentHelp("Captures: `client` makes one recording per client address.", valueName: "client"))
        var split: SplitMode?

        @Argument(help: ArgumentHelp("HAR, pcap or pcapng files to import; a folder stands for the recordings in it.", valueName: "file"))
        var files: [String]

        func validate() throws {
            if files.isEmpty { throw ValidationError("give at least one file to import") }
            if name != nil && files.count > 1 { throw ValidationError("--name applies to one file; import the files one by one") }
        }

        func run() async throws {
            let store = try database.open(bulk: true)
            let progress = Progress.line()
            defer { progress.end() }
            let importer = limits.pipeline(progress)
            let files = try ImportPipeline.SourceFile.expandingFolders(files)
            if name != nil && files.count > 1 { throw ValidationError("--name applies to one file, and the folder holds \(files.count); import them without --name") }
            let skipped = corpus.skippedFiles()
            for file in files {
                // A file skipped rolled its transaction back: nothing of it is stored.
                guard let imported = try SkippedFiles.reading(file, skipped: skipped, {
                    try importer.importFile(file, name: name, replace: replace, splitByClient: split == .client, redact: redact ? secrets.names : nil, into: store)
                }) else { continue }
                for (recording, result) in imported {
                let verb: String
                switch result {
                case .imported(_, let replaced): verb = replaced ? "replaced" : "imported"
                case .unchanged: verb = "unchanged"
                }
                print("\(verb) \(recording.name): \(recording.exchangeCount) exchange(s) from \(file)")
                for d in recording.diagnostics where d.severity != .note {
                    print("  \(d.severity.rawValue): \(secrets.redactor.text(d.message))")
                }
                let notes = recording.diagnostics.filter { $0.severity == .note }.count
                if notes > 0 { print("  \(notes) note(s); `h5replay show \(recording.name)` lists them") }
                if recording.moreDiagnostics > 0 { print("  \(recording.moreDiagnostics) more diagnostic(s); `h5replay show \(recording.name)` lists them") }
                }
            }
            if let summary = skipped?.summary { print(summary) }
        }
    }
}
