// h5replay-bench: times the pipeline's stages on one HAR file, for Tools/bench.
//
// Prints one `name=value` line per figure:
//   har_bytes, har_entries, har_import_seconds (best of 5),
//   emulation_evaluations, emulation_seconds, emulation_per_second (one core, every
//     preset over the flows in RECORDINGS_DIR: realistic flow lengths),
//   sqlite_rows, sqlite_seconds, sqlite_rows_per_second (one transaction, a file database).
// With `--pcap FILE`: pcap_bytes, pcap_packets, pcap_exchanges, pcap_body_bytes,
//   pcap_cookies, pcap_seconds, pcap_cpu_seconds (the process's user and system time
//   over the same span), pcap_peak_rss (the streaming import without SQLite).
// With `--sqlite RECORDINGS_DIR`: the SQLite stage alone (sqlite_rows, sqlite_bytes,
//   sqlite_seconds, sqlite_rows_per_second), for an instruction count under valgrind.
// With `--har-rounds N FILE`: the HAR import alone, N times, its fastest and median time
//   (for a profile of the import, or its spread on a noisy machine).
// With `--advice RECORDINGS_DIR`: advice for every built-in preset over the recordings (HAR
//   and pcap, with their sidecars) against the replay's own time, both as `replay` and
//   `advise` run them (every core): advice_recordings, advice_replay_seconds,
//   advice_seconds, advice_ratio (target <= 3), advice_count.
// With `--advice-rounds N replay|advice RECORDINGS_DIR`: N rounds of one of the two alone,
//   for Tools/bench's instruction counts.
import CookieJar
import Findings
import Foundation
import HARFormat
import PacketCapture
import Pipeline
import ReportStore
import TrafficModel
import WebViewEmulation

func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

#if canImport(Glibc)
    let RUSAGE_SELF_WHO = __rusage_who_t(RUSAGE_SELF.rawValue)
#else
    let RUSAGE_SELF_WHO = RUSAGE_SELF
#endif

/// User and system time of every thread of this process so far, in seconds.
func processorSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF_WHO, &usage)
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

let arguments = CommandLine.arguments

/// Peak resident set size of this process, in bytes (Linux: VmHWM).
func peakRSS() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return (Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) * 1024
    }
    return 0
}

// `--pcap FILE`: the streaming capture import without SQLite: libpcap, decoding, TCP
// reassembly, HTTP parsing, content decoding and hashing, time order, classification and
// cookie provenance, exchange by exchange as `h5replay import` runs them. The provenance
// walker remembers its usual 4,096 requests; without a store, a script-set window that
// reaches further back is not looked up.
if arguments.count == 3, arguments[1] == "--pcap" {
    let file = arguments[2]
    let start = now()
    let startCPU = processorSeconds()
    var bodyBytes = 0
    var exchanges = 0
    var stage = ImportPipeline.ClassifyingStage()
    var cookies = 0
    let end = try CaptureImporter.stream(path: file, detachBodies: true, bodies: { bodyBytes += $0.bytes.count }) { item in
        exchanges += 1
        cookies += try stage.add(&item.exchange, traits: item.traits).sent.count
    }
    let packets = end.session.decoder.counts.packets
    let seconds = now() - start
    let cpu = processorSeconds() - startCPU
    let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
    print("pcap_bytes=\(size)")
    print("pcap_packets=\(packets)")
    print("pcap_exchanges=\(exchanges)")
    print("pcap_body_bytes=\(bodyBytes)")
    print("pcap_cookies=\(cookies)")
    print(String(format: "pcap_seconds=%.4f", seconds))
    print(String(format: "pcap_cpu_seconds=%.4f", cpu))
    print("pcap_peak_rss=\(peakRSS())")
    exit(0)
}

/// Every preset over every bundled flow, emulation and detection together: one round.
func emulate(_ inputs: [ReplayInput], subjects: [FindingDetector.Subjects], detector: FindingDetector, keep: inout [Finding]) -> Int {
    var evaluations = 0
    for (input, subjects) in zip(inputs, subjects) {
        for preset in Preset.builtIn {
            let result = input.replay(preset)
            let f = detector.findings(for: input.recording, result: result, subjects: subjects)
            if keep.count < 300_000 { keep += f }
            evaluations += result.outcomes.count
        }
    }
    return evaluations
}

func loadFlows(_ directory: URL) throws -> [Recording] {
    try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".har") }.sorted().flatMap {
        try ImportPipeline().read(directory.appendingPathComponent($0).path, name: $0)
    }
}

