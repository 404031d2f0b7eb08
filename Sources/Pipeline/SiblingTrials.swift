import Findings
import WebViewEmulation

extension Adviser {
    /// The trial findings of the mitigations of one kind a preset may add (a body bridge
    /// with its defaults, with `covers`, with every option...), replayed together where more
    /// than one of them acts.
    ///
    /// On such a recording the first of them to act (the shortest snippet first: the
    /// defaults) is replayed with the others watched beside it, each written over it
    /// (`VariantWatch`); one the watch saw answer as it does at every moment would replay
    /// the recording as it does, and takes its findings there. The others are left to
    /// `trial` to replay. Siblings of one kind differ in an option or two, which most
    /// recordings never reach: on the bundled recordings, 199 of the 306 sibling replays a
    /// round replayed what the first did.
    ///
    /// Keyed by candidate; each value holds only the recordings worked out here.
    func siblingTrials(_ candidates: [AdviceCandidate]) -> [String: PerInput] {
        let added = candidates.filter { $0.kind == .addMitigation && $0.acting != nil && $0.added != nil }
        let kinds = Dictionary(grouping: added) { Self.mitigationKind($0.snippet) }
        var out: [String: PerInput] = [:]
        for siblings in kinds.values where siblings.count > 1 {
            let members = siblings.sorted { ($0.snippet.utf8.count, $0.snippet) < ($1.snippet.utf8.count, $1.snippet) }
            for (key, found) in zip(members.map(\.key), together(members)) { out[key] = found }
        }
        return out
    }

    /// `siblingTrials` for one kind's candidates, in the order they lead.
    func together(_ members: [AdviceCandidate]) -> [PerInput] {
        let needs = members.map { $0.recordings.intersection($0.acting ?? []) }
        var found = members.map { _ in PerInput(repeating: nil, count: inputs.count) }
        var watches: [Int: (watch: VariantWatch, flags: [Int?])] = [:]
        for r in needs.reduce(into: Set<Int>(), { $0.formUnion($1) }).sorted() {
            let asking = members.indices.filter { needs[$0].contains(r) }
            guard let leader = asking.first, asking.count > 1 else { continue }
            if watches[leader] == nil { watches[leader] = watch(members, ledBy: leader) }
            guard let (watch, flags) = watches[leader] else { continue }
            let (result, acted) = watch.replay(inputs[r])
            let own = apartFromBaseline(runner.findings(of: result, on: inputs[r], subjects: subjects[r]), at: r)
            found[leader][r] = own
            for s in asking.dropFirst() { if let flag = flags[s], !acted[flag] { found[s][r] = own } }
        }
        return found
    }

    /// A watch of every member written over `leader`'s mitigation, under its preset; the
    /// watch's flag of each member (nil for the leader, and one it cannot follow).
    func watch(_ members: [AdviceCandidate], ledBy leader: Int) -> (watch: VariantWatch, flags: [Int?]) {
        let preset = members[leader].preset, position = preset.mitigations.count - 1
        var variants: [PresetVariant] = [], flags: [Int?] = []
        for (i, member) in members.enumerated() {
            guard i != leader, let mitigation = member.added, VariantWatch.watchable(.replacing(position, mitigation), in: preset) else {
                flags.append(nil)
                continue
            }
            flags.append(variants.count)
            variants.append(.replacing(position, mitigation))
        }
        return (VariantWatch(variants, under: preset, profile: runner.profile), flags)
    }
}
