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
/// - A framework preset is proposed the first newer release of its component at which an
///   acting rule's range (rules.json `versions`) no longer holds.
/// - Every other preset of the run is proposed as a move.
enum AdviceCandidates {
    /// Option variants tried beside a kind's defaults: a bridge that covers every initiator
    /// it can (B3), and one that takes its id off the URL before it is sent (B2). Small on
    /// purpose; each is replayed like the default.
    static let variants: [String: [String]] = [
        "body-bridge": [
            #"{"kind": "body-bridge", "covers": ["xhr", "fetch", "form.submit"]}"#,
            #"{"kind": "body-bridge", "stripsId": true}"#,
            #"{"kind": "body-bridge", "covers": ["xhr", "fetch", "form.submit"], "stripsId": true}"#,
        ]
    ]

    /// The mitigation objects (as a preset file writes them) proposed for `code`.
    static func mitigations(for code: FindingCode, besides preset: Preset, catalog: RuleCatalog = .bundled) -> [String] {
        let present = Set(preset.mitigations.map(\.kind))
        return zip(PresetRegistry.mitigations, PresetRegistry.exampleMitigations).filter { kind, example in
            guard kind.component == nil, !present.contains(kind.name) else { return false }
            let cited = example.citedRules.compactMap { catalog[$0] }
            let appOwn = cited.contains { rule in (rule.versions ?? [:]).keys.allSatisfy { $0 == Component.ios.rawValue } }
            return appOwn && cited.contains { $0.findings.contains(code.rawValue) }
        }.flatMap { [#"{"kind": "\#($0.0.name)"}"#] + (variants[$0.0.name] ?? []) }
    }

    /// The preset with one more mitigation, written as `snippet`; nil when it does not decode.
    static func adding(_ snippet: String, to preset: Preset) -> Preset? {
        guard let spec = try? JSONDecoder().decode(MitigationSpec.self, from: Data(snippet.utf8)) else { return nil }
        var out = preset
        out.mitigations.append(spec.value)
        return out
    }

    /// The first release of the preset's framework newer than the one it replays at which
    /// one of `rules` no longer holds.
    static func release(fixing rules: [RuleID], in preset: Preset, catalog: RuleCatalog = .bundled) -> SemanticVersion? {
        guard let (component, current) = preset.frameworkVersion, let coverage = catalog.components[component] else { return nil }
        let newer = coverage.releases.compactMap(SemanticVersion.init).filter { $0 > current }.sorted()
        let ranges = rules.compactMap { rule in catalog.histories[rule]?.ranges[component].flatMap { $0.contains(current) ? $0 : nil } }
        return newer.first { version in ranges.contains { !$0.contains(version) } }
    }

    /// Every candidate for the groups, once per snippet, with the recordings where the
    /// groups it answers occur.
    static func all(for groups: [FindingGroup: Set<Int>], preset: Preset, others: [Preset]) -> [AdviceCandidate] {
        var out: [String: AdviceCandidate] = [:]
        func add(_ candidate: AdviceCandidate?) {
            guard let candidate else { return }
            out[candidate.snippet, default: candidate].recordings.formUnion(candidate.recordings)
        }
        for (group, recordings) in groups {
            for snippet in mitigations(for: group.code, besides: preset) {
                add(adding(snippet, to: preset).map { AdviceCandidate(kind: .addMitigation, change: change(adding: snippet), snippet: snippet, preset: $0, recordings: recordings) })
            }
            add(versioned(preset, fixing: group.rules, recordings: recordings))
            for other in others where other.name != preset.name {
                add(AdviceCandidate(kind: .preset, change: "replay as the preset \(other.name) instead", snippet: other.name, preset: other, recordings: recordings))
            }
        }
        return out.values.sorted { $0.snippet < $1.snippet }
    }

    /// "add a body-bridge mitigation (covers, stripsId as written)".
    static func change(adding snippet: String) -> String {
        let object = (try? JSONSerialization.jsonObject(with: Data(snippet.utf8))) as? [String: Any] ?? [:]
        let options = object.keys.filter { $0 != "kind" }.sorted()
        return "add a \(object["kind"] as? String ?? "") mitigation" + (options.isEmpty ? "" : " (\(options.joined(separator: ", ")) as written)")
    }

    static func versioned(_ preset: Preset, fixing rules: [RuleID], recordings: Set<Int>) -> AdviceCandidate? {
        guard let version = release(fixing: rules, in: preset), let base = preset.release?.baseName, let moved = try? preset.at(version) else { return nil }
        let snippet = "\(base)@\(version)", component = moved.preset.frameworkVersion?.component
        let stopped = rules.filter { rule in component.flatMap { RuleCatalog.bundled.histories[rule]?.ranges[$0] }.map { !$0.contains(version) } ?? false }
        return AdviceCandidate(kind: .version, change: "move to \(snippet), where \(stopped.map(\.rawValue).joined(separator: ", ")) no longer holds", snippet: snippet, preset: moved.preset, recordings: recordings)
    }
}
