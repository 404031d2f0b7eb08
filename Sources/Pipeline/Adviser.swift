import Findings
import Foundation
import ReportStore
import TrafficModel
import WebViewEmulation

/// Replays a preset and the changes proposed for its findings (AdviceCandidates) on the
/// same recordings, counts what each change removes and adds, and keeps those worth
/// advising: removing something, adding nothing at error level, and not removing a
/// finding by sending no request at all.
///
/// A finding the run's baseline preset shares (ReplayRunner.markBaseline: the web view's
/// own, not the interception's) is nothing to fix: it is left out of every count, the
/// baseline preset gets no advice, and moving to it is not proposed.
public struct Adviser: Sendable {
    /// The runner's profile, scenarios and detector; its presets are unused.
    public var runner: ReplayRunner
    public let inputs: [ReplayInput]
    /// The run's baseline preset, when it has one.
    public let baseline: Preset?
    /// Each input's labels and ranks, made once for every change replayed.
    let subjects: [FindingDetector.Subjects]
    /// Each preset's findings on every input, by name: a preset's own, and the same when
    /// another preset's advice is to move to it, replayed once.
    let replayed = Memo<PerInput>()
    /// The baseline preset's findings on each input, indexed (`apartFromBaseline`).
    let baselineFindings = Memo<[ReplayRunner.BaselineFindings?]>()
    /// Each advised preset's replay with its variants watched, by name.
    let watchedRuns = Memo<Watched>()
    /// Each advised preset's changes (`AdviceCandidates.changes(for:)`), by name: the watch
    /// and the candidates ask for the same.
    let presetChanges = Memo<[AdviceCandidates.Change]>()
    /// The most mitigation kinds advised per preset; the fixing release and the best move
    /// to another preset are kept besides.
    public var limit = 3
    /// Whether a change of one part (a mitigation, or an option of the strategy) is replayed
    /// only on the recordings where a watch along the preset's own replay saw it act
    /// (`VariantWatch`); elsewhere its findings are the preset's. Off, every change is
    /// replayed everywhere it is asked about: the same advice, the tests' reference.
    public var watching = true

    /// Codes that say a request was not sent or not answered: a finding that disappears
    /// where one of these appears was removed by sending nothing.
    static let noRequest: Set<FindingCode> = [.requestStalled, .requestFailed, .corsBlocked]

    public init(runner: ReplayRunner, recordings: [Recording]) {
        var runner = runner
        baseline = runner.presets.first { $0.name == runner.baselinePreset }
        runner.baselinePreset = nil
        self.runner = runner
        inputs = runner.inputs(recordings)
        subjects = ReplayRunner.subjects(inputs)
    }

    /// Findings by input index, nil where the input was not replayed. An array, not a
    /// dictionary: comparing a change's findings with the preset's looks each input up, and
    /// hashed lookups were most of that comparison's instructions.
    typealias PerInput = [[Finding]?]

    /// The findings of `preset` on the inputs at `indices` but those the baseline preset
    /// shares.
    func findings(_ preset: Preset, on indices: [Int]) -> PerInput {
        apartFromBaseline(allFindings(preset, on: indices))
    }

    /// Findings by input, but those the baseline preset shares.
    func apartFromBaseline(_ own: PerInput) -> PerInput {
        guard baseline != nil else { return own }
        return own.enumerated().map { r, list in list.map { apartFromBaseline($0, at: r) } }
    }

    /// One input's findings but those the baseline preset shares there.
    func apartFromBaseline(_ own: [Finding], at r: Int) -> [Finding] {
        guard baseline != nil else { return own }
        // The same comparison as the run's (ReplayRunner.markBaseline), each recording's
        // baseline findings indexed once for every change replayed: made per change, the
        // index cost the bench's advice process 19 of its 1,235 million instructions.
        return baselineIndex()[r].map { there in own.filter { !there.has($0) } } ?? own
    }

    /// The baseline preset's findings on each input, indexed; none without a baseline.
    func baselineIndex() -> [ReplayRunner.BaselineFindings?] {
        guard let baseline else { return [] }
        return baselineFindings.value("") { allFindings(baseline, on: Array(inputs.indices)).map { $0.map(ReplayRunner.BaselineFindings.init) } }
    }

