import ArgumentParser
import Foundation
import TrafficModel
import WebViewEmulation

extension H5Replay {
    struct Presets: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the presets and, with --rules, every rule of the behaviour model.",
            discussion: "Each finding names the rules that produced it; their confidence says how sure the model is: source, documented, reported, inferred or folklore (never an error).")

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
                        "name": $0.name, "summary": $0.summary, "strategy": $0.strategy.kind, "options": $0.strategy.options,
                        "mitigations": $0.mitigations.map { ["kind": $0.kind, "options": $0.options] as [String: Any] },
                    ] as [String: Any]
                }
                var object: [String: Any] = ["presets": presets]
                if rules {
                    object["rules"] = RuleCatalog.bundled.rules.map {
                        ["id": $0.id.rawValue, "section": $0.section, "statement": $0.statement, "confidence": $0.confidence.rawValue, "source": $0.source, "findings": $0.findings] as [String: Any]
                    }
                }
                let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                print(String(decoding: data, as: UTF8.self))
                return
            }
            print("Presets (all replay side by side unless --preset picks some):")
            let width = presets.map(\.name.count).max() ?? 0
            for preset in presets {
                let options = preset.strategy.options.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
                print("  \(preset.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(preset.strategy.kind)\(options.isEmpty ? "" : " (\(options))"): \(preset.summary)")
                for m in preset.mitigations {
                    let o = m.options.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
                    print("  \(String(repeating: " ", count: width))    + \(m.kind)\(o.isEmpty ? "" : " (\(o))")")
                }
            }
            guard rules else {
                print("\n`h5replay presets --rules` lists the \(RuleCatalog.bundled.rules.count) rules of the behaviour model.")
                return
            }
            print("\nRules (id, confidence, statement, source):")
            for rule in RuleCatalog.bundled.rules {
                print("  \(rule.id.rawValue.padding(toLength: 3, withPad: " ", startingAt: 0)) [\(rule.confidence.rawValue)] \(rule.statement)")
                print("      source: \(rule.source)\(rule.findings.isEmpty ? "" : "; findings: \(rule.findings.joined(separator: ", "))")")
            }
        }
    }
}
