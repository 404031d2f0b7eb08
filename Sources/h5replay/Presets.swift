import ArgumentParser
import Foundation
import Pipeline

extension H5Replay {
    struct Presets: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the presets and, with --rules, every rule of the model.",
            discussion: "Each finding names the rules that produced it; their confidence says how sure the model is: measured (a real WebKit engine did it, in Tools/lab), source, documented, reported, inferred or folklore (never an error). A rule that holds for part of a framework's or iOS's history names the releases (npm range syntax) and where each bound was read; a framework preset replays the newest release the model knows unless asked for another: `--preset capacitor-http@7.4.2`.")

        @Flag(help: "Print every rule with its confidence and source.")
        var rules = false

        @Flag(help: "Print the strategy and mitigation kinds a preset file can name, with their options.")
        var kinds = false

        @Flag(help: "Print JSON instead of text.")
        var json = false

        @Option(name: .customLong("preset-file"), help: ArgumentHelp("Also list the presets of this file; repeatable.", valueName: "file"))
        var presetFiles: [String] = []

        func run() async throws {
            if kinds { return Self.printKinds() }
            let presets = try PresetOptions.available(presetFiles)
            if json { return try printJSON(presets) }
            Self.printList(presets)
            print("\niOS: \(IOSVersion.supported.map(\.description).joined(separator: ", ")) (--ios; default \(IOSVersion.newest)).")
            guard rules else {
                print("\n`h5replay presets --rules` lists the \(RuleCatalog.bundled.rules.count) rules of the behaviour model.")
                return
            }
            Self.printRules()
        }

        /// The presets, and with --rules the rules, as one JSON object.
        func printJSON(_ presets: [Preset]) throws {
            let presets = presets.map {
                [
                    "name": $0.name, "summary": $0.summary, "framework": $0.framework ?? NSNull(), "app": $0.app.map { $0.options } ?? NSNull(),
                    "strategy": $0.strategy.kind, "options": $0.strategy.options,
                    "mitigations": $0.mitigations.map { ["kind": $0.kind, "options": $0.options] as [String: Any] },
                    "release": Self.releaseJSON($0) ?? NSNull(),
                ] as [String: Any]
            }
            var object: [String: Any] = ["presets": presets, "ios": ["releases": IOSVersion.supported.map(\.description), "default": IOSVersion.newest.description]]
            if rules {
                object["rules"] = RuleCatalog.bundled.rules.map { rule -> [String: Any] in
                    var o: [String: Any] = ["id": rule.id.rawValue, "section": rule.section, "statement": rule.statement, "confidence": rule.confidence.rawValue, "source": rule.source, "findings": rule.findings]
                    if let m = rule.measurement {
                        var mo: [String: Any] = ["engine": m.engine, "experiments": m.experiments, "agrees": m.agrees]
                        if let note = m.note { mo["note"] = note }
                        if let versions = m.versions { mo["versions"] = versions }
                        o["measurement"] = mo
                    }
                    if let experiment = rule.experiment { o["experiment"] = experiment }
                    if let versions = rule.versions { o["versions"] = versions }
                    if let bounds = rule.bounds {
                        o["bounds"] = bounds.mapValues { b -> [String: Any] in ["from": b.from ?? NSNull(), "until": b.until ?? NSNull()] }
                    }
                    return o
                }
            }
            let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
        }

        /// The presets, in-house interception first, then one group per framework.
        static func printList(_ presets: [Preset]) {
            print("Presets (all replay side by side unless --preset picks some; `--preset 'capacitor*'` picks a family):")
            let width = presets.map(\.name.count).max() ?? 0
            // In-house interception first, then one group per framework, in matrix order.
            var groups: [(String, [Preset])] = []
            for preset in presets {
                let group = preset.framework ?? "In-house interception (the engineering articles' apps)"
                if let i = groups.firstIndex(where: { $0.0 == group }) { groups[i].1.append(preset) } else { groups.append((group, [preset])) }
            }
            for (group, members) in groups {
                print("\n \(group):")
                for preset in members {
                    let options = preset.strategy.options.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
                    print("  \(preset.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(preset.strategy.kind)\(options.isEmpty ? "" : " (\(options))"): \(preset.summary)")
                    if let line = Self.releaseLine(preset) { print("  \(String(repeating: " ", count: width))    \(line)") }
                    if let app = preset.app {
                        print("  \(String(repeating: " ", count: width))    page at \(app.origin)\(app.handlerBodies == .kept ? "" : " (handler bodies: \(app.handlerBodies.rawValue))")")
                    }
                    for m in preset.mitigations {
                        let o = m.options.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
                        print("  \(String(repeating: " ", count: width))    + \(m.kind)\(o.isEmpty ? "" : " (\(o))")")
                    }
                }
            }
        }

        /// Every rule with its confidence, source, measurement and releases.
        static func printRules() {
            print("\nRules (id, confidence, statement, source):")
            for rule in RuleCatalog.bundled.rules {
                print("  \(rule.id.rawValue.padding(toLength: 5, withPad: " ", startingAt: 0)) [\(rule.confidence.rawValue)] \(rule.statement)")
                print("      source: \(rule.source)\(rule.findings.isEmpty ? "" : "; findings: \(rule.findings.joined(separator: ", "))")")
                if let m = rule.measurement {
                    let releases = (m.versions ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: "; ")
                    print("      \(m.agrees ? "measured" : "not confirmed") in \(m.engine)\(releases.isEmpty ? "" : " at \(releases)") (\(m.experiments.count > 3 ? "\(m.experiments.count) experiments, \(m.experiments[0]) ..." : m.experiments.joined(separator: ", ")))\(m.note.map { ": \($0)" } ?? "")")
                }
                for (component, range) in (rule.versions ?? [:]).sorted(by: { $0.key < $1.key }) {
                    let bound = rule.bounds?[component]
                    print("      holds for \(component) \(range)\(bound?.from.map { "; from: \($0)" } ?? "")\(bound?.until.map { "; until: \($0)" } ?? "")")
                }
            }
        }

        /// The kinds `PresetRegistry` registers, as a preset file writes them.
        static func printKinds() {
            func line<V>(_ kind: PresetRegistry.Kind<V>) -> String {
                "  \(kind.name)\(kind.keys.isEmpty ? "" : " (\(kind.keys.joined(separator: ", ")))")\(kind.component.map { "; replays \($0.rawValue) releases" } ?? "")"
            }
            print("Strategies (\"strategy\": {\"kind\": ...}):")
            for kind in PresetRegistry.strategies { print(line(kind)) }
            print("\nMitigations (\"mitigations\": [{\"kind\": ...}]):")
            for kind in PresetRegistry.mitigations { print(line(kind)) }
            print("\ndocs/presets/README.md says what each option does.")
        }

        /// `capacitor 4.8.2 to 8.4.2, replays 8.4.2; changes: CAPH1 >=5.7.1, CAPH3 >=6.0.0 <7.4.3`.
        static func releaseLine(_ preset: Preset) -> String? {
            guard let release = preset.release, let coverage = RuleCatalog.bundled.components[release.component], let replays = preset.frameworkVersion?.version else { return nil }
            let changes = changingRules(preset).map { "\($0.id) \($0.range)" }
            return "\(release.component.rawValue) \(coverage.oldest) to \(coverage.newest), replays \(replays)\(release.version == nil ? " (the newest; NAME@VERSION picks another)" : "")"
                + (changes.isEmpty ? "" : "; rules bounded by release: \(changes.joined(separator: ", "))")
        }

        static func releaseJSON(_ preset: Preset) -> [String: Any]? {
            guard let release = preset.release, let coverage = RuleCatalog.bundled.components[release.component], let replays = preset.frameworkVersion?.version else { return nil }
            return ["component": release.component.rawValue, "oldest": coverage.oldest, "newest": coverage.newest, "replays": replays.description,
                "rules": Dictionary(uniqueKeysWithValues: changingRules(preset).map { ($0.id.rawValue, $0.range.text) })]
        }

        /// The rules this preset can cite whose truth changes between the releases the model
        /// covers (not those that hold at every release read).
        static func changingRules(_ preset: Preset) -> [(id: RuleID, range: VersionRange)] {
            guard let component = preset.release?.component else { return [] }
            let catalog = RuleCatalog.bundled
            let releases = catalog.components[component]?.releases.compactMap(SemanticVersion.init) ?? []
            return preset.citedRules.uniqued.sorted().compactMap { id in
                catalog.histories[id]?.ranges[component].flatMap { range in releases.contains { !range.contains($0) } ? (id, range) : nil }
            }
        }
    }
}
