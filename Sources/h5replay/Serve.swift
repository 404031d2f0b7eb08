import ArgumentParser
import Foundation
import ReplayServer
import Pipeline

extension H5Replay {
    struct Serve: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve recordings as a real HTTP/1.1 origin; record what arrives.",
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

                HTTPS (--tls): the same port is then also an HTTPS origin and an HTTP proxy
                whose CONNECT tunnels carry HTTPS: each host gets a certificate h5replay's
                local CA signs on the fly (made on first use; `h5replay ca show` says how to
                trust it). Point a browser at it as a proxy, or resolve the recorded hosts to
                this address. Only HTTP/1.1 is offered (ALPN `http/1.1`).

                Examples:
                  h5replay serve Recordings/login-redirect.har
                  h5replay serve checkout --port 9000 --ignore-param ts --on-miss 502
                  h5replay serve checkout --tls --port 8443
                  h5replay serve exports/ --keep-going
                  curl --cacert h5replay-ca.pem -x http://127.0.0.1:8443 https://shop.example/
                """)

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var limits: LimitOptions
        @OptionGroup var corpus: CorpusOptions

        @Argument(help: ArgumentHelp("Recordings to serve: stored names, or HAR/pcap files (imported first); a folder stands for the recordings in it.", valueName: "recording"))
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

        @Flag(help: "Also serve HTTPS on the same port: as an origin and through CONNECT, with certificates from h5replay's CA.")
        var tls = false

        @OptionGroup var ca: CAOptions

        @Option(help: ArgumentHelp("Connections open at once; more are closed.", valueName: "n"))
        var maxConnections = 1024

        func validate() throws {
            if recordings.isEmpty { throw ValidationError("give the recordings to serve (names or files)") }
            if !(0...65535).contains(port) { throw ValidationError("--port must be 0 to 65535") }
        }

        func run() throws {
            let store = try database.open()
            let loaded = try loadRecordings(store)
            try Self.finishCutOffSessions(store)
            let origin = ReplayOrigin(recordings: loaded, options: .init(ignoredParameters: Set(ignoreParams), ignoreBody: ignoreBody))
            Self.tellWarmCache(origin)
            let session = try store.beginServeSession(recordings: loaded.map(\.name), label: label)
            // Each arrival is stored as it comes, in order, off the event loops: a session of
            // hours keeps none in memory, and a kill loses at most what is being written.
            let writer = ArrivalWriter(store: store, session: session.id, database: database.db)
            let contexts = try tlsContexts()
            let faultLine: @Sendable (String) -> Void = { line in FileHandle.standardError.write(Data("serve: \(line)\n".utf8)) }
            let server = ReplayServer(
                origin: origin,
                configuration: .init(host: host, port: port, onMiss: onMiss, tls: contexts, maxConnections: maxConnections, maxBodyBytes: limits.maxBodyBytes, keepsArrivals: false),
                onArrival: arrivalHandler(writer, names: loaded.map(\.name)), onFault: faultLine)
            let bound: Int
            do {
                bound = try server.start()
            } catch {
                throw InputError("cannot listen on \(host):\(port): \(error)")
            }
            StopSignal.install()
            defer { StopSignal.uninstall() }
            announce(loaded, port: bound, contexts: contexts)
            while !StopSignal.requested { usleep(100_000) }
            server.stop()
            writer.finish()

            Self.say("")
            try Self.finish(session, recordings: loaded, store: store)
        }

        /// The recordings to serve (`RecordingSource`): named, or imported from files first.
        func loadRecordings(_ store: ReportStore) throws -> [Recording] {
            let progress = Progress.line()
            defer { progress.end() }
            let skipped = corpus.skippedFiles()
            let source = try RecordingSource(recordings, database: database.db)
            // Served, not replayed: no cookie provenance is read.
            let loaded = try source.load(source.resolve(importer: limits.pipeline(progress), store: store, skipping: skipped?.handler), from: store, provenance: false).recordings
            if let summary = skipped?.summary { FileHandle.standardError.write(Data("\(summary)\n".utf8)) }
            if loaded.isEmpty, let skipped, skipped.count > 0 { throw InputError("nothing to serve: every file given was skipped as unreadable") }
            return loaded
        }

        /// The certificates of h5replay's CA with --tls (made on first use), else nil.
        func tlsContexts() throws -> TLSContexts? {
            guard tls else { return nil }
            let (authority, created) = try LocalCA.loadOrCreate(ca.files(database: database.db))
            if created { FileHandle.standardError.write(Data("made the h5replay CA \(authority.files.certificate); `h5replay ca show` says how to trust it\n".utf8)) }
            return TLSContexts(ca: authority)
        }

        /// Logs each arrival on a line (unless --quiet) and hands it to `writer` to store.
        func arrivalHandler(_ writer: ArrivalWriter, names: [String]) -> @Sendable (Arrival) -> Void {
            let quiet = self.quiet
            return { arrival in
                if !quiet {
                    var verdict = arrival.matched.map { "#\($0.sequence) \(arrival.status)" } ?? "no match, \(arrival.status)"
                    if let note = arrival.webSocketNote { verdict += ", \(note)" }
                    FileHandle.standardOutput.write(Data("\(arrival.method) \(arrival.target)  \(arrival.body.count) B  → \(verdict)\n".utf8))
                }
                writer.add(ReportStore.ArrivalRecord(time: arrival.time, method: arrival.method, target: arrival.target, headers: arrival.headers, body: arrival.body,
                    recordingName: arrival.matched.map { names[$0.recording] }, sequence: arrival.matched?.sequence, status: arrival.status))
            }
        }

        /// Says where the recordings are served and how to stop.
        func announce(_ loaded: [Recording], port bound: Int, contexts: TLSContexts?) {
            let first = loaded.first?.exchanges.first.flatMap { RequestTarget($0.request.url) }
            let shownHost = host == "0.0.0.0" || host == "::" ? "127.0.0.1" : host
            Self.say("serving \(loaded.count) recording(s), \(loaded.reduce(0) { $0 + $1.exchanges.count }) exchange(s) on http://\(shownHost):\(bound)\(tls ? " and https://\(shownHost):\(bound) (CA: \(contexts!.ca.files.certificate))" : "")")
            Self.say("open http://\(shownHost):\(bound)\(first?.pathAndQuery ?? "/")   (or use it as an HTTP proxy); Ctrl-C stops and stores the observed run")
        }

        /// A line on standard output, unbuffered, in order with the live lines.
        static func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

        /// Turns a session's stored arrivals into its observed run and says what it holds.
        static func finish(_ session: ReportStore.ServeSession, recordings: [Recording], store: ReportStore) throws {
            let observed = try ObservedRun.observe(session, recordings: recordings, store: store)
            say("stopped: \(observed.arrivals.count) arrival(s), \(observed.unmatched.count) matched nothing")
            for a in observed.unmatched.prefix(10) { say("  extra: \(a.method) \(a.target)") }
            guard let runID = try ObservedRun.store(observed, session: session, in: store, toolVersion: H5Replay.version) else {
                say("no recorded exchange was requested; no observed run stored")
                return
            }
            let findings = observed.results.reduce(0) { $0 + $1.findings.count }
            say("observed run \(runID): \(observed.results.count) recording(s), \(findings) finding(s), \(observed.arrivals.count) arrival(s) kept (table `arrival`); `h5replay report --run \(runID)` shows them")
        }

        /// Says what a recording made with a warm cache gives a fresh client: a 304 or cache
        /// hit with no body anywhere in the recordings reaches it empty; one another entry
        /// holds the body for, or whose entry kept it, is answered with the body.
        static func tellWarmCache(_ origin: ReplayOrigin) {
            for (r, recording) in origin.recordings.enumerated() {
                let cached = recording.exchanges.filter(ReplayOrigin.isBodiless)
                guard !cached.isEmpty else { continue }
                let empty = cached.filter { e in e.response.body.isEmpty && origin.withBody(insteadOf: ReplayOrigin.Ref(recording: r, sequence: e.sequence)) == nil }
                let shown = empty.prefix(3).map { "#\($0.sequence) \($0.request.method) \(RequestTarget.hostAndPath($0.request.url)) (\($0.response.status == 304 ? "304" : "from cache"))" }
                let filled = cached.count - empty.count
                let rest = empty.isEmpty ? "none reaches a fresh client without a body" : "\(empty.count) will reach a fresh client without a body: \(shown.joined(separator: ", "))\(empty.count > 3 ? ", ..." : "")"
                FileHandle.standardError.write(Data("serve: \(recording.name) was recorded with a warm cache: \(cached.count) response(s) were 304 or cache hits; \(filled) answered with a recorded body when the client sends no validator; \(rest)\n".utf8))
            }
        }

        /// A session a kill cut off still has its arrivals: store its observed run now.
        static func finishCutOffSessions(_ store: ReportStore) throws {
            for session in try store.unfinishedServeSessions() {
                let recordings = try session.recordings.compactMap { try store.recording(named: $0) }
                say("an earlier serve session (started \(session.startedAt)) was cut off; storing what reached it:")
                try finish(session, recordings: recordings, store: store)
            }
        }
    }
}

/// `--on-miss 404|502|close`.
extension MissPolicy: ExpressibleByArgument {}
