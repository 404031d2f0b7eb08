import TrafficModel
import Findings
import Foundation

/// The JSON report: a stable schema for scripts. Extend it, never break it.
///
/// `{"run": {id, label, profile, ios, simulator, presets, startedAt, toolVersion, baselinePreset},
///   "summary": {errors, warnings, infos, findings, baselineShared},
///   "matrix": [{recording, preset, errors, warnings, infos, baselineShared}],
///   "findings": [{preset, code, severity, recording, sequence, method, url, subject,
///                 rules, confidence, message, baseline, expected, actual}],`
/// A finding with `baseline` true under another preset than the baseline is counted under
/// the baseline alone: `summary` and `matrix` count the strategy's own.
///   "coverage": [{recording, preset, offline: {hit, stale, miss, notInterceptable},
///                 prefetch: {hit, mismatch, stale, unused}, items: [{kind, sequence,
///                 verdict, method, url, detail}]}]}`
/// `coverage` is empty unless the run had an offline package or a prefetch config.
///   "upgrades": [{from, to, recordings: [{recording, fixed: [{code, sequence, subject}],
///                 broken: [...]}]}]`
/// `upgrades` compares each pair of neighbouring releases of a preset the run replays at
/// several (`capacitor-http@7.4.2`, `capacitor-http@8.4.2`); empty otherwise.
///   "advice": [{preset, kind, change, snippet, removes, adds, codes, added}]`
/// `advice` holds, per preset, the changes `report --advise` proved by replay (`kind`
/// add-mitigation, set-option, version or preset; `codes` and `added` count the findings
/// removed and added by code); empty without `--advise`.
public struct JSONReport: Sendable {
    public var redactor: Redactor

    public init(showSecrets: Bool, secrets: SecretNames = .default) {
        self.redactor = Redactor(showSecrets: showSecrets, names: secrets)
    }

    public func render(_ model: ReportModel) throws -> String {
        var text: [UInt8] = []
        try write(model) { text.append(contentsOf: $0) }
        return String(decoding: text, as: UTF8.self)
    }

    /// The report a part at a time to `sink`, with no line break at the end: what a run of
    /// 200,000 findings holds in memory is one finding's text, not the document.
    public func write(_ model: ReportModel, to sink: (ArraySlice<UInt8>) throws -> Void) throws {
        try write(model, flushingEvery: 1 << 20, to: sink)
    }

    /// The same, handing the text on whenever `bytes` of it are waiting.
    func write(_ model: ReportModel, flushingEvery bytes: Int, to sink: (ArraySlice<UInt8>) throws -> Void) throws {
        try withoutActuallyEscaping(sink) { try write(model, flushingEvery: bytes, escapingTo: $0) }
    }

    private func write(_ model: ReportModel, flushingEvery bytes: Int, escapingTo sink: @escaping (ArraySlice<UInt8>) throws -> Void) throws {
        // Each finding is redacted as it is written; the coverage, small, first.
        var model = model
        model.coverage = redactor.coverage(model.coverage)
        let run = model.run
        var json = PrettyJSON()
        json.sink = sink
        json.flushBytes = bytes
        // The document is written a member at a time: a run of 200,000 findings made into
        // Foundation objects for JSONSerialization took minutes and gigabytes.
        json.object(at: 0, [
            ("coverage", .raw { json, indent in
                json.array(at: indent, model.coveragePairs) { coverageValue($0, model) }
            }),
            ("run", .object([
                ("id", .int(Int(run.id ?? 0))), ("profile", .string(run.profile)), ("ios", .string(run.ios)),
                ("simulator", .bool(run.simulator)), ("presets", .array(model.presets.map { .string($0) })),
                ("startedAt", .string(run.startedAt)), ("toolVersion", .string(run.toolVersion)),
                ("label", run.label.map { .string($0) } ?? .null),
                ("baselinePreset", run.baselinePreset.map { .string($0) } ?? .null),
            ])),
            ("summary", .object([
                ("errors", .int(model.count(.error))), ("warnings", .int(model.count(.warning))),
                ("infos", .int(model.count(.info))), ("findings", .int(model.findings.count)),
                ("baselineShared", .int(model.presets.reduce(0) { $0 + model.sharedCount(preset: $1) })),
            ])),
            ("matrix", .raw { json, indent in
                let cells = model.recordings.flatMap { recording in model.presets.map { (recording, $0) } }
                json.array(at: indent, cells) { recording, preset in
                    let cell = model.cell(recording: recording, preset: preset)
                    return .object([
                        ("recording", .string(recording)), ("preset", .string(preset)),
                        ("errors", .int(cell.errors)), ("warnings", .int(cell.warnings)), ("infos", .int(cell.infos)),
                        ("baselineShared", .int(cell.shared)), ("empty", .bool(model.isEmpty(recording: recording))),
                        ("compared", .bool(model.notCompared(recording: recording, preset: preset) == nil)),
                    ])
                }
            }),
            ("findings", .raw { json, indent in
                json.array(at: indent, model.findings) { findingValue(redactor.finding($0)) }
            }),
            ("advice", .array(model.advice.map { a in
                .object([
                    ("preset", .string(a.preset)), ("kind", .string(a.kind)), ("change", .string(a.change)), ("snippet", .string(a.snippet)),
                    ("removes", .int(a.removes)), ("adds", .int(a.adds)),
                    ("codes", .object(a.codes.map { ($0.key, .int($0.value)) })), ("added", .object(a.added.map { ($0.key, .int($0.value)) })),
                ])
            })),
            ("upgrades", .array(model.upgrades.map(upgradeValue))),
        ])
        try json.finish()
    }

