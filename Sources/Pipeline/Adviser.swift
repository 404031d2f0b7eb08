import Findings
import Foundation
import TrafficModel
import WebViewEmulation

/// Replays a preset and the changes proposed for its findings (AdviceCandidates) on the
/// same recordings, counts what each change removes and adds, and keeps those worth
/// advising: removing something, adding nothing at error level, and not removing a
/// finding by sending no request at all.
public struct Adviser: Sendable {
    /// The runner's profile, scenarios and detector; its presets and baseline are unused.
    public var runner: ReplayRunner
    public let inputs: [ReplayInput]
    /// The most changes to the preset itself (a mitigation, a release) kept per preset;
    /// the best move to another preset is kept besides.
    public var limit = 3

    /// Codes that say a request was not sent or not answered: a finding that disappears
    /// where one of these appears was removed by sending nothing.
    static let noRequest: Set<FindingCode> = [.requestStalled, .requestFailed, .corsBlocked]

    public init(runner: ReplayRunner, recordings: [Recording]) {
        var runner = runner
        runner.baselinePreset = nil
        self.runner = runner
        let r = runner
        inputs = recordings.map { ReplayInput(recording: $0, provenance: r.provenances[$0.name], scenario: r.scenarios[$0.name] ?? r.scenario) }
    }

    /// The findings of `preset` on the inputs at `indices`, keyed by input index.
    func findings(_ preset: Preset, on indices: [Int]) -> [Int: [Finding]] {
        var runner = self.runner
        runner.presets = [preset]
        let results = runner.replay(indices.map { inputs[$0] })
        return Dictionary(uniqueKeysWithValues: zip(indices, results.map(\.findings)))
    }

    /// The advice for `preset`, with `others` as the presets it may move to.
    public func advise(_ preset: Preset, others: [Preset] = []) -> PresetAdvice {
        let original = findings(preset, on: Array(inputs.indices))
        let groups = Self.groups(original)
        let proven = AdviceCandidates.all(for: groups.mapValues(\.recordings), preset: preset, others: others).compactMap { prove($0, against: original, for: preset.name) }
        let ranked = proven.sorted { Self.better($0.0, $1.0) }
        // Changes to the preset itself first, then the best move to another preset.
        let shown = ranked.filter { $0.0.kind != .preset }.prefix(limit) + ranked.filter { $0.0.kind == .preset }.prefix(1)
        let removed = shown.reduce(into: Set<FindingKey>()) { $0.formUnion($1.1) }
        let total = original.values.reduce(0) { $0 + $1.count }
        return PresetAdvice(preset: preset.name, findings: total, advice: shown.map(\.0), unsolved: Self.unsolved(groups, removed: removed))
    }

    /// Findings grouped by code and acting rules, with the recordings each occurs in.
    static func groups(_ findings: [Int: [Finding]]) -> [FindingGroup: (recordings: Set<Int>, keys: Set<FindingKey>)] {
        var out: [FindingGroup: (recordings: Set<Int>, keys: Set<FindingKey>)] = [:]
        for (r, list) in findings {
            for f in list {
                let group = FindingGroup(code: f.code, rules: f.rules.sorted())
                out[group, default: ([], [])].recordings.insert(r)
                out[group]?.keys.insert(key(f, r))
            }
        }
        return out
    }

    static func key(_ f: Finding, _ r: Int) -> FindingKey { FindingKey(recording: r, sequence: f.sequence, code: f.code, subject: f.subject) }

    /// Replays the candidate where its groups occur, then, when it removes something there,
    /// on every other recording; nil when it is not worth advising.
    func prove(_ candidate: AdviceCandidate, against original: [Int: [Finding]], for name: String) -> (Advice, Set<FindingKey>)? {
        let first = candidate.recordings.sorted()
        var changed = findings(candidate.preset, on: first)
        guard Self.diff(original, changed, on: first).removed.count > 0 else { return nil }
        let rest = inputs.indices.filter { !candidate.recordings.contains($0) }
        changed.merge(findings(candidate.preset, on: rest)) { a, _ in a }
        let (removed, added) = Self.diff(original, changed, on: Array(inputs.indices))
        guard !added.contains(where: { $0.severity == .error }), !Self.sendsNothing(removed, changed) else { return nil }
        return (advice(candidate, for: name, removed: removed, added: added), Set(removed.map { Self.key($0.finding, $0.recording) }))
    }

    /// The findings of `before` missing from `after` (with their recording), and those new.
    static func diff(_ before: [Int: [Finding]], _ after: [Int: [Finding]], on indices: [Int]) -> (removed: [(finding: Finding, recording: Int)], added: [Finding]) {
        var removed: [(finding: Finding, recording: Int)] = [], added: [Finding] = []
        for r in indices {
            let old = before[r] ?? [], new = after[r] ?? []
            let oldKeys = Set(old.map { key($0, r) }), newKeys = Set(new.map { key($0, r) })
            removed += old.filter { !newKeys.contains(key($0, r)) }.map { ($0, r) }
            added += new.filter { !oldKeys.contains(key($0, r)) }
        }
        return (removed, added)
    }

    /// Whether a removed finding's exchange now sends no request, or no answer comes back.
    static func sendsNothing(_ removed: [(finding: Finding, recording: Int)], _ after: [Int: [Finding]]) -> Bool {
        removed.contains { item in
            (after[item.recording] ?? []).contains { $0.sequence == item.finding.sequence && noRequest.contains($0.code) }
        }
    }

    func advice(_ candidate: AdviceCandidate, for name: String, removed: [(finding: Finding, recording: Int)], added: [Finding]) -> Advice {
        var codes: [String: Int] = [:], ranks: [String: Int] = [:]
        for (f, _) in removed {
            codes[f.code.rawValue, default: 0] += 1
            ranks[f.rank.rawValue, default: 0] += 1
        }
        let addedCodes = added.reduce(into: [String: Int]()) { $0[$1.code.rawValue, default: 0] += 1 }
        return Advice(preset: name, kind: candidate.kind, change: candidate.change, snippet: candidate.snippet, removes: removed.count, adds: added.count, codes: codes, ranks: ranks,
            added: addedCodes, removesErrors: removed.filter { $0.finding.severity == .error }.count)
    }

    /// None added first, then most errors removed, then most removed, then a mitigation
    /// or a release before a move to another preset.
    static func better(_ a: Advice, _ b: Advice) -> Bool {
        let order: [Advice.Kind] = [.addMitigation, .version, .preset]
        return ((a.adds == 0 ? 0 : 1), -a.removesErrors, -a.removes, order.firstIndex(of: a.kind)!, a.snippet)
            < ((b.adds == 0 ? 0 : 1), -b.removesErrors, -b.removes, order.firstIndex(of: b.kind)!, b.snippet)
    }

    /// The groups the shown advice leaves whole: none of their findings removed by any of it.
    static func unsolved(_ groups: [FindingGroup: (recordings: Set<Int>, keys: Set<FindingKey>)], removed: Set<FindingKey>) -> [PresetAdvice.Group] {
        groups.filter { $0.value.keys.isDisjoint(with: removed) }
            .map { PresetAdvice.Group(code: $0.key.code.rawValue, rules: $0.key.rules.map(\.rawValue), count: $0.value.keys.count) }
            .sorted { ($0.count, $1.code) > ($1.count, $0.code) }
    }
}