// `--emulation-rounds N RECORDINGS_DIR`: exactly N rounds and nothing else, for an
// instruction count under valgrind (the difference between N and 0 rounds).
if arguments.count == 4, arguments[1] == "--emulation-rounds", let rounds = Int(arguments[2]) {
    let inputs = try loadFlows(URL(fileURLWithPath: arguments[3])).map { ReplayInput(recording: $0) }
    let subjects = inputs.map { FindingDetector.Subjects($0.recording) }
    var kept: [Finding] = []
    var evaluations = 0
    for _ in 0..<rounds { evaluations += emulate(inputs, subjects: subjects, detector: FindingDetector(), keep: &kept) }
    print("emulation_evaluations=\(evaluations)")
    print("emulation_findings=\(kept.count)")
    exit(0)
}

// `--sqlite RECORDINGS_DIR`: the SQLite stage alone, for an instruction count of
// `saveRun` under valgrind.
if arguments.count == 3, arguments[1] == "--sqlite" {
    let inputs = try loadFlows(URL(fileURLWithPath: arguments[2])).map { ReplayInput(recording: $0) }
    try sqliteStage(inputs, subjects: inputs.map { FindingDetector.Subjects($0.recording) }, detector: FindingDetector())
    exit(0)
}

/// The recordings of a folder (HAR and pcap) and a runner of every built-in preset with
/// their sidecar scenarios, as `replay` would read them.
func adviceInputs(_ path: String) throws -> (ReplayRunner, [Recording]) {
    let folder = URL(fileURLWithPath: path)
    var runner = ReplayRunner(presets: Preset.builtIn, profile: Profile())
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".har") || $0.hasSuffix(".pcap") }.sorted()
    let recordings = try files.flatMap { file in
        let path = folder.appendingPathComponent(file).path, name = (file as NSString).deletingPathExtension
        if let scenario = try Sidecars.scenario(for: path) { runner.scenarios[name] = scenario }
        return try ImportPipeline().read(path, name: name)
    }
    return (runner, recordings)
}

/// One round of the advice, a fresh adviser: the count of changes advised.
func advise(_ runner: ReplayRunner, _ recordings: [Recording]) -> Int {
    Adviser(runner: runner, recordings: recordings).advise(all: Preset.builtIn, others: Preset.builtIn).map(\.advice.count).reduce(0, +)
}

// `--advice RECORDINGS_DIR`: the replay of every built-in preset, then the advice for each
// (a fresh adviser, so nothing of the replay is reused), each the best of three.
if arguments.count == 3, arguments[1] == "--advice" {
    let (runner, recordings) = try adviceInputs(arguments[2])
    var replaySeconds = Double.infinity, adviceSeconds = Double.infinity, count = 0
    for _ in 0..<3 {
        var start = now()
        withExtendedLifetime(runner.replay(recordings)) {}
        replaySeconds = min(replaySeconds, now() - start)
        start = now()
        count = advise(runner, recordings)
        adviceSeconds = min(adviceSeconds, now() - start)
    }
    print("advice_recordings=\(recordings.count)")
    print(String(format: "advice_replay_seconds=%.4f", replaySeconds))
    print(String(format: "advice_seconds=%.4f", adviceSeconds))
    print(String(format: "advice_ratio=%.2f", adviceSeconds / replaySeconds))
    print("advice_count=\(count)")
    exit(0)
}

// `--advice-rounds N replay|advice RECORDINGS_DIR`: exactly N rounds of the replay, or of
// the advice, and nothing else, for an instruction count under valgrind (the difference
// between N and 1 rounds).
if arguments.count == 5, arguments[1] == "--advice-rounds", let rounds = Int(arguments[2]), ["replay", "advice"].contains(arguments[3]) {
    let (runner, recordings) = try adviceInputs(arguments[4])
    for _ in 0..<rounds {
        if arguments[3] == "replay" { withExtendedLifetime(runner.replay(recordings)) {} } else { _ = advise(runner, recordings) }
    }
    exit(0)
}

if arguments.count == 4, arguments[1] == "--har-rounds", let rounds = Int(arguments[2]), rounds > 0 {
    let data = try Data(contentsOf: URL(fileURLWithPath: arguments[3]))
    var times: [Double] = []
    for _ in 0..<rounds {
        let start = now()
        let imported = try HARImporter().recording(from: data, file: arguments[3], name: "bench")
        times.append(now() - start)
        withExtendedLifetime(imported) {}
    }
    times.sort()
    print(String(format: "min %.4f median %.4f", times[0], times[times.count / 2]))
    exit(0)
}

guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: h5replay-bench FILE.har RECORDINGS_DIR\n".utf8))
    exit(2)
}
let path = arguments[1]
let data: Data
do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
    FileHandle.standardError.write(Data("\(path): \(error)\n".utf8))
    exit(2)
}