    /// The findings of `preset` on the inputs at `indices`, every one: each replay's
    /// findings alone, for a run's result (its coverage, whether the preset was exercised,
    /// the outcomes kept) is nothing the advice reads.
    func allFindings(_ preset: Preset, on indices: [Int]) -> PerInput {
        let found = UnsafeResultBuffer<[Finding]>(count: indices.count)
        DispatchQueue.concurrentPerform(iterations: indices.count) { i in
            let r = indices[i]
            found.set(i, runner.findings(of: inputs[r].replay(preset, profile: runner.profile), on: inputs[r], subjects: subjects[r]))
        }
        var out = PerInput(repeating: nil, count: inputs.count)
        for (r, list) in zip(indices, found.values) { out[r] = list }
        return out
    }

    /// The findings of a preset of the run (or of a move to one) on every input, replayed
    /// once per name.
    func everywhere(_ preset: Preset) -> PerInput {
        replayed.value(preset.name) { apartFromBaseline(watchedRuns.known(preset.name)?.findings ?? allFindings(preset, on: Array(inputs.indices))) }
    }

    /// The advice for each of `presets`, worked out side by side (a change replayed on a
    /// few recordings keeps one core busy), in the order given.
    public func advise(all presets: [Preset], others: [Preset]) -> [PresetAdvice] {
        // The baseline's replays side by side before any preset asks for them: asked first
        // from within a preset's advice, they ran on one core, once per core that asked.
        _ = baselineIndex()
        if watching {
            // Each preset's own replay first: a move to it then takes its findings.
            let advised = presets.filter { $0.name != baseline?.name }
            DispatchQueue.concurrentPerform(iterations: advised.count) { _ = watched(advised[$0]) }
        }
        // Most findings first: a preset's advice costs about as many replays as it has
        // groups to answer, and one of the largest taken last kept one core busy alone.
        let weight = presets.map { watchedRuns.known($0.name)?.findings.reduce(0) { $0 + ($1?.count ?? 0) } ?? 0 }
        let order = presets.indices.sorted { weight[$0] > weight[$1] }
        let out = UnsafeResultBuffer<PresetAdvice>(count: presets.count)
        DispatchQueue.concurrentPerform(iterations: presets.count) { k in out.set(order[k], advise(presets[order[k]], others: others)) }
        return out.values
    }

    /// The advice for `preset`, with `others` as the presets it may move to.
    public func advise(_ preset: Preset, others: [Preset] = []) -> PresetAdvice {
        guard preset.name != baseline?.name else { return PresetAdvice(preset: preset.name, findings: 0, advice: [], unsolved: []) }
        let watched = watching ? watched(preset) : nil
        let original = everywhere(preset)
        let groups = Self.groups(original)
        let moves = others.filter { $0.name != baseline?.name }
        var candidates = AdviceCandidates.all(for: groups.mapValues(\.recordings), preset: preset, others: moves, changes: changes(of: preset))
        if let watched { for i in candidates.indices { candidates[i].acting = watched.acting[candidates[i].key] } }
        let known = watching ? siblingTrials(candidates) : [:]
        let trials = candidates.compactMap { trial($0, against: original, known: known[$0.key]) }
        let shown = Self.shown(proveBest(trials, against: original, for: preset.name).sorted { Self.better($0.0, $1.0) }, limit: limit)
        let removed = Set(shown.flatMap(\.1))
        let total = original.reduce(0) { $0 + ($1?.count ?? 0) }
        return PresetAdvice(preset: preset.name, findings: total, advice: shown.map(\.0), unsolved: Self.unsolved(groups, removed: removed))
    }

    /// The changes `preset` may be proposed, worked out once (`presetChanges`).
    func changes(of preset: Preset) -> [AdviceCandidates.Change] {
        presetChanges.value(preset.name) { AdviceCandidates.changes(for: preset) }
    }

    /// A preset's own findings on every input (every one, as `allFindings` gives them) and,
    /// for each change of one part a candidate can be that the watch follows
    /// (`AdviceCandidates.variants`), the inputs it may act on, keyed as candidates are.
    struct Watched {
        var findings: PerInput = []
        var acting: [String: Set<Int>] = [:]
    }

