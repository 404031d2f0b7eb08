import ArgumentParser
import Foundation
import Pipeline
import RecordingProxy

/// `record --proxy` and what goes with it.
struct ProxyOptions: ParsableArguments {
    @Flag(help: "Record through a forward proxy for HTTP and HTTPS instead of capturing an interface.")
    var proxy = false

    @Option(help: "The proxy's address. Anything but loopback lets the network use it.")
    var host = "127.0.0.1"

    @Option(help: "The proxy's port (0 picks a free one).")
    var port = 8080

    @Option(name: .customLong("no-intercept"), help: ArgumentHelp("A host whose HTTPS passes through untouched, not recorded (repeatable; *.example.com for its subdomains).", valueName: "host"))
    var noIntercept: [String] = []

    @Option(help: ArgumentHelp("Another root to trust for upstream certificates (PEM), besides the system's.", valueName: "file"))
    var upstreamCA: String?

    @Flag(help: "Do not check upstream certificates (test servers only).")
    var insecureUpstream = false

    @Option(help: ArgumentHelp("Seconds an upstream has to send its response's head before the client gets a 504 (the body then streams as long as it lasts).", valueName: "seconds"))
    var upstreamTimeout: Int = 60

    @Option(help: ArgumentHelp("Keep the journal, a HAR written as exchanges complete, at this path.", valueName: "file"))
    var writeHar: String?

    @Option(help: ArgumentHelp("Connections open at once; more are closed.", valueName: "n"))
    var maxConnections = 1024

    @Flag(help: "No line per exchange.")
    var quiet = false

    @OptionGroup var ca: CAOptions

    var usedProxyOnlyOptions: Bool {
        port != 8080 || !noIntercept.isEmpty || upstreamCA != nil || insecureUpstream || writeHar != nil || host != "127.0.0.1" || upstreamTimeout != 60
    }

    func trust() throws -> RecordingProxy.UpstreamTrust {
        if insecureUpstream { return .none }
        guard let upstreamCA else { return .system }
        return try .adding(pemFile: upstreamCA)
    }
}

extension H5Replay.Record {
    /// Journals a killed session left beside the database.
    static let journalPrefix = "h5replay-proxy-"
    static let journalSuffix = ".journal.har"

    func recordThroughProxy() throws {
        let store = try database.open()
        let folder = (database.db as NSString).deletingLastPathComponent.isEmpty ? "." : (database.db as NSString).deletingLastPathComponent
        let importer = limits.pipeline(Progress.line())
        try importCutOffJournals(in: folder, store: store, importer: importer)

        let (authority, created) = try LocalCA.loadOrCreate(proxy.ca.files(database: database.db))
        if created { FileHandle.standardError.write(Data("made the h5replay CA \(authority.files.certificate); `h5replay ca show` says how to trust it\n".utf8)) }
        let started = Date()
        let recordingName = name ?? "proxy-" + Self.stamp(started)
        let journalPath = proxy.writeHar ?? (folder as NSString).appendingPathComponent(Self.journalPrefix + recordingName + Self.journalSuffix)
        let journal = try RecordingJournal(path: journalPath, toolVersion: H5Replay.version)

        // Exchanges are journalled in the order they complete, on one queue.
        let writes = DispatchQueue(label: "h5replay.record.proxy")
        let onExchange = journalling(to: journal, at: journalPath, on: writes)
        // What a killed session leaves of the exchanges still going (HARJournal's side file).
        let onProgress: @Sendable (RecordingProxy.Progress) -> Void = { progress in
            writes.async {
                switch progress {
                case .begun(let id, let exchange, let incomplete): try? journal.begin(id, exchange, incomplete: incomplete)
                case .message(let id, let message): try? journal.message(id, message)
                }
            }
        }
        let onFault: @Sendable (String) -> Void = { line in FileHandle.standardError.write(Data("record: \(line)\n".utf8)) }
        let server = try RecordingProxy(
            configuration: .init(host: proxy.host, port: proxy.port, tls: TLSContexts(ca: authority), noIntercept: proxy.noIntercept,
                                 upstreamTrust: try proxy.trust(), maxConnections: proxy.maxConnections, maxBodyBytes: limits.maxBodyBytes,
                                 responseTimeout: .seconds(Int64(proxy.upstreamTimeout)), spoolDirectory: folder),
            onExchange: onExchange, onFault: onFault, onProgress: onProgress)
        let bound: Int
        do {
            bound = try server.start()
        } catch {
            throw InputError("cannot listen on \(proxy.host):\(proxy.port): \(error)")
        }
        StopSignal.install()
        defer { StopSignal.uninstall() }
        let limit = duration.flatMap(Self.seconds)
        let shown = proxy.host == "0.0.0.0" || proxy.host == "::" ? "127.0.0.1" : proxy.host
        FileHandle.standardOutput.write(Data("""
            recording through the proxy http://\(shown):\(bound) (HTTP and HTTPS; CA \(authority.files.certificate))\(limit.map { " for \(Self.format($0))" } ?? "")
            try: curl --cacert \(authority.files.certificate) -x http://\(shown):\(bound) https://HOST/PATH   Ctrl-C stops and stores the recording

            """.utf8))
        while !StopSignal.requested, limit.map({ Date().timeIntervalSince(started) < $0 }) ?? true { usleep(100_000) }
        server.stop()
        writes.sync {}
        try journal.finish()

        try storeRecorded(journal, at: journalPath, name: recordingName, started: started, store: store, importer: importer)
    }