// HAR import: parse, build exchanges, classify, sort.
var best = Double.infinity
var recording: Recording!
for _ in 0..<5 {
    // The previous round's recording is let go before the clock starts, as json.load's
    // result is after the Python figure's clock stops.
    recording = nil
    let start = now()
    recording = try HARImporter().recording(from: data, file: path, name: "bench")
    best = min(best, now() - start)
}
print("har_bytes=\(data.count)")
print("har_entries=\(recording.exchanges.count)")
print(String(format: "har_import_seconds=%.4f", best))

// Emulation: every preset over every bundled flow on one core, for at least two seconds.
let flows = try loadFlows(URL(fileURLWithPath: arguments[2]))
let inputs = flows.map { ReplayInput(recording: $0) }
let subjects = inputs.map { FindingDetector.Subjects($0.recording) }
let detector = FindingDetector()
var evaluations = 0
var findings: [Finding] = []
let emulationStart = now()
repeat {
    evaluations += emulate(inputs, subjects: subjects, detector: detector, keep: &findings)
} while now() - emulationStart < 2
let emulationSeconds = now() - emulationStart
print("emulation_evaluations=\(evaluations)")
print(String(format: "emulation_seconds=%.4f", emulationSeconds))
print(String(format: "emulation_per_second=%.0f", Double(evaluations) / emulationSeconds))

// `H5REPLAY_BENCH_STOP=emulation` ends here, for a profile of the emulation alone.
if ProcessInfo.processInfo.environment["H5REPLAY_BENCH_STOP"] == "emulation" { exit(0) }

/// The timed SQLite call, a function of its own that the optimiser keeps: Tools/bench counts
/// its instructions under callgrind by this symbol, and `saveRun` itself may be inlined here.
@inline(never) func storeRun(_ store: ReportStore, _ run: RunRow, _ results: [RunResult]) throws {
    _ = try store.saveRun(run, results: results)
}

// SQLite: 200,000 finding rows in one run, one transaction, into a file database. The
// findings are those of a corpus: the bundled flows' findings under every preset, copied
// as if from further recordings (each copy's recordings renamed), handed to the run writer
// a recording and preset at a time, as `replay` hands them: recordings in name order
// (`ReplayRunner` sorts them so), each recording's presets in the configured order.
// Only `saveRun` is timed (and counted, under callgrind: `--sqlite`).
/// `attempts`: how many times the rows are written, each into a new database file; the
/// best time is the figure (as the HAR stage's best of five), and every time is printed,
/// since the kernel's writeback decides much of a single run on a small machine.
func sqliteStage(_ inputs: [ReplayInput], subjects: [FindingDetector.Subjects], detector: FindingDetector, attempts: Int = 1) throws {
    let rows = 200_000
    var many: [Finding] = []
    many.reserveCapacity(rows)
    var oneRound: [Finding] = []
    _ = emulate(inputs, subjects: subjects, detector: detector, keep: &oneRound)
    var copy = 0
    while !oneRound.isEmpty && many.count < rows {
        many += oneRound.prefix(rows - many.count).map { f in
            var f = f
            f.recording += String(format: "-%04d", copy)
            return f
        }
        copy += 1
    }
    many = ReportStore.byteOrder(many.map(\.recording)).map { many[$0] }
    var results: [RunResult] = []
    for f in many {
        if let last = results.last, last.recording == f.recording, last.preset == f.preset {
            results[results.count - 1].findings.append(f)
        } else {
            results.append(RunResult(recording: f.recording, preset: f.preset, outcomes: [], findings: [f]))
        }
    }
    if many.isEmpty {
        print("sqlite_rows=0")
        return
    }
    var times: [Double] = []
    var written = 0
    for attempt in 0..<attempts {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("h5replay-bench-\(getpid())-\(attempt)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        // In WAL mode, as a database is once its creating process is done with it.
        let store = try ReportStore.open(path: scratch.appendingPathComponent("bench.sqlite").path)
        let run = RunRow(id: nil, startedAt: "", finishedAt: "", toolVersion: "bench", profile: "bench", ios: "18", simulator: false, presets: "", label: nil, gitRevision: nil, recordingCount: 1, exchangeCount: 0)
        // The previous attempt's file is written back before the clock starts.
        sync()
        let sqliteStart = now()
        try storeRun(store, run, results)
        times.append(now() - sqliteStart)
        let files = ["bench.sqlite", "bench.sqlite-wal"].map { scratch.appendingPathComponent($0).path }
        written = files.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0) }
    }
    let best = times.min()!
    print("sqlite_rows=\(many.count)")
    print("sqlite_bytes=\(written)")
    print(String(format: "sqlite_seconds=%.4f", best))
    print("sqlite_seconds_each=" + times.map { String(format: "%.4f", $0) }.joined(separator: ","))
    print(String(format: "sqlite_rows_per_second=%.0f", Double(many.count) / best))
}

try sqliteStage(inputs, subjects: subjects, detector: detector, attempts: 3)
