import Foundation
import PacketCapture
import ReportStore
import Testing
import TrafficModel

/// `h5replay record` on the loopback interface while Tools/h5traffic.py's server and
/// client exchange a known H5 flow: every exchange must be stored byte for byte.
@Suite("Live capture on loopback")
struct LiveCaptureTests {
    static var canCapture: Bool {
        (try? PcapSource.live(interface: "lo", filter: nil)) != nil && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
    }

    /// Reads `pipe` until its text contains `marker`, or it ends; returns what was read.
    static func read(_ pipe: Pipe, until marker: String) -> String {
        var said = Data()
        while !String(decoding: said, as: UTF8.self).contains(marker) {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            said += chunk
        }
        return String(decoding: said, as: UTF8.self)
    }

    /// Tools/h5traffic.py's server on a free port, the port it said once it listens, and the
    /// tool's path (its client drives the flow).
    static func trafficServer() throws -> (server: Process, port: Int, tool: String) {
        let tool = CLITests.root.appendingPathComponent("Tools/h5traffic.py").path
        let serverOut = Pipe()
        let server = try start("/usr/bin/python3", [tool, "serve", "--port", "0"], stdout: serverOut)
        let announced = read(serverOut, until: "\n")
        guard let port = announced.split(separator: ":").last.flatMap({ Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) else {
            server.terminate()
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "h5traffic.py serve printed: \(announced)"])
        }
        return (server, port, tool)
    }

    static func start(_ executable: String, _ arguments: [String], stdout: Pipe? = nil, stderr: Pipe? = nil, environment: [String: String] = [:]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        process.standardOutput = stdout ?? FileHandle.nullDevice
        process.standardError = stderr ?? FileHandle.nullDevice
        try process.run()
        return process
    }

    /// With `stalled`, `record` is held stopped (SIGSTOP) while the flow runs, as a busy
    /// machine can starve it: every packet is still in the kernel's buffer at Ctrl-C, and
    /// must be read before `record` stops.
    @Test("Ctrl-C stops `record`, and every exchange of the flow is stored as sent and received (with --write-pcap; with a temporary capture file that is removed, and `record` held stopped until Ctrl-C)",
          .enabled(if: canCapture, "capturing on lo needs root (or CAP_NET_RAW and CAP_NET_ADMIN) and python3; run the tests as root to include this one"),
          arguments: [(true, false), (false, true)])
    func loopback(keepPcap: Bool, stalled: Bool) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-live-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let (server, port, tool) = try Self.trafficServer()
        defer { server.terminate() }

        let db = dir.appendingPathComponent("live.sqlite").path
        let pcap = dir.appendingPathComponent("live.pcap").path
        let recordErr = Pipe()
        let scratch = dir.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let record = try Self.start(CLITests.binary.path, ["record", "-i", "lo", "-f", "tcp port \(port)", "--db", db, "--name", "loopback"] + (keepPcap ? ["--write-pcap", pcap] : []), stderr: recordErr, environment: ["TMPDIR": scratch.path])
        // Capturing starts once `record` says so.
        let said = Self.read(recordErr, until: "recording on lo")

        if stalled { kill(record.processIdentifier, SIGSTOP) }
        let manifest = dir.appendingPathComponent("manifest.json").path
        let client = try Self.start("/usr/bin/python3", [tool, "client", "--port", "\(port)", "--rounds", "3", "--manifest", manifest])
        client.waitUntilExit()
        #expect(client.terminationStatus == 0)
        // At once: what the kernel captured before Ctrl-C is read before `record` stops.
        kill(record.processIdentifier, SIGINT)
        if stalled { kill(record.processIdentifier, SIGCONT) }
        record.waitUntilExit()
        #expect(record.terminationStatus == 0, "record: \(said + String(decoding: recordErr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))")

        let sent = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: manifest))) as? [[String: Any]])
        let store = try ReportStore.open(path: db)
        let recording = try #require(try store.recording(named: "loopback"))
        #expect(sent.count == 36)
        #expect(recording.exchanges.count == sent.count)
        for (want, got) in zip(sent, recording.exchanges) {
            let label = "\(want["method"]!) \(want["url"]!)"
            #expect(got.request.method == want["method"] as? String, "\(label)")
            #expect(got.request.url == want["url"] as? String, "\(label)")
            #expect(got.request.body == Data(base64Encoded: want["requestBody"] as! String), "\(label): request body")
            for pair in want["requestHeaders"] as! [[String]] {
                #expect(got.request.headers.first(pair[0]) == pair[1], "\(label): request header \(pair[0])")
            }
            #expect(got.response.status == want["status"] as? Int, "\(label): status")
            #expect(got.response.body == Data(base64Encoded: want["responseBody"] as! String), "\(label): response body")
            #expect(got.response.headers.all("Set-Cookie") == want["setCookie"] as! [String], "\(label): Set-Cookie")
        }
        #expect(recording.diagnostics.filter { $0.severity != .note }.isEmpty, "\(recording.diagnostics)")
        #expect(recording.sourceFormat == "live" && recording.sourceSHA256 == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty, "the temporary capture file is removed")
        guard keepPcap else { return }
        #expect(recording.sourcePath == pcap)
        // The pcap written beside it imports to the same exchanges.
        let reread = try CaptureImporter.read(path: pcap, name: "again").recordings[0]
        #expect(reread.exchanges.map(\.request.url) == recording.exchanges.map(\.request.url))
        #expect(reread.exchanges.map(\.response.body) == recording.exchanges.map(\.response.body))
    }

    /// Each packet is parsed once, while capturing: the pcap file `--write-pcap` writes is
    /// not read back, so moving it away before Ctrl-C changes nothing of what is stored.
    @Test("`record -i` stores the exchanges it parsed while capturing, without reading its --write-pcap file back (moved away before Ctrl-C)",
          .enabled(if: canCapture, "capturing on lo needs root (or CAP_NET_RAW and CAP_NET_ADMIN) and python3; run the tests as root to include this one"))
    func parsedOnce() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-live-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let (server, port, tool) = try Self.trafficServer()
        defer { server.terminate() }

        let db = dir.appendingPathComponent("live.sqlite").path
        let pcap = dir.appendingPathComponent("live.pcap").path
        let moved = dir.appendingPathComponent("moved.pcap").path
        let scratch = dir.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let recordOut = Pipe(), recordErr = Pipe()
        let record = try Self.start(CLITests.binary.path, ["record", "-i", "lo", "-f", "tcp port \(port)", "--db", db, "--name", "once", "--write-pcap", pcap], stdout: recordOut, stderr: recordErr, environment: ["TMPDIR": scratch.path])
        let said = Self.read(recordErr, until: "recording on lo")
        let manifest = dir.appendingPathComponent("manifest.json").path
        let client = try Self.start("/usr/bin/python3", [tool, "client", "--port", "\(port)", "--rounds", "1", "--manifest", manifest])
        client.waitUntilExit()
        #expect(client.terminationStatus == 0)
        try FileManager.default.moveItem(atPath: pcap, toPath: moved)
        kill(record.processIdentifier, SIGINT)
        record.waitUntilExit()
        let out = String(decoding: recordOut.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(record.terminationStatus == 0, "record: \(said + String(decoding: recordErr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))")

        let sent = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: manifest))) as? [[String: Any]])
        #expect(out.contains("stored once: \(sent.count) exchange(s) in \(db)"), "\(out)")
        #expect(out.contains("packets written to \(pcap)"), "\(out)")
        let recording = try #require(try ReportStore.open(path: db).recording(named: "once"))
        #expect(recording.exchanges.map(\.request.url) == sent.map { $0["url"] as? String })
        #expect(recording.sourcePath == pcap && recording.sourceFormat == "live")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty, "nothing is left in the temporary folder")
        // The file written beside it holds the same exchanges.
        let reread = try CaptureImporter.read(path: moved, name: "again").recordings[0]
        #expect(reread.exchanges.map(\.request.url) == recording.exchanges.map(\.request.url))
    }
}