    /// A recording and preset's offline and prefetch counts, with each verdict.
    private func coverageValue(_ pair: (recording: String, preset: String), _ model: ReportModel) -> PrettyJSON.Value {
        let counts = model.coverageCounts(recording: pair.recording, preset: pair.preset) ?? ReportModel.CoverageCounts()
        let items = model.coverage[pair.recording]?[pair.preset] ?? []
        return .object([
            ("recording", .string(pair.recording)), ("preset", .string(pair.preset)),
            ("offline", .object([
                ("hit", .int(counts.offline["hit"] ?? 0)), ("stale", .int(counts.offline["stale"] ?? 0)),
                ("miss", .int(counts.offline["miss"] ?? 0)), ("notInterceptable", .int(counts.offline["not-interceptable"] ?? 0)),
            ])),
            ("prefetch", .object([
                ("hit", .int(counts.prefetch["hit"] ?? 0)), ("mismatch", .int(counts.prefetch["mismatch"] ?? 0)),
                ("stale", .int(counts.prefetch["stale"] ?? 0)), ("unused", .int(counts.prefetch["unused"] ?? 0)),
            ])),
            ("items", .array(items.map {
                .object([
                    ("kind", .string($0.kind.rawValue)), ("sequence", .int($0.sequence)), ("verdict", .string($0.verdict)),
                    ("method", .string($0.method)), ("url", .string($0.url)), ("detail", .string($0.detail)),
                ])
            })),
        ])
    }

    /// One finding, redacted already.
    private func findingValue(_ f: Finding) -> PrettyJSON.Value {
        .object([
            ("preset", .string(f.preset)), ("code", .string(f.code.rawValue)), ("severity", .string(f.severity.rawValue)),
            ("recording", .string(f.recording)), ("sequence", .int(f.sequence)), ("method", .string(f.method)), ("url", .string(f.url)),
            ("subject", f.subject.map { .string($0) } ?? .null), ("subjects", .array(f.subjects.map { .string(redactor.text($0)) })),
            ("likelihood", f.likelihood.map { .double($0) } ?? .null), ("rank", .string(f.rank.rawValue)),
            ("rules", .array(f.rules.map { .string($0.rawValue) })), ("confidence", .string(f.confidence.rawValue)),
            ("message", .string(f.message)), ("baseline", .bool(f.baseline)),
            ("inferences", .array(f.inferences.map { i in
                .object([("kind", .string(i.kind.rawValue)), ("subject", .string(redactor.text(i.subject))), ("inferred", .string(i.inferred)),
                    ("contradictedBy", i.contradictedBy.map { .string($0) } ?? .null)])
            })),
            ("expected", .object(redactor.fields(f.expected).map { ($0.key, .string($0.value)) })),
            ("actual", .object(redactor.fields(f.actual).map { ($0.key, .string($0.value)) })),
        ])
    }

    /// What a move to another release fixes and breaks, recording by recording.
    private func upgradeValue(_ upgrade: Upgrade) -> PrettyJSON.Value {
        func brief(_ f: Finding) -> PrettyJSON.Value { .object([("code", .string(f.code.rawValue)), ("sequence", .int(f.sequence)), ("subject", f.subject.map { .string(redactor.text($0)) } ?? .null)]) }
        return .object([
            ("from", .string(upgrade.from)), ("to", .string(upgrade.to)),
            ("recordings", .array(upgrade.recordings.map { change in
                .object([("recording", .string(change.recording)), ("fixed", .array(change.fixed.map(brief))), ("broken", .array(change.broken.map(brief)))])
            })),
        ])
    }
}

/// JSON written as JSONSerialization writes it with `.prettyPrinted, .sortedKeys,
/// .withoutEscapingSlashes` (the report's format since its first version, byte for byte):
/// two spaces a level, `"key" : value`, an empty list or object as its brackets around an
/// empty line, members in Foundation's order of keys, integral numbers without a fraction,
/// control characters as `\u00xx` but for the five with short escapes.
struct PrettyJSON {
    indirect enum Value {
        case string(String)
        case int(Int)
        case double(Double)
        case bool(Bool)
        case null
        case array([Value])
        case object([(String, Value)])
        /// A member written by its own code, at the indent given (a long list, element by element).
        case raw((inout PrettyJSON, Int) -> Void)
    }