    /// `preset` replayed once per recording with every change of one part watched
    /// beside it (`VariantWatch`), the recordings one after the other: `advise(all:)` keeps
    /// the cores busy with presets, and one watch serves them all.
    func watched(_ preset: Preset) -> Watched {
        watchedRuns.value(preset.name) {
            let all = AdviceCandidates.variants(of: preset, changes: changes(of: preset))
            let variants = zip(all, VariantWatch.watchable(all.map(\.variant), in: preset)).filter(\.1).map(\.0)
            let watch = VariantWatch(variants.map(\.variant), under: preset, profile: runner.profile)
            var findings = PerInput(repeating: nil, count: inputs.count), acting = Array(repeating: Set<Int>(), count: variants.count)
            for r in inputs.indices {
                let (result, acted) = watch.replay(inputs[r])
                findings[r] = runner.findings(of: result, on: inputs[r], subjects: subjects[r])
                for k in acted.indices where acted[k] { acting[k].insert(r) }
            }
            return Watched(findings: findings, acting: Dictionary(uniqueKeysWithValues: zip(variants.map(\.key), acting)))
        }
    }

    /// A candidate's findings on the inputs at `indices`: replayed where it may act, the
    /// preset's own (`original`) where the watch saw it would not, and those `known`
    /// (`siblingTrials`) where they are.
    func findings(_ candidate: AdviceCandidate, on indices: [Int], against original: PerInput, known: PerInput? = nil) -> PerInput {
        guard let acting = candidate.acting else { return findings(candidate.preset, on: indices) }
        var out = findings(candidate.preset, on: indices.filter { acting.contains($0) && known?[$0] == nil })
        for r in indices where !acting.contains(r) { out[r] = original[r] ?? [] }
        if let known { for r in indices where known[r] != nil { out[r] = known[r] } }
        return out
    }

    /// Findings grouped by code and acting rules, with the recordings each occurs in.
    static func groups(_ findings: PerInput) -> [FindingGroup: (recordings: Set<Int>, keys: Set<FindingKey>)] {
        var out: [FindingGroup: (recordings: Set<Int>, keys: Set<FindingKey>)] = [:]
        for (r, list) in findings.enumerated() {
            for f in list ?? [] {
                // Most findings cite one rule: nothing to sort.
                let group = FindingGroup(code: f.code, rules: f.rules.count < 2 ? f.rules : f.rules.sorted())
                func add(_ entry: inout (recordings: Set<Int>, keys: Set<FindingKey>)) {
                    entry.recordings.insert(r)
                    entry.keys.insert(key(f, r))
                }
                add(&out[group, default: ([], [])])
            }
        }
        return out
    }

    static func key(_ f: Finding, _ r: Int) -> FindingKey { FindingKey(recording: r, sequence: f.sequence, code: f.code, subject: f.subject) }

    /// A candidate replayed where its groups occur: its findings there, and what it removed.
    struct Trial {
        var candidate: AdviceCandidate
        var changed: PerInput
        var removedErrors: Int
        /// What it changed there (`diff` on its groups' recordings), for `prove` to add the
        /// rest to: compared again, a move to another preset cost the advice most of its
        /// comparisons.
        var there: (removed: [(finding: Finding, recording: Int)], added: [Finding])
        /// How many it removed there.
        var removed: Int { there.removed.count }
    }

    /// Replays the candidate where its groups occur (but where its findings are `known`);
    /// nil when it removes nothing there.
    func trial(_ candidate: AdviceCandidate, against original: PerInput, known: PerInput? = nil) -> Trial? {
        let first = candidate.recordings.sorted()
        let changed = candidate.kind == .preset ? everywhere(candidate.preset) : findings(candidate, on: first, against: original, known: known)
        let there = Self.diff(original, changed, on: first), removed = there.removed
        guard !removed.isEmpty else { return nil }
        return Trial(candidate: candidate, changed: changed, removedErrors: removed.filter { $0.finding.severity == .error }.count, there: there)
    }

