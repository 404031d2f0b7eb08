import Findings
import Foundation
import WebViewEmulation

/// The changes the model proposes for a group of findings, from the registry and the rules
/// data alone: no table per finding code.
///
/// - A mitigation is proposed for a code when one of the rules it cites lists that code
///   among the findings it can produce (rules.json `findings`): the mitigation then acts on
///   that kind of outcome (body-bridge cites B3 and B8, BODY_LOST; cookie-store-sync cites
///   C7, COOKIE_MISSING). Replaying says whether it removes the finding or adds others.
///   Kinds that model a framework's own behaviour (their cited rules are all bounded to a
///   framework's releases, or the kind belongs to a framework) are not an app's change.
///   Beside the kind's defaults, its options that counter a rule listing that code
///   (`PresetPart.choices`) are tried one by one, and all together.
/// - An option of the preset's strategy or of one of its mitigations is proposed set to a
///   value that counters one of the group's rules, or a rule listing the group's code
///   (the kind's `choices`), when the preset's file wrote the part (`Preset.written`).
/// - A framework preset is proposed the first newer release of its component at which an
///   acting rule's range (rules.json `versions`) no longer holds.
/// - Every other preset of the run is proposed as a move.
enum AdviceCandidates {
    /// Whether a choice answers a group: one of its rules acted, or lists the group's code
    /// among the findings it can produce. Its rules' codes are looked up once, not per group.
    static func answering(_ choice: OptionChoice, catalog: RuleCatalog = .bundled) -> @Sendable (FindingGroup) -> Bool {
        let rules = Set(choice.rules), codes = Set(choice.rules.flatMap { catalog[$0]?.findings ?? [] })
        return { group in codes.contains(group.code.rawValue) || group.rules.contains(where: rules.contains) }
    }

    /// A registered mitigation kind an app may add (not a framework's own: no component,
    /// and a cited rule bounded to iOS releases alone), with the finding codes its cited
    /// rules can produce and its objects as a preset file writes them: its defaults, each
    /// option that differs from its default set to the value that counters, and all of those
    /// together. Made once (`bundledKinds`), not per preset: the objects' text was a twelfth
    /// of the advice's instructions when written again for every group.
    struct Proposable: Sendable {
        var kind: PresetRegistry.Kind<any Mitigation>
        var codes: Set<String>
        var plain: String
        var changed: [(choice: OptionChoice, snippet: String)]
        var together: String?
    }

    static let bundledKinds = proposable()

    static func proposable(catalog: RuleCatalog = .bundled) -> [Proposable] {
        zip(PresetRegistry.mitigations, PresetRegistry.exampleMitigations).compactMap { kind, example in
            let cited = example.citedRules.compactMap { catalog[$0] }
            let appOwn = cited.contains { rule in (rule.versions ?? [:]).keys.allSatisfy { $0 == Component.ios.rawValue } }
            guard kind.component == nil, appOwn else { return nil }
            let plain = WrittenValue.object(["kind": .string(kind.name)])
            let changed = kind.choices.compactMap { choice in choice.counters.first { $0 != choice.defaultValue }.map { (choice, $0) } }
            let together = changed.count > 1 ? changed.reduce(plain) { $0.setting($1.0.key, to: $1.1) }.text : nil
            return Proposable(kind: kind, codes: Set(cited.flatMap(\.findings)), plain: plain.text, changed: changed.map { ($0.0, plain.setting($0.0.key, to: $0.1).text) }, together: together)
        }
    }

    /// A change the model may propose for a preset, before any group asks for it: which
    /// groups it answers, the part it changes (what `VariantWatch` follows), and how
    /// its candidate is made. Worked out once per preset (`changes(for:)`), for the watch and
    /// every group: made again per group, the objects' text and the changed presets cost the
    /// bench's three rounds of advice 54 million instructions, against 27 million now.
    struct Change: Sendable {
        let kind: Advice.Kind
        let snippet: String
        let answers: @Sendable (FindingGroup) -> Bool
        let variant: PresetVariant?
        let make: @Sendable (Set<Int>) -> AdviceCandidate?
        let key: String

        init(kind: Advice.Kind, snippet: String, answers: @escaping @Sendable (FindingGroup) -> Bool, variant: PresetVariant?, make: @escaping @Sendable (Set<Int>) -> AdviceCandidate?) {
            (self.kind, self.snippet, self.answers, self.variant, self.make) = (kind, snippet, answers, variant, make)
            key = AdviceCandidate.key(kind, snippet)
        }
    }

