import Foundation
import Testing
import TrafficModel
@testable import WebViewEmulation

/// The registry of strategy and mitigation kinds: what a preset file can name, and what
/// the errors, the listings and docs/presets/README.md say, all read from it.
@Suite("Preset registry")
struct PresetRegistryTests {
    @Test("each kind is registered once and builds a value of its own kind")
    func kindsOnce() {
        let names = PresetRegistry.strategies.map(\.name) + PresetRegistry.mitigations.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(PresetRegistry.exampleStrategies.map(\.kind) == PresetRegistry.strategies.map(\.name))
        #expect(PresetRegistry.exampleMitigations.map(\.kind) == PresetRegistry.mitigations.map(\.name))
    }

    @Test("each option a change may set (advice's set-option) is a key of its kind, every value it may take builds, and its rules are the kind's own")
    func choices() throws {
        func check<Value>(_ kinds: [PresetRegistry.Kind<Value>], cited: (Value) -> [RuleID], role: String) throws {
            for kind in kinds {
                for choice in kind.choices {
                    #expect(kind.keys.contains(choice.key), "\(kind.name).\(choice.key) is not an option of \(kind.name)")
                    #expect(!choice.counters.isEmpty && !choice.rules.isEmpty, "\(kind.name).\(choice.key)")
                    #expect(Set(choice.rules).isSubset(of: cited(kind.example())), "\(kind.name).\(choice.key) cites \(choice.rules), not all the kind's")
                    for value in [choice.defaultValue] + choice.counters {
                        // httpdns alone has a required option: its hosts.
                        let base: [String: WrittenValue] = kind.name == "httpdns" ? ["hosts": .object(["a.example": .string("192.0.2.1")])] : [:]
                        let object = WrittenValue.object(base.merging(["kind": .string(kind.name)]) { $1 }).setting(choice.key, to: value)
                        let file = #"{"name": "x", "strategy": {"kind": "native"}, "mitigations": [\#(object.text)]}"#
                        let strategyFile = #"{"name": "x", "strategy": \#(object.text)}"#
                        do {
                            _ = try PresetFile.load(Data((role == "strategy" ? strategyFile : file).utf8), file: "a.json")
                        } catch {
                            Issue.record("\(object.text) does not build: \(error)")
                        }
                    }
                }
            }
        }
        try check(PresetRegistry.strategies, cited: { $0.citedRules }, role: "strategy")
        try check(PresetRegistry.mitigations, cited: { $0.citedRules }, role: "mitigation")
        #expect(PresetRegistry.strategies.contains { !$0.choices.isEmpty } && PresetRegistry.mitigations.contains { !$0.choices.isEmpty })
    }

    @Test("a preset file's strategy and mitigation objects are kept as written, and forgotten once a part changes without them")
    func written() throws {
        let preset = try #require(Preset.named("kkjsbridge-protocolhook"))
        let written = try #require(preset.written)
        #expect(written.strategy.text == #"{"kind": "urlprotocol", "redirects": "silent"}"#)
        #expect(written.mitigations.map { $0["kind"] } == preset.mitigations.map { .string($0.kind) })
        #expect(try preset.at(SemanticVersion("1.3.9")!).preset.written == written, "a release keeps the file's objects")
        var changed = preset
        changed.mitigations = []
        #expect(changed.written == nil)
    }