    /// Per place in what is shown (each mitigation kind added, each part whose option is
    /// set, the release), the trials that removed most where their groups occur are proven
    /// on the whole run in that order, and the first that holds is kept: the whole run is
    /// replayed once or twice per place, not once per candidate (Tools/bench's advice
    /// figure). Moves to another preset, replayed once per preset anyway, are all proven.
    func proveBest(_ trials: [Trial], against original: PerInput, for name: String) -> [(Advice, [FindingKey])] {
        let places = Dictionary(grouping: trials) { t in t.candidate.kind == .preset ? t.candidate.snippet : t.candidate.kind.rawValue + " " + Self.mitigationKind(t.candidate.snippet) }
        return places.values.compactMap { list in
            list.sorted { ($0.removedErrors, $0.removed, $1.candidate.snippet) > ($1.removedErrors, $1.removed, $0.candidate.snippet) }
                .firstNonNil { prove($0, against: original, for: name) }
        }
    }

    /// Replays a trial's candidate on every other recording; nil when it is not worth
    /// advising. With the advice, the keys of the findings it removes.
    func prove(_ trial: Trial, against original: PerInput, for name: String) -> (Advice, [FindingKey])? {
        let candidate = trial.candidate
        var changed = trial.changed
        var inGroups = Array(repeating: false, count: inputs.count)
        for r in candidate.recordings { inGroups[r] = true }
        let rest = inputs.indices.filter { !inGroups[$0] }
        if candidate.kind != .preset {
            let more = findings(candidate, on: rest, against: original)
            for r in rest { changed[r] = more[r] }
        }
        let elsewhere = Self.diff(original, changed, on: rest)
        // Its trial's comparison and this one side by side, not copied into one list.
        let (removed, added) = ([trial.there.removed, elsewhere.removed].joined(), [trial.there.added, elsewhere.added].joined())
        guard !added.contains(where: { $0.severity == .error }), !Self.sendsNothing(removed, changed) else { return nil }
        return (advice(candidate, for: name, removed: removed, added: added), removed.map { Self.key($0.finding, $0.recording) })
    }

    /// What is shown of the ranked advice: the best variant of each mitigation kind added,
    /// up to `limit` of them, the best option change of each part, up to `limit`, the fixing
    /// release, and the best move to another preset.
    static func shown(_ ranked: [(Advice, [FindingKey])], limit: Int) -> [(Advice, [FindingKey])] {
        var kinds: Set<String> = [], parts: Set<String> = []
        let mitigations = ranked.filter { $0.0.kind == .addMitigation && kinds.insert(mitigationKind($0.0.snippet)).inserted }.prefix(limit)
        let options = ranked.filter { $0.0.kind == .setOption && parts.insert(mitigationKind($0.0.snippet)).inserted }.prefix(limit)
        let rest = [Advice.Kind.version, .preset].compactMap { kind in ranked.first { $0.0.kind == kind } }
        return (mitigations + options + rest).sorted { better($0.0, $1.0) }
    }

    /// The `kind` a mitigation snippet names, decoded once per snippet: the trials and the
    /// advice are sorted into places by it, and decoding it each time was 2 % of the advice.
    static func mitigationKind(_ snippet: String) -> String {
        struct Named: Decodable { var kind: String }
        return kinds.value(snippet) { (try? JSONDecoder().decode(Named.self, from: Data(snippet.utf8)).kind) ?? snippet }
    }

    static let kinds = Memo<String>()

    /// The findings of `before` missing from `after` (with their recording), and those new.
    static func diff(_ before: PerInput, _ after: PerInput, on indices: [Int]) -> (removed: [(finding: Finding, recording: Int)], added: [Finding]) {
        var removed: [(finding: Finding, recording: Int)] = [], added: [Finding] = []
        for r in indices {
            let old = before[r] ?? [], new = after[r] ?? []
            // Most recordings come out of a change as they were: the same findings in the
            // same order, told apart without hashing a key (the diff was a fifth of the
            // advice's instructions).
            if sameFindings(old, new) { continue }
            // A recording's lists are short: looking through them costs less than hashing
            // each finding's key into two sets, which cost twice the rest of the diff.
            guard old.count * new.count > 256 else {
                for f in old where !new.contains(where: { same($0, f) }) { removed.append((f, r)) }
                for f in new where !old.contains(where: { same($0, f) }) { added.append(f) }
                continue
            }
            let oldKeys = Set(old.map { key($0, r) }), newKeys = Set(new.map { key($0, r) })
            for f in old where !newKeys.contains(key(f, r)) { removed.append((f, r)) }
            for f in new where !oldKeys.contains(key(f, r)) { added.append(f) }
        }
        return (removed, added)
    }

