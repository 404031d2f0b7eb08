import ArgumentParser
import Foundation
import Pipeline

extension H5Replay {
    struct Merge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Combine the databases of parallel shards into one run.",
            discussion: """
                Each shard ran `h5replay replay --shard i/n` on its own database. Merge
                takes the latest run of each, with the recordings it replayed, and writes
                them as one run into the output database, which `report` and `gate` then
                read. The shards must share profile and presets.

                Example:
                  h5replay merge shard1.sqlite shard2.sqlite shard3.sqlite -o all.sqlite
                  h5replay gate --db all.sqlite --baseline main
                """)

        @Option(name: .shortAndLong, help: "The database to write the merged run into (created when missing).")
        var output: String

        @Argument(help: ArgumentHelp("Shard databases.", valueName: "shard.sqlite"))
        var shards: [String]

        func validate() throws {
            if shards.isEmpty { throw ValidationError("give the shard databases to merge") }
            if shards.contains(output) { throw ValidationError("the output \(output) is one of the shards; write to a new file") }
        }

        func run() async throws {
            let store: ReportStore
            do { store = try ReportStore.open(path: output, newFile: .rollbackJournal) } catch { throw InputError("\(output): cannot open the database: \(error)") }
            do {
                let summary = try store.merge(shards: shards)
                print("merged \(shards.count) shard(s) into run \(summary.runID) of \(output): \(summary.recordings) recording(s), \(summary.findings) finding(s)")
                for d in summary.duplicates { print("  note: \(d) was in more than one shard; the first was kept") }
            } catch let error as ReportStore.MergeError {
                throw InputError(error.description)
            }
        }
    }
}
