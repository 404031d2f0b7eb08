import ArgumentParser
import Foundation
import Pipeline

extension H5Replay {
    struct Record: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Record live traffic as a recording: HTTP and HTTPS through a proxy, or plain HTTP captured with libpcap.",
            discussion: """
                Captures on an interface (snaplen 262144, immediate mode) until Ctrl-C, SIGTERM
                or the end of --duration, then stores every exchange as one recording (or one
                per client with --split client), in one transaction. Each packet is parsed once,
                as it is captured, and each exchange kept until then in a scratch database in
                the temporary folder, so memory stays flat however long it runs; --write-pcap
                also writes every packet to a pcap file. A live line on standard error shows
                packets, exchanges and the kernel's drops; the summary at the end gives
                libpcap's drop count.

                Capturing needs root, or CAP_NET_RAW and CAP_NET_ADMIN. Only plain HTTP can be
                decoded; HTTPS connections are counted. For HTTPS, record through the proxy.

                --proxy: a forward proxy on 127.0.0.1:8080 (--host, --port) for HTTP and HTTPS.
                HTTPS (CONNECT) is intercepted with certificates from h5replay's local CA
                (made on first use; `h5replay ca show` says how to trust it on a simulator, a
                device, a browser or curl); --no-intercept HOST passes a host's tunnel through
                untouched (certificate-pinned APIs). Each request goes upstream (certificates
                checked against the system's store; --upstream-ca FILE adds a root,
                --insecure-upstream skips the check) and each completed exchange is written
                at once to a journal (a HAR beside the database, or --write-har FILE), printed
                as a line, and on Ctrl-C, SIGTERM or the end of --duration imported with the
                same classification, provenance and redaction as `import`. A session killed
                outright is imported by the next `record --proxy`. An iOS simulator uses the
                Mac's proxy settings; a device takes it in Wi-Fi settings (WKWebView may
                bypass it: see docs/serving.md).

                Examples:
                  h5replay record --proxy --name checkout
                  curl --cacert h5replay-ca.pem -x http://127.0.0.1:8080 https://shop.example/
                  h5replay record --proxy --port 9090 --no-intercept api.pinned.example
                  h5replay record -i lo -f "tcp port 8080" --duration 30s
                  h5replay record -i eth0 -f "host 10.0.0.7" --write-pcap session.pcap
                """)

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var limits: LimitOptions
        @OptionGroup var secrets: SecretOptions

        @Flag(help: "Store secrets as stand-ins that keep their length and identity (as `import --redact`).")
        var redact = false

        @Option(name: [.customShort("i"), .long], help: ArgumentHelp("The interface to capture on (`lo` for loopback).", valueName: "iface"))
        var interface: String?

        @OptionGroup(title: "Recording proxy") var proxy: ProxyOptions

        @Option(name: [.customShort("f"), .long], help: ArgumentHelp("A BPF filter, as tcpdump takes it.", valueName: "bpf"))
        var filter: String?

        @Option(help: ArgumentHelp("Stop after this long: 30s, 2m, 500ms, 1h (default: until Ctrl-C).", valueName: "duration"))
        var duration: String?

        @Option(help: ArgumentHelp("Also write every packet captured to this pcap file.", valueName: "file"))
        var writePcap: String?

        @Option(help: ArgumentHelp("The recording's name (default: capture-DATE-TIME).", valueName: "name"))
        var name: String?

        @Option(help: ArgumentHelp("`client` makes one recording per client address.", valueName: "client"))
        var split: SplitMode?

        @Flag(help: "Replace a recording of the same name.")
        var replace = false

        func validate() throws {
            if (interface == nil) == !proxy.proxy {
                throw ValidationError("give --proxy to record through the proxy, or -i IFACE to capture on an interface")
            }
            if proxy.proxy, filter != nil || writePcap != nil || split != nil {
                throw ValidationError("-f, --write-pcap and --split are for capturing (-i), not for --proxy")
            }
            if !proxy.proxy, proxy.usedProxyOnlyOptions {
                throw ValidationError("--port, --no-intercept, --upstream-ca, --insecure-upstream and --write-har need --proxy")
            }
            if !(0...65535).contains(proxy.port) { throw ValidationError("--port must be 0 to 65535") }
            if proxy.upstreamTimeout < 1 { throw ValidationError("--upstream-timeout must be at least 1 second") }
            if let duration, Self.seconds(duration) == nil {
                throw ValidationError("--duration \(duration): give a number with s, ms, m or h, e.g. 30s")
            }
        }

        /// `30s`, `500ms`, `2m`, `1h`, or plain seconds.
        static func seconds(_ text: String) -> Double? {
            let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
            for (suffix, factor) in units where text.hasSuffix(suffix) {
                guard let value = Double(text.dropLast(suffix.count)), value > 0 else { return nil }
                return value * factor
            }
            guard let value = Double(text), value > 0 else { return nil }
            return value
        }

        func run() throws {
            guard let interface else { return try recordThroughProxy() }
            let store = try database.open()
            let capture = try LiveCapture(interface: interface, filter: filter, dump: writePcap, limits: limits.importLimits)
            StopSignal.install()
            defer { StopSignal.uninstall() }
            let limit = duration.flatMap(Self.seconds)
            let started = Date()
            let progress = Progress.line()
            FileHandle.standardError.write(Data("recording on \(interface)\(filter.map { " (filter: \($0))" } ?? "")\(limit.map { " for \(Self.format($0))" } ?? ""); Ctrl-C stops\n".utf8))
            // Imported as it is captured: each packet parsed once, each exchange stored as
            // it completes.
            let (summary, results): (LiveCapture.Summary, [(ImportPipeline.ImportedRecording, ReportStore.ImportResult)])
            do {
                defer { progress.end() }
                (summary, results) = try ImportPipeline(limits: limits.importLimits).importLive(
                    capture, started: started, limit: limit, stopped: { StopSignal.requested }, show: { progress.show($0) },
                    name: name ?? "capture-" + Self.stamp(started), replace: replace, splitByClient: split == .client, redact: redact ? secrets.names : nil, into: store)
            } catch let error as ReportStore.NameTaken {
                throw InputError("\(error.description) (or give --name)")
            }
            print("captured \(summary.packets) packets in \(Self.format(summary.elapsed)); libpcap dropped \(summary.dropped) (interface \(summary.interfaceDropped))")
            say(results)
            if let writePcap { print("packets written to \(writePcap)") }
        }

        /// What was stored: a line per recording, with its diagnostics above notes.
        func say(_ results: [(ImportPipeline.ImportedRecording, ReportStore.ImportResult)]) {
            for (recording, result) in results {
                let verb: String
                switch result {
                case .imported(_, let replaced): verb = replaced ? "replaced" : "stored"
                case .unchanged: verb = "unchanged"
                }
                print("\(verb) \(recording.name): \(recording.exchangeCount) exchange(s) in \(database.db)")
                for d in recording.diagnostics where d.severity != .note { print("  \(d.severity.rawValue): \(secrets.redactor.text(d.message))") }
                if recording.moreDiagnostics > 0 { print("  \(recording.moreDiagnostics) more diagnostic(s); `h5replay show \(recording.name)` lists them") }
            }
        }

        static func format(_ seconds: Double) -> String {
            seconds < 10 ? String(format: "%.1f s", seconds) : "\(Int(seconds.rounded())) s"
        }

        static func stamp(_ date: Date) -> String {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyyMMdd-HHmmss"
            return formatter.string(from: date)
        }
    }
}