    /// Whether two findings of one recording are the same by `key`.
    static func same(_ a: Finding, _ b: Finding) -> Bool { a.sequence == b.sequence && a.code == b.code && a.subject == b.subject }

    /// Whether two lists hold the same findings in the same order, by what `key` compares.
    /// A recording the watch saw a change not act on has the preset's own list, not a copy:
    /// the same storage is the same findings, with nothing to compare.
    static func sameFindings(_ a: [Finding], _ b: [Finding]) -> Bool {
        guard a.count == b.count else { return false }
        if a.withUnsafeBufferPointer({ x in b.withUnsafeBufferPointer { x.baseAddress == $0.baseAddress } }) { return true }
        return zip(a, b).allSatisfy { same($0, $1) }
    }

    /// Whether a removed finding's exchange now sends no request, or no answer comes back.
    static func sendsNothing(_ removed: some Collection<(finding: Finding, recording: Int)>, _ after: PerInput) -> Bool {
        removed.contains { item in
            (after[item.recording] ?? []).contains { $0.sequence == item.finding.sequence && noRequest.contains($0.code) }
        }
    }

    func advice(_ candidate: AdviceCandidate, for name: String, removed: some Collection<(finding: Finding, recording: Int)>, added: some Collection<Finding>) -> Advice {
        var codes: [String: Int] = [:], ranks: [String: Int] = [:]
        for (f, _) in removed {
            codes[f.code.rawValue, default: 0] += 1
            ranks[f.rank.rawValue, default: 0] += 1
        }
        let addedCodes = added.reduce(into: [String: Int]()) { $0[$1.code.rawValue, default: 0] += 1 }
        return Advice(preset: name, kind: candidate.kind, change: candidate.change, snippet: candidate.snippet, removes: removed.count, adds: added.count, codes: codes, ranks: ranks,
            added: addedCodes, removesErrors: removed.reduce(0) { $0 + ($1.finding.severity == .error ? 1 : 0) })
    }

    /// None added first, then most errors removed, then most removed, then an option set
    /// before a mitigation added, a release, a move to another preset.
    static func better(_ a: Advice, _ b: Advice) -> Bool {
        let order: [Advice.Kind] = [.setOption, .addMitigation, .version, .preset]
        return ((a.adds == 0 ? 0 : 1), -a.removesErrors, -a.removes, order.firstIndex(of: a.kind)!, a.snippet)
            < ((b.adds == 0 ? 0 : 1), -b.removesErrors, -b.removes, order.firstIndex(of: b.kind)!, b.snippet)
    }

    /// The groups the shown advice leaves whole: none of their findings removed by any of it.
    static func unsolved(_ groups: [FindingGroup: (recordings: Set<Int>, keys: Set<FindingKey>)], removed: Set<FindingKey>) -> [PresetAdvice.Group] {
        groups.filter { $0.value.keys.isDisjoint(with: removed) }
            .map { PresetAdvice.Group(code: $0.key.code.rawValue, rules: $0.key.rules.map(\.rawValue), count: $0.value.keys.count) }
            .sorted { ($0.count, $1.code, $1.rules.joined(separator: ",")) > ($1.count, $0.code, $0.rules.joined(separator: ",")) }
    }
}

/// Values by name, each made once and shared by the threads that ask (the adviser's
/// findings by preset, the candidates' decoded objects by their text).
final class Memo<Value>: @unchecked Sendable {
    private var values: [String: Value] = [:]
    private let lock = NSLock()

    /// The value made for `name`, if one was.
    func known(_ name: String) -> Value? { lock.withLock { values[name] } }

    func value(_ name: String, _ make: () -> Value) -> Value {
        if let known = lock.withLock({ values[name] }) { return known }
        let made = make()
        lock.withLock { values[name] = made }
        return made
    }
}
