import ArgumentParser
import Findings
import Foundation
import ReplayServer
import Pipeline
import ReportStore
import TrafficModel

extension H5Replay {
    struct Serve: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve recordings as a real HTTP/1.1 origin and record what really arrives.",
            discussion: """
                Point a simulator or device (with the app's own interception on), a browser or
                curl at the printed URL and load the recorded pages. Every arrival is logged
                with its method, URL, headers and body. On Ctrl-C or SIGTERM the arrivals
                become a run with preset `observed`, checked by the same detectors as a
                replay: bodies lost or changed, Cookie headers that differ, requests that
                never arrived, redirect hops not followed. `h5replay report` shows it.

                Matching: method, path and query, and body hash. Without a recorded request of
                the same body, the one with the same method and URL answers (and the lost body
                is observed). Repeated identical requests get their responses in recorded
                order. One port serves a flow spanning several hosts: use it as an HTTP proxy
                (absolute-form requests) or let the Host header choose.

                Examples:
                  h5replay serve Recordings/login-redirect.har
                  h5replay serve checkout --port 9000 --ignore-param ts --on-miss 502
                """)

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var limits: LimitOptions

        @Argument(help: ArgumentHelp("Recordings to serve: stored names, or HAR/pcap files (imported first).", valueName: "recording"))
        var recordings: [String]

        @Option(help: "The address to listen on. Anything but loopback exposes the recordings to the network.")
        var host = "127.0.0.1"

        @Option(help: "The port to listen on (0 picks a free one).")
        var port = 8080

        @Option(name: .customLong("ignore-param"), help: ArgumentHelp("A query parameter that does not count when matching (repeatable).", valueName: "name"))
        var ignoreParams: [String] = []

        @Flag(help: "Match without the request body.")
        var ignoreBody = false

        @Option(help: ArgumentHelp("What an unmatched request gets: 404, 502 or close.", valueName: "404|502|close"))
        var onMiss: MissPolicy = .notFound

        @Option(help: "A label for the observed run.")
        var label: String?

        @Flag(help: "No live line per arrival.")
        var quiet = false

        func validate() throws {
            if recordings.isEmpty { throw ValidationError("give the recordings to serve (names or files)") }
            if !(0...65535).contains(port) { throw ValidationError("--port must be 0 to 65535") }
        }

        func run() throws {
            let store = try database.open()
            let progress = Progress.line()
            defer { progress.end() }
            let importer = limits.pipeline(progress)
            var loaded: [Recording] = []
            for item in recordings {
                if FileManager.default.fileExists(atPath: item) {
                    for (imported, _) in try importer.importFile(item, name: nil, replace: true, into: store) {
                        guard let recording = try store.recording(named: imported.name) else { throw InputError("\(item): \(imported.name) was imported but cannot be read back from \(database.db)") }
                        loaded.append(recording)
                    }
                } else if let recording = try store.recording(named: item) {
                    loaded.append(recording)
                } else {
                    throw InputError("\(item): no such file, and no recording of that name in \(database.db)")
                }
            }
            let origin = ReplayOrigin(recordings: loaded, options: .init(ignoredParameters: Set(ignoreParams), ignoreBody: ignoreBody))
            let logLine: @Sendable (Arrival) -> Void = { arrival in
                let verdict = arrival.matched.map { "#\($0.sequence) \(arrival.status)" } ?? "no match, \(arrival.status)"
                FileHandle.standardOutput.write(Data("\(arrival.method) \(arrival.target)  \(arrival.body.count) B  → \(verdict)\n".utf8))
            }
            let server = ReplayServer(
                origin: origin, configuration: .init(host: host, port: port, onMiss: onMiss),
                onArrival: quiet ? nil : logLine)
            let bound: Int
            do {
                bound = try server.start()
            } catch {
                throw InputError("cannot listen on \(host):\(port): \(error)")
            }
            StopSignal.install()
            defer { StopSignal.uninstall() }

            let first = loaded.first?.exchanges.first.flatMap { RequestTarget($0.request.url) }
            let shownHost = host == "0.0.0.0" || host == "::" ? "127.0.0.1" : host
            func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
            say("serving \(loaded.count) recording(s), \(loaded.reduce(0) { $0 + $1.exchanges.count }) exchange(s) on http://\(shownHost):\(bound)")
            say("open http://\(shownHost):\(bound)\(first?.pathAndQuery ?? "/")   (or use it as an HTTP proxy); Ctrl-C stops and stores the observed run")
            while !StopSignal.requested { usleep(100_000) }
            server.stop()

            let arrivals = server.arrivals
            let results = ObservedRun.build(recordings: loaded, arrivals: arrivals)
            let unmatched = arrivals.filter { $0.matched == nil }
            print("\nstopped: \(arrivals.count) arrival(s), \(unmatched.count) matched nothing")
            for a in unmatched.prefix(10) { print("  extra: \(a.method) \(a.target)") }
            guard !results.isEmpty else {
                print("no recorded exchange was requested; no observed run stored")
                return
            }
            let runID = try store.saveObservedRun(
                results.map { (r: ObservedRun.Result) in ReportStore.RunResult(recording: r.recording.name, preset: ObservedRun.preset, outcomes: r.outcomes, findings: r.findings) },
                recordings: results.map { (r: ObservedRun.Result) in r.recording },
                arrivals: arrivals.map { a in
                    ReportStore.ArrivalRecord(time: a.time, method: a.method, target: a.target, headers: a.headers, body: a.body,
                        recordingName: a.matched.map { loaded[$0.recording].name }, sequence: a.matched?.sequence, status: a.status)
                },
                label: label, toolVersion: H5Replay.version)
            let findings = results.reduce(0) { $0 + $1.findings.count }
            print("observed run \(runID): \(results.count) recording(s), \(findings) finding(s), \(arrivals.count) arrival(s) kept (table `arrival`); `h5replay report --run \(runID)` shows them")
        }
    }
}

/// `--on-miss 404|502|close`.
extension MissPolicy: ExpressibleByArgument {}