    /// Every change of one mitigation or option `preset` may be proposed: of each proposable
    /// kind it lacks, the defaults, each countering option and all of those together, for
    /// the codes the kind's cited rules can produce (an option only where it answers the
    /// group); then each option of its strategy or of a mitigation its file wrote, set to
    /// each value that counters (`options(of:)`).
    static func changes(for preset: Preset) -> [Change] {
        let present = Set(preset.mitigations.map(\.kind))
        var out: [Change] = []
        for kind in bundledKinds where !present.contains(kind.kind.name) {
            let codes = kind.codes
            let objects = [(kind.plain, nil)] + kind.changed.map { ($0.snippet, answering($0.choice)) } + (kind.together.map { [($0, nil)] } ?? [])
            for (snippet, choice) in objects {
                guard let value = mitigation(snippet) else { continue }
                let answers: @Sendable (FindingGroup) -> Bool = { group in codes.contains(group.code.rawValue) && (choice?(group) ?? true) }
                out.append(Change(kind: .addMitigation, snippet: snippet, answers: answers, variant: .adding(value)) { recordings in
                    adding(snippet, to: preset).map { AdviceCandidate(kind: .addMitigation, change: change(adding: snippet), snippet: snippet, preset: $0, recordings: recordings, added: value) }
                })
            }
        }
        return out + options(of: preset)
    }

    /// The changes a watch may follow (`VariantWatch`), keyed as candidates are: every one
    /// but a release or a move; a key two changes share is left out.
    static func variants(of preset: Preset, changes: [Change]? = nil) -> [(key: String, variant: PresetVariant)] {
        let out = (changes ?? Self.changes(for: preset)).compactMap { change in change.variant.map { (key: change.key, variant: $0) } }
        let counts = out.reduce(into: [String: Int]()) { $0[$1.key, default: 0] += 1 }
        return out.filter { counts[$0.key] == 1 }
    }

    /// The preset with one more mitigation, written as `snippet`; nil when it does not decode.
    static func adding(_ snippet: String, to preset: Preset) -> Preset? {
        guard let value = mitigation(snippet) else { return nil }
        var written = preset.written
        written?.mitigations.append(writtenSnippets.value(snippet) { WrittenValue(json: snippet) ?? .null })
        return preset.replacing(strategy: preset.strategy, mitigations: preset.mitigations + [value], written: written)
    }

    /// Each object decoded once by its text: every preset's candidates decode the same few
    /// objects, and decoding them again was a sixth of the advice's instructions.
    static let decodedMitigations = Memo<(any Mitigation)?>()
    static let decodedStrategies = Memo<(any InterceptionStrategy)?>()
    static let writtenSnippets = Memo<WrittenValue>()
    static let changesAdding = Memo<String>()
    static let fixingReleases = Memo<SemanticVersion?>()

    /// The mitigation a snippet writes; nil when it does not decode.
    static func mitigation(_ snippet: String) -> (any Mitigation)? {
        decodedMitigations.value(snippet) { try? JSONDecoder().decode(MitigationSpec.self, from: Data(snippet.utf8)).value }
    }

    /// The part `object` writes, decoded once per text (`decodedMitigations`).
    static func decoded<Part>(_ object: WrittenValue, text: String, as spec: (Data) throws -> Part, in memo: Memo<Part?>) -> Part? {
        memo.value(text) { (try? JSONEncoder().encode(object)).flatMap { try? spec($0) } }
    }

    /// Each change of one option of the preset's strategy or of one of its mitigations, with
    /// the whole object it rewrites as its snippet; none for a preset whose file is not known
    /// (`Preset.written`).
    static func options(of preset: Preset) -> [Change] {
        guard let written = preset.written else { return [] }
        var out: [Change] = []
        let strategyKind = PresetRegistry.strategies.first { $0.name == preset.strategy.kind }
        for (choice, object) in changes(of: written.strategy, choices: strategyKind?.choices ?? []) {
            let text = object.text
            guard let strategy = decoded(object, text: text, as: { try JSONDecoder().decode(StrategySpec.self, from: $0).value }, in: decodedStrategies) else { continue }
            var parts = written
            parts.strategy = object
            let written = parts, part = "the \(preset.strategy.kind) strategy"
            out.append(Change(kind: .setOption, snippet: text, answers: answering(choice), variant: .strategy(strategy)) {
                candidate(preset.replacing(strategy: strategy, mitigations: preset.mitigations, written: written), part: part, choice, object, text, $0)
            })
        }
        for (i, mitigation) in written.mitigations.enumerated() where i < preset.mitigations.count {
            let kind = PresetRegistry.mitigations.first { $0.name == preset.mitigations[i].kind }
            for (choice, object) in changes(of: mitigation, choices: kind?.choices ?? []) {
                let text = object.text
                guard let value = decoded(object, text: text, as: { try JSONDecoder().decode(MitigationSpec.self, from: $0).value }, in: decodedMitigations) else { continue }
                var parts = written, mitigations = preset.mitigations
                parts.mitigations[i] = object
                mitigations[i] = value
                let (written, changed, part) = (parts, mitigations, preset.mitigations[i].kind)
                out.append(Change(kind: .setOption, snippet: text, answers: answering(choice), variant: .replacing(i, value)) {
                    candidate(preset.replacing(strategy: preset.strategy, mitigations: changed, written: written), part: part, choice, object, text, $0)
                })
            }
        }
        return out
    }

    /// The part's object with one option set to each value that counters and is not the one
    /// it has.
    static func changes(of object: WrittenValue, choices: [OptionChoice]) -> [(OptionChoice, WrittenValue)] {
        choices.flatMap { choice in
            let current = object[choice.key] ?? choice.defaultValue
            return choice.counters.filter { $0 != current }.map { (choice, object.setting(choice.key, to: $0)) }
        }
    }