    @Test("an unknown kind names the registered ones, and the nearest")
    func unknownKind() {
        #expect {
            try PresetFile.load(Data(#"{"name": "x", "strategy": {"kind": "urlprotocl"}}"#.utf8), file: "a.json")
        } throws: { error in
            let text = String(describing: error)
            return text.hasPrefix("a.json: strategy.kind: unknown strategy \"urlprotocl\" (did you mean urlprotocol?); known: ")
                && PresetRegistry.strategies.allSatisfy { text.contains($0.name) }
        }
        #expect {
            try PresetFile.load(Data(#"[{"name": "x", "strategy": {"kind": "native"}}, {"name": "y", "strategy": {"kind": "native"}, "mitigations": [{"kind": "cookie-store-sync", "x": 1}]}]"#.utf8), file: "a.json")
        } throws: { error in
            String(describing: error) == "a.json: [1].mitigations[0].x: unknown key; known: kind"
        }
    }

    @Test("a wrong type names the key path and what is expected")
    func wrongType() {
        let cases = [
            (#"{"name": "x", "strategy": {"kind": "jsproxy", "hooksFetch": "yes"}}"#, "a.json: strategy.hooksFetch: expected true or false"),
            (#"{"name": "x", "strategy": {"kind": "native"}, "profile": {"jarSyncDelay": "1"}}"#, "a.json: profile.jarSyncDelay: expected a number"),
            (#"{"name": "x", "strategy": {"kind": "jsproxy", "base": {"kind": "schemehandler", "redirects": "x"}}}"#, "a.json: strategy.base.redirects: schemehandler redirects are silent, reload-document or spi (S5)"),
            (#"[{"name": 1, "strategy": {"kind": "native"}}]"#, "a.json: name: a string is required"),
            (#"{"name": "x""#, "a.json: (file): not valid JSON"),
            ("3", "a.json: (file): expected a preset object or an array of them"),
        ]
        for (json, message) in cases {
            #expect(throws: InputError.self) { try PresetFile.load(Data(json.utf8), file: "a.json") }
            do { _ = try PresetFile.load(Data(json.utf8), file: "a.json") } catch { #expect(String(describing: error) == message) }
        }
    }

    @Test("a scenario file decodes the same way: the file, the JSON path and the fix; its httpdns is the mitigation's options")
    func scenarioErrors() {
        let cases = [
            (#"{"httpdns": {"hosts": {"a.example": "nine"}}}"#, #"s.json: httpdns.hosts["a.example"]: "nine" is not an IPv4 or IPv6 address"#),
            (#"{"httpdns": {"hosts": {"a.example": "192.0.2.1"}, "sni": "no"}}"#, "s.json: httpdns.sni: expected true or false"),
            (#"{"exchanges": [{"url": "*", "bodyKind": "blob"}]}"#, "s.json: exchanges[0].bodyKind: one of "),
            (#"{"newProcessPool": [{"method": "GET"}]}"#, "s.json: newProcessPool[0].url: a URL pattern is required"),
            (#"{"preexisting": "both"}"#, "s.json: preexisting: unknown key; known: "),
        ]
        for (json, message) in cases {
            #expect {
                try Scenario.load(Data(json.utf8), file: "s.json")
            } throws: { error in
                String(describing: error).hasPrefix(message)
            }
        }
    }

    @Test("docs/presets/README.md names every kind and every option")
    func documented() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/presets/README.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        for kind in PresetRegistry.strategies.map({ ($0.name, $0.keys) }) + PresetRegistry.mitigations.map({ ($0.name, $0.keys) }) {
            #expect(text.contains("`\(kind.0)`"), "docs/presets/README.md does not name \(kind.0)")
            for key in kind.1 { #expect(text.contains("`\(key)`"), "docs/presets/README.md does not name \(kind.0)'s \(key)") }
        }
    }

    @Test("a written string is quoted as JSONEncoder quotes it (with / left as it is), whichever characters it holds")
    func quotedAsJSON() throws {
        let strings = (0..<0x80).map { String(UnicodeScalar(UInt8($0))) } + ["xhr", "a/b", "é", "\u{2028}", "say \"hi\"\\n", ""]
        for s in strings {
            let encoded = String(decoding: try JSONEncoder().encode(s), as: UTF8.self).replacingOccurrences(of: "\\/", with: "/")
            #expect(WrittenValue.quoted(s) == encoded, "\(Array(s.unicodeScalars))")
        }
    }
}
