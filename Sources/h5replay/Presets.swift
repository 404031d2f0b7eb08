import ArgumentParser
import Foundation
import TrafficModel
import WebViewEmulation

extension H5Replay {
    struct Presets: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the presets and, with --rules, every rule of the model.",
            discussion: "Each finding names the rules that produced it; their confidence says how sure the model is: measured (a real WebKit engine did it, in Tools/lab), source, documented, reported, inferred or folklore (never an error).")

        @Flag(help: "Print every rule with its confidence and source.")
        var rules = false

        @Flag(help: "Print JSON instead of text.")
        var json = false

        @Option(name: .customLong("preset-file"), help: ArgumentHelp("Also list the presets of this file; repeatable.", valueName: "file"))
        var presetFiles: [String] = []

        func run() async throws {
            let presets = try PresetOptions.available(presetFiles)
            if json {
                let presets = presets.map {
                    [
                        "name": $0.name, "summary": $0.summary, "framework": $0.framework ?? NSNull(), "app": $0.app.map { $0.options } ?? NSNull(),
                        "strategy": $0.strategy.kind, "options": $0.strategy.options,
                        "mitigations": $0.mitigations.map { ["kind": $0.kind, "options": $0.options] as [String: Any] },
                    ] as [String: Any]
                }
                var object: [String: Any] = ["presets": presets]
                if rules {
                    object["rules"] = RuleCatalog.bundled.rules.map { rule -> [String: Any] in
                        var o: [String: Any] = ["id": rule.id.rawValue, "section": rule.section, "statement": rule.statement, "confidence": rule.confidence.rawValue, "source": rule.source, "findings": rule.findings]
                        if let m = rule.measurement {
                            var mo: [String: Any] = ["engine": m.engine, "experiments": m.experiments, "agrees": m.agrees]
                            if let note = m.note { mo["note"] = note }
                            o["measurement"] = mo
                        }
                        if let experiment = rule.experiment { o["experiment"] = experiment }
                        return o
                    }
                }
                let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                print(String(decoding: data, as: UTF8.self))
                return
            }
            print("Presets (all replay side by side unless --preset picks some; `--preset 'capacitor*'` picks a family):")
            let width = presets.map(\.name.count).max() ?? 0
            // In-house interception first, then one group per framework, in matrix order.
            var groups: [(String, [Preset])] = []
            for preset in presets {
                let group = preset.framework ?? "In-house interception (the seeds' apps)"
                if let i = groups.firstIndex(where: { $0.0 == group }) { groups[i].1.append(preset) } else { groups.append((group, [preset])) }
            }
            for (group, members) in groups {
                print("\n \(group):")
                for preset in members {
                    let options = preset.strategy.options.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
                    print("  \(preset.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(preset.strategy.kind)\(options.isEmpty ? "" : " (\(options))"): \(preset.summary)")
                    if let app = preset.app {
                        print("  \(String(repeating: " ", count: width))    page at \(app.origin)\(app.handlerBodies == .kept ? "" : " (handler bodies: \(app.handlerBodies.rawValue))")")
                    }
                    for m in preset.mitigations {
                        let o = m.options.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
                        print("  \(String(repeating: " ", count: width))    + \(m.kind)\(o.isEmpty ? "" : " (\(o))")")
                    }
                }
            }
            guard rules else {
                print("\n`h5replay presets --rules` lists the \(RuleCatalog.bundled.rules.count) rules of the behaviour model.")
                return
            }
            print("\nRules (id, confidence, statement, source):")
            for rule in RuleCatalog.bundled.rules {
                print("  \(rule.id.rawValue.padding(toLength: 5, withPad: " ", startingAt: 0)) [\(rule.confidence.rawValue)] \(rule.statement)")
                print("      source: \(rule.source)\(rule.findings.isEmpty ? "" : "; findings: \(rule.findings.joined(separator: ", "))")")
                if let m = rule.measurement {
                    print("      \(m.agrees ? "measured" : "not confirmed") in \(m.engine) (\(m.experiments.joined(separator: ", ")))\(m.note.map { ": \($0)" } ?? "")")
                }
            }
        }
    }
}