    var out: [UInt8] = []
    /// Where the text goes a megabyte at a time (all of it at `finish`); nil keeps it in `out`.
    var sink: ((ArraySlice<UInt8>) throws -> Void)?
    var flushBytes = 1 << 20
    /// The sink's first failure: nothing more is written after it, and `finish` throws it.
    private var failure: Error?
    /// Each set of keys met, in the order JSONSerialization sorts it (a collation of
    /// Foundation's own, neither byte order nor a plain case-insensitive one): asked of
    /// JSONSerialization once per set, as a permutation of the keys in the order given.
    var orders: [[String]: [Int]] = [:]

    mutating func write(_ value: Value, at indent: Int) {
        switch value {
        case .string(let s): string(s)
        case .int(let i): ascii(String(i))
        case .double(let d):
            var text = d.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            ascii(text)
        case .bool(let b): ascii(b ? "true" : "false")
        case .null: ascii("null")
        case .array(let items): array(at: indent, items) { $0 }
        case .object(let members): object(at: indent, members)
        case .raw(let write): write(&self, indent)
        }
    }

    mutating func array<C: Collection>(at indent: Int, _ items: C, _ element: (C.Element) -> Value) {
        out.append(UInt8(ascii: "["))
        open(empty: items.isEmpty)
        var first = true
        for item in items {
            if !first { out.append(contentsOf: [UInt8(ascii: ","), 0x0A]) }
            first = false
            pad(indent + 2)
            write(element(item), at: indent + 2)
            if out.count >= flushBytes { flush(keepingLast: true) }
        }
        close(indent)
        out.append(UInt8(ascii: "]"))
    }

    mutating func object(at indent: Int, _ members: [(String, Value)]) {
        out.append(UInt8(ascii: "{"))
        open(empty: members.isEmpty)
        for (k, i) in order(members.map(\.0)).enumerated() {
            if k > 0 { out.append(contentsOf: [UInt8(ascii: ","), 0x0A]) }
            pad(indent + 2)
            string(members[i].0)
            ascii(" : ")
            write(members[i].1, at: indent + 2)
        }
        close(indent)
        out.append(UInt8(ascii: "}"))
    }

    /// Hands the text so far to the sink (after a failure, lets it go); the last byte
    /// stays when `close` is still to look at it.
    private mutating func flush(keepingLast: Bool) {
        guard let sink, !out.isEmpty else { return }
        let end = keepingLast ? out.count - 1 : out.count
        if failure == nil {
            do {
                try sink(out[..<end])
            } catch {
                failure = error
            }
        }
        out.removeFirst(end)
    }

    /// Writes what is left; throws the sink's first failure.
    mutating func finish() throws {
        flush(keepingLast: false)
        if let failure { throw failure }
    }

    /// After an opening bracket: a line break, and for an empty container the empty line.
    private mutating func open(empty: Bool) {
        out.append(0x0A)
        if empty { out.append(0x0A) }
    }

    private mutating func close(_ indent: Int) {
        if out.last != 0x0A { out.append(0x0A) }
        pad(indent)
    }

    private mutating func pad(_ n: Int) { out.append(contentsOf: repeatElement(0x20, count: n)) }

    private mutating func ascii(_ s: String) { out.append(contentsOf: s.utf8) }

    /// The members' indexes in JSONSerialization's order of their keys.
    mutating func order(_ keys: [String]) -> [Int] {
        if keys.count < 2 { return Array(keys.indices) }
        if let known = orders[keys] { return known }
        var index: [String: Int] = [:]
        for (i, key) in keys.enumerated() where index[key] == nil { index[key] = i }
        // `{"key":0,...}` as JSONSerialization sorts it: the numbers, read in the order
        // written, are the members' indexes in that order.
        var order: [Int] = []
        if let data = try? JSONSerialization.data(withJSONObject: index, options: [.sortedKeys]) {
            var inString = false, escaped = false
            var number: Int?
            for byte in data {
                if inString {
                    if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { inString = false }
                } else if byte == 0x22 {
                    inString = true
                } else if (0x30...0x39).contains(byte) {
                    number = (number ?? 0) * 10 + Int(byte - 0x30)
                } else if let n = number {
                    order.append(n)
                    number = nil
                }
            }
        }
        // Never expected: JSONSerialization failing, or keys given twice. Byte order then.
        if order.count != keys.count || Set(order).count != keys.count {
            order = keys.indices.sorted { keys[$0].utf8.lexicographicallyPrecedes(keys[$1].utf8) }
        }
        orders[keys] = order
        return order
    }

    mutating func string(_ s: String) {
        out.append(0x22)
        for c in s.utf8 {
            switch c {
            case 0x22: out.append(contentsOf: [0x5C, 0x22])
            case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
            case 0x08: out.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0C: out.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(c >> 4)], hex[Int(c & 0xF)]])
            default: out.append(c)
            }
        }
        out.append(0x22)
    }
}