    /// Says what the proxy recorded and stores it; the journal goes unless --write-har keeps it.
    func storeRecorded(_ journal: RecordingJournal, at journalPath: String, name recordingName: String, started: Date, store: ReportStore, importer: ImportPipeline) throws {
        let elapsed = Date().timeIntervalSince(started)
        print("\nrecorded \(journal.count) exchange(s) in \(Self.format(elapsed))")
        guard journal.count > 0 else {
            if proxy.writeHar == nil { try? FileManager.default.removeItem(atPath: journalPath) }
            print("nothing reached the proxy; no recording stored")
            return
        }
        try storeJournal(journalPath, name: recordingName, store: store, importer: importer)
        if proxy.writeHar == nil { try? FileManager.default.removeItem(atPath: journalPath) } else { print("journal kept: \(journalPath)") }
    }

    /// Appends each exchange to the journal on `writes`, in the order they complete, and
    /// logs it on a line unless --quiet.
    func journalling(to journal: RecordingJournal, at journalPath: String, on writes: DispatchQueue) -> @Sendable (RecordingProxy.Proxied) -> Void {
        let quiet = proxy.quiet
        let failure = JournalFailure()
        return { item in
            writes.async {
                do {
                    let file = item.keptBodyFile.map { file in (count: file.length, read: file.read) }
                    try journal.append(item.exchange, failure: item.failure, incomplete: item.incomplete, receivedBodyBytes: item.receivedBodyBytes, bodyFile: file, ending: item.begun)
                } catch {
                    if !failure.said { FileHandle.standardError.write(Data("record: cannot write \(journalPath): \(error)\n".utf8)) }
                    failure.said = true
                }
                guard !quiet else { return }
                let e = item.exchange
                var verdict = item.failure.map { "no response: \($0)" } ?? "\(e.response.status), \(e.response.body.count) B"
                if let received = item.receivedBodyBytes { verdict += " (kept of \(received) B received: --max-body-bytes)" }
                if !e.webSocketMessages.isEmpty { verdict += ", \(e.webSocketMessages.count) WebSocket message(s)" }
                if let cut = item.incomplete { verdict += "; cut short: \(cut)" }
                FileHandle.standardOutput.write(Data("#\(journal.count) \(e.request.method) \(e.request.url)  \(e.request.body.count) B → \(verdict)\n".utf8))
            }
        }
    }

    func storeJournal(_ path: String, name: String, store: ReportStore, importer: ImportPipeline) throws {
        let results: [(ImportPipeline.ImportedRecording, ReportStore.ImportResult)]
        do {
            results = try importer.importFile(path, name: name, replace: replace, redact: redact ? secrets.names : nil, into: store)
        } catch let error as ReportStore.NameTaken {
            throw InputError("\(error.description) (or give --name); the exchanges are kept in \(path)")
        }
        say(results)
    }

    /// A session killed outright left its journal: close it and store what it holds.
    func importCutOffJournals(in folder: String, store: ReportStore, importer: ImportPipeline) throws {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        for file in names.sorted() where file.hasPrefix(Self.journalPrefix) && file.hasSuffix(Self.journalSuffix) {
            let path = (folder as NSString).appendingPathComponent(file)
            let kept = try RecordingJournal.recover(path: path)
            let name = String(file.dropFirst(Self.journalPrefix.count).dropLast(Self.journalSuffix.count))
            print("an earlier proxy session (\(name)) was cut off; storing its \(kept) exchange(s)")
            if kept > 0 { try storeJournal(path, name: name, store: store, importer: importer) }
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}

/// Whether the journal writer has said it cannot write; touched only on its queue.
final class JournalFailure: @unchecked Sendable {
    var said = false
}
