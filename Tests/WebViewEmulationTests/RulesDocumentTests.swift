import Foundation
import Testing
import WebViewEmulation

/// `docs/rules.md` is the behaviour model as `rules.json` states it, rendered here from the
/// catalogue the emulator reads (`RuleCatalog.bundled`): one section per rule section, each
/// rule with its id, summary, statement, confidence, releases, source, findings and lab
/// measurement. The test fails when the file differs from what the data renders;
/// `Tools/rules-doc` (or `H5REPLAY_UPDATE_GOLDENS=1` on this suite) rewrites it.
@Suite("The behaviour model's document")
struct RulesDocumentTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let document = root.appendingPathComponent("docs/rules.md")

    @Test("docs/rules.md is what rules.json renders: every rule, in the data file's order, under its section")
    func upToDate() throws {
        let text = Self.render(RuleCatalog.bundled)
        if ProcessInfo.processInfo.environment["H5REPLAY_UPDATE_GOLDENS"] == "1" {
            try text.write(to: Self.document, atomically: true, encoding: .utf8)
            return
        }
        let committed = (try? String(contentsOf: Self.document, encoding: .utf8)) ?? ""
        if committed != text {
            let (c, t) = (committed.split(separator: "\n", omittingEmptySubsequences: false), text.split(separator: "\n", omittingEmptySubsequences: false))
            let line = zip(c, t).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(c.count, t.count)
            Issue.record("docs/rules.md is stale from line \(line + 1) (has \(line < c.count ? "\"\(c[line])\"" : "(end)"), rules.json renders \(line < t.count ? "\"\(t[line])\"" : "(end)")): run Tools/rules-doc and review the diff")
        }
    }

    @Test("the document names every rule of the catalogue once, as a heading of its own")
    func everyRule() {
        let text = Self.render(RuleCatalog.bundled)
        for rule in RuleCatalog.bundled.rules {
            #expect(text.components(separatedBy: "\n### \(rule.id.rawValue): ").count == 2, "\(rule.id)")
        }
    }

    /// The document for a catalogue.
    static func render(_ catalog: RuleCatalog) -> String {
        var sections: [(name: String, rules: [Rule])] = []
        for rule in catalog.rules {
            if let i = sections.firstIndex(where: { $0.name == rule.section }) { sections[i].rules.append(rule) } else { sections.append((rule.section, [rule])) }
        }
        var out: [String] = [
            "# The behaviour model, rule by rule",
            "",
            "<!-- Generated from Sources/WebViewEmulation/Resources/rules.json by Tools/rules-doc; RulesDocumentTests fails when it is stale. Edit rules.json, not this file. -->",
            "",
            "Every rule of the model h5replay replays recordings under, as `Sources/WebViewEmulation/Resources/rules.json`",
            "states it (\(catalog.rules.count) rules in \(sections.count) sections, data file version \(catalog.version)). `docs/model.md` explains",
            "what the sections emulate and how a finding cites its rules; `h5replay presets --rules` prints the",
            "same rules in a terminal.",
            "",
            "Each rule has a summary (the clause a finding's message quotes), its statement, its confidence",
            "(weakest first: `folklore`, `inferred`, `reported`, `documented`, `source`, `measured`; see",
            "`docs/model.md`, \"Confidence\"), its source, and the finding codes it can produce. A rule that holds",
            "for part of a framework's or iOS's history names the releases in npm's range syntax, with where each",
            "bound was read (`docs/versions.md`); outside them it does not act. A rule the lab ran in a real",
            "WebKit engine (`Tools/lab`, `docs/lab.md`) names the experiments' result files.",
            "",
            "## Releases covered",
            "",
            "| component | oldest | newest | releases where a fact was read or changes | where they were read |",
            "| --- | --- | --- | --- | --- |",
        ]
        for (component, coverage) in catalog.components.sorted(by: { ($0.key == .ios ? "" : $0.key.rawValue) < ($1.key == .ios ? "" : $1.key.rawValue) }) {
            out.append("| `\(component.rawValue)` | \(coverage.oldest) | \(coverage.newest) | \(coverage.releases.joined(separator: ", ")) | \(cell(coverage.source)) |")
        }
        out += ["", "## Sections", ""]
        for section in sections {
            out.append("- [\(text(section.name))](#\(anchor(section.name))): \(section.rules.map { "[\($0.id.rawValue)](#\(anchor("\($0.id.rawValue): \($0.summary)")))" }.joined(separator: ", "))")
        }
        for section in sections {
            out += ["", "## \(text(section.name))"]
            for rule in section.rules {
                out += ["", "### \(rule.id.rawValue): \(text(rule.summary))", "", text(rule.statement), ""]
                out.append("- confidence: `\(rule.confidence.rawValue)`")
                for (component, range) in (rule.versions ?? [:]).sorted(by: { $0.key < $1.key }) {
                    out.append("- holds for: `\(component)` `\(range)`")
                    if let bound = rule.bounds?[component] {
                        if let from = bound.from { out.append("  - from: \(text(from))") }
                        if let until = bound.until { out.append("  - until: \(text(until))") }
                    }
                }
                out.append("- source: \(text(rule.source))")
                out.append("- findings: \(rule.findings.isEmpty ? "none (the rule shapes what others find)" : rule.findings.map { "`\($0)`" }.joined(separator: ", "))")
                if let m = rule.measurement {
                    let releases = (m.versions ?? [:]).sorted { $0.key < $1.key }.map { "`\($0.key)` \($0.value)" }.joined(separator: "; ")
                    out.append("- lab: \(m.agrees ? "measured" : "not confirmed") in \(m.engine)\(releases.isEmpty ? "" : " at \(releases)")\(m.note.map { ": \(text($0))" } ?? "")")
                    for experiment in m.experiments { out.append("  - [`\(experiment)`](../\(experiment))") }
                }
            }
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// Text from the data file, with Markdown's active characters escaped outside its code spans.
    static func text(_ raw: String) -> String {
        raw.split(separator: "`", omittingEmptySubsequences: false).enumerated().map { i, part in
            guard i % 2 == 0 else { return String(part) }
            var escaped = ""
            for ch in part {
                if "\\*_<>[]#|".contains(ch) { escaped.append("\\") }
                escaped.append(ch)
            }
            return escaped
        }.joined(separator: "`")
    }

    static func cell(_ raw: String) -> String { text(raw) }

    /// GitHub's anchor for a heading: lower-cased, punctuation dropped, spaces as hyphens.
    static func anchor(_ heading: String) -> String {
        String(heading.lowercased().compactMap { ch -> Character? in
            if ch == " " { return "-" }
            if ch.isLetter || ch.isNumber || ch == "-" || ch == "_" { return ch }
            return nil
        })
    }
}