    static func candidate(_ preset: Preset, part: String, _ choice: OptionChoice, _ object: WrittenValue, _ text: String, _ recordings: Set<Int>) -> AdviceCandidate {
        let value = object[choice.key]?.text ?? "null"
        let change = "set \(part)'s \(choice.key) to \(value) (\(choice.rules.map(\.rawValue).joined(separator: ", ")))"
        return AdviceCandidate(kind: .setOption, change: change, snippet: text, preset: preset, recordings: recordings)
    }

    /// The first release of the preset's framework newer than the one it replays at which
    /// one of `rules` no longer holds.
    /// `current`: the framework and release it replays, written `capacitor-http@7.4.2 ` once
    /// per preset (`all`), the first part of what the answer depends on.
    static func release(fixing rules: [RuleID], in preset: Preset, current: String) -> SemanticVersion? {
        fixingReleases.value(current + rules.map(\.rawValue).joined(separator: ",")) { release(fixing: rules, in: preset, catalog: .bundled) }
    }

    static func release(fixing rules: [RuleID], in preset: Preset, catalog: RuleCatalog) -> SemanticVersion? {
        guard let (component, current) = preset.frameworkVersion, let coverage = catalog.components[component] else { return nil }
        let newer = coverage.releases.compactMap(SemanticVersion.init).filter { $0 > current }.sorted()
        let ranges = rules.compactMap { rule in catalog.histories[rule]?.ranges[component].flatMap { $0.contains(current) ? $0 : nil } }
        return newer.first { version in ranges.contains { !$0.contains(version) } }
    }

    /// Every candidate for the groups, once per kind and snippet, with the recordings where
    /// the groups it answers occur. `changes`: the preset's (`changes(for:)`), when known.
    /// In no order that means anything: the adviser ranks them.
    static func all(for groups: [FindingGroup: Set<Int>], preset: Preset, others: [Preset], changes known: [Change]? = nil) -> [AdviceCandidate] {
        let changes = known ?? Self.changes(for: preset)
        var asked = Array(repeating: Set<Int>(), count: changes.count)
        var out: [String: AdviceCandidate] = [:]
        let releases = preset.release.flatMap { release in preset.frameworkVersion.map { (release.baseName, "\($0.component.rawValue)@\($0.version) ") } }
        for (group, recordings) in groups {
            for i in changes.indices where changes[i].answers(group) { asked[i].formUnion(recordings) }
            // A release's preset is built the first time a group asks for that release.
            if let (base, current) = releases, let version = release(fixing: group.rules, in: preset, current: current) {
                let key = AdviceCandidate.key(.version, "\(base)@\(version)")
                if out[key] != nil { out[key]?.recordings.formUnion(recordings) } else { out[key] = versioned(preset, at: version, fixing: group.rules, recordings: recordings) }
            }
        }
        // Each change's preset built once, where some group asks for it.
        for i in changes.indices where !asked[i].isEmpty {
            let key = changes[i].key
            if out[key] != nil { out[key]?.recordings.formUnion(asked[i]) } else { out[key] = changes[i].make(asked[i]) }
        }
        // A move answers every group: once per preset, where any group occurs.
        let everywhere = groups.values.reduce(into: Set<Int>()) { $0.formUnion($1) }
        for other in others where other.name != preset.name && !everywhere.isEmpty {
            out[AdviceCandidate.key(.preset, other.name)] = AdviceCandidate(kind: .preset, change: "replay as the preset \(other.name) instead", snippet: other.name, preset: other, recordings: everywhere)
        }
        return Array(out.values)
    }

    /// "add a body-bridge mitigation (covers, stripsId as written)".
    static func change(adding snippet: String) -> String {
        changesAdding.value(snippet) { describe(adding: snippet) }
    }

    static func describe(adding snippet: String) -> String {
        let object = (try? JSONSerialization.jsonObject(with: Data(snippet.utf8))) as? [String: Any] ?? [:]
        let options = object.keys.filter { $0 != "kind" }.sorted()
        return "add a \(object["kind"] as? String ?? "") mitigation" + (options.isEmpty ? "" : " (\(options.joined(separator: ", ")) as written)")
    }

    /// The move of a framework preset to `version`, the first release at which one of
    /// `rules` no longer holds (`release(fixing:in:)`).
    static func versioned(_ preset: Preset, at version: SemanticVersion, fixing rules: [RuleID], recordings: Set<Int>) -> AdviceCandidate? {
        guard let base = preset.release?.baseName, let moved = try? preset.at(version) else { return nil }
        let snippet = "\(base)@\(version)", component = moved.preset.frameworkVersion?.component
        let stopped = rules.filter { rule in component.flatMap { RuleCatalog.bundled.histories[rule]?.ranges[$0] }.map { !$0.contains(version) } ?? false }
        return AdviceCandidate(kind: .version, change: "move to \(snippet), where \(stopped.map(\.rawValue).joined(separator: ", ")) no longer holds", snippet: snippet, preset: moved.preset, recordings: recordings)
    }
}
