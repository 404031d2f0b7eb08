import ArgumentParser
import Foundation
import TrafficModel
import HARFormat
import ReportStore

extension H5Replay {
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Export a recording as HAR 1.2.",
            discussion: "The HAR reads back into h5replay, Chrome and mitmproxy; a round trip keeps every exchange's method, URL, headers, body bytes, status and redirect chain.")

        @OptionGroup var database: DatabaseOptions

        @Flag(help: "Write HAR 1.2 (the only export format so far).")
        var har = false

        @Option(name: .shortAndLong, help: "The file to write.")
        var output: String

        @Argument(help: "The recording's name.")
        var recording: String

        func validate() throws {
            if !har { throw ValidationError("choose an export format: --har") }
        }

        func run() async throws {
            let store = try database.openExisting()
            guard let loaded = try store.recording(named: recording) else {
                throw InputError("\(recording): no such recording in \(database.db); `h5replay import FILE` stores one")
            }
            let data = try HARExporter(toolVersion: H5Replay.version).data(for: loaded)
            do {
                try data.write(to: URL(fileURLWithPath: output), options: .atomic)
            } catch {
                throw InputError("\(output): cannot write: \((error as NSError).localizedDescription)")
            }
            print("exported \(loaded.name): \(loaded.exchanges.count) exchange(s) to \(output)")
        }
    }
}
