import Foundation
import Testing
import TrafficModel
import WebViewEmulation
@testable import Findings
@testable import Pipeline
@testable import Reports

/// The reviewed real-world corpus: every real recording in ../shared/conformance (pagexray's
/// real-site HARs, mitmproxy's exports and flows, pcap2har's captures as pcap and as the HAR
/// pcap2har made) and the bundled browser captures, replayed under every preset with `plain`
/// as the baseline. A person judged each group of findings (one recording, one code, one
/// set of rules; split by exchange or preset where the verdicts differ) true, false or
/// unverifiable, with a one-line reason, in `Tests/PipelineTests/Review/PATH.json`. The
/// table of what was judged false is computed here from those files and the current run,
/// and must match `docs/real-world-review.md`; `H5REPLAY_UPDATE_GOLDENS=1` rewrites it.
/// Skipped when ../shared/conformance is not beside the project.
@Suite("Reviewed real-world corpus", .enabled(if: FileManager.default.fileExists(atPath: RealWorldCorpusTests.conformance.path), "../shared/conformance is not here"))
struct RealWorldReviewTests {
    static let reviews = RealWorldCorpusTests.root.appendingPathComponent("Tests/PipelineTests/Review")
    static let table = RealWorldCorpusTests.root.appendingPathComponent("docs/real-world-review.md")

    /// Every real recording, by its path under ../shared/conformance (or `Recordings/` for
    /// the bundled captures), which also names its review file.
    static var recordings: [String] {
        let base = RealWorldCorpusTests.conformance
        var out: [String] = []
        for (dir, extensions) in [("har-pagexray/test/files", [".har"]), ("har-mitmproxy/test/mitmproxy/data/har_files", [".har"]),
                                  ("har-mitmproxy/test/mitmproxy/data/flows", [".har", ".zhar"]), ("pcap2har-andrewf/tests", [".pcap", ".har"])] {
            let root = base.appendingPathComponent(dir)
            let found = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []
            // empty.pcap holds no packet: the import refuses it, as its own test checks.
            out += found.filter { f in extensions.contains { f.hasSuffix($0) } && !f.hasSuffix("empty.pcap") }.map { "\(dir)/\($0)" }
        }
        out += ["browser-event-stream", "browser-form-redirect", "browser-xhr-fetch", "webkit-form-redirect", "webkit-xhr-fetch"].map { "Recordings/\($0).pcap" }
        return out.sorted()
    }

    static func file(_ recording: String) -> String {
        recording.hasPrefix("Recordings/") ? RealWorldCorpusTests.root.appendingPathComponent(recording).path : RealWorldCorpusTests.conformance.appendingPathComponent(recording).path
    }

    /// One reviewed group: the findings of a code and rule set, on the exchanges, under
    /// the presets and in the recordings named (all when not named: a file may hold
    /// several recordings, a page-test tool's runs).
    struct Verdict {
        enum Kind: String { case `true`, `false`, unverifiable }
        var code: String
        var rules: Set<String>
        var exchanges: Set<Int>?
        var presets: Set<String>?
        var recordings: Set<String>?
        var kind: Kind
        var reason: String

        func covers(_ f: Finding) -> Bool {
            f.code.rawValue == code && Set(f.rules.map(\.rawValue)) == rules
                && exchanges.map { $0.contains(f.sequence) } != false && presets.map { $0.contains(f.preset) } != false
                && recordings.map { $0.contains(f.recording) } != false
        }
    }

    static func verdicts(_ recording: String) throws -> [Verdict] {
        let url = reviews.appendingPathComponent(recording + ".json")
        guard FileManager.default.fileExists(atPath: url.path) else { return [] }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any], "\(url.path) is not a JSON object")
        #expect(object["recording"] as? String == recording, "\(url.path) names another recording")
        #expect((object["reviewed"] as? String)?.isEmpty == false, "\(url.path) says nothing of what the recording is")
        return try (object["groups"] as? [[String: Any]] ?? []).map { g in
            let kind = try #require((g["verdict"] as? String).flatMap(Verdict.Kind.init), "\(url.path): a verdict is true, false or unverifiable: \(g)")
            let reason = g["reason"] as? String ?? ""
            #expect(!reason.isEmpty, "\(url.path): a verdict without a reason: \(g)")
            return Verdict(code: g["code"] as? String ?? "", rules: Set(g["rules"] as? [String] ?? []), exchanges: (g["exchanges"] as? [Int]).map(Set.init),
                           presets: (g["presets"] as? [String]).map(Set.init), recordings: (g["recordings"] as? [String]).map(Set.init), kind: kind, reason: reason)
        }
    }

    /// The run's findings a person reads: each preset's own, and the baseline's once.
    static func findings(_ recording: String) throws -> [Finding] {
        let recordings = try ImportPipeline().read(file(recording), name: nil)
        let runner = ReplayRunner(presets: Preset.builtIn, profile: Profile())
        return runner.replay(recordings).flatMap(\.findings).filter { !ReportModel.isShared($0, baseline: runner.baselinePreset) }
    }

    /// Per code, how many findings there are and how many were judged false or
    /// unverifiable, at every severity and at warning and above.
    struct Count {
        var all = 0, judgedFalse = 0, unverifiable = 0
        var atWarning = 0, falseAtWarning = 0
        mutating func add(_ f: Finding, _ kind: Verdict.Kind) {
            let warning = f.severity >= .warning
            all += 1
            if warning { atWarning += 1 }
            switch kind {
            case .false:
                judgedFalse += 1
                if warning { falseAtWarning += 1 }
            case .unverifiable: unverifiable += 1
            case .true: break
            }
        }
    }

    @Test("every finding on every real recording has a reviewed verdict; the false-positive table in docs/real-world-review.md is what the reviews and the current run give")
    func reviewed() throws {
        var byCode: [String: Count] = [:]
        var byRecording: [(String, Count)] = []
        var byPreset: [String: Count] = [:]
        var unreviewed: [String] = []
        var falseAtWarning: [String] = []
        var judged: [String] = []
        for recording in Self.recordings {
            let verdicts = try Self.verdicts(recording)
            #expect(FileManager.default.fileExists(atPath: Self.reviews.appendingPathComponent(recording + ".json").path), "\(recording) has no review file")
            var mine = Count()
            for f in try Self.findings(recording) {
                guard let verdict = verdicts.first(where: { $0.covers(f) }) else {
                    unreviewed.append("\(recording): \(f.recording) \(f.preset) \(f.code.rawValue) \(f.rules.map(\.rawValue)) #\(f.sequence) [\(f.severity.rawValue)] \(f.message)")
                    continue
                }
                judged.append("\(recording): \(f.recording) \(f.preset) \(f.code.rawValue) \(f.rules.map(\.rawValue)) #\(f.sequence) [\(f.severity.rawValue)] \(verdict.kind.rawValue): \(verdict.reason.prefix(80)) || \(f.message)")
                byCode[f.code.rawValue, default: Count()].add(f, verdict.kind)
                mine.add(f, verdict.kind)
                byPreset[f.preset, default: Count()].add(f, verdict.kind)
                if verdict.kind == .false && f.severity >= .warning {
                    falseAtWarning.append("\(recording): \(f.preset) \(f.code.rawValue) \(f.rules.map(\.rawValue)) #\(f.sequence) [\(f.severity.rawValue)]: \(verdict.reason)")
                }
            }
            byRecording.append((recording, mine))
        }
        #expect(unreviewed.isEmpty, "findings without a reviewed verdict (\(unreviewed.count)): \(unreviewed.prefix(20))")
        let text = Self.render(byCode: byCode, byPreset: byPreset, byRecording: byRecording)
        if ProcessInfo.processInfo.environment["H5REPLAY_UPDATE_GOLDENS"] == "1" {
            try text.write(to: Self.table, atomically: true, encoding: .utf8)
        } else {
            let committed = try String(contentsOf: Self.table, encoding: .utf8)
            #expect(committed == text, "docs/real-world-review.md is stale: rerun with H5REPLAY_UPDATE_GOLDENS=1 and review the diff")
        }
        // The README gives the per-code table as the file has it.
        let readme = try String(contentsOf: RealWorldCorpusTests.root.appendingPathComponent("README.md"), encoding: .utf8)
        let perCode = Self.section("## Per code", of: text)
        #expect(!perCode.isEmpty && readme.contains(perCode), "README.md's table of findings judged false differs from docs/real-world-review.md's")
        // `H5REPLAY_REVIEW_DUMP=DIR` writes the findings judged false at warning or above
        // (`false.txt`), those with no verdict (`unreviewed.txt`) and every finding with its
        // verdict (`judged.txt`) there, one per line, for the person working through them.
        if let dir = ProcessInfo.processInfo.environment["H5REPLAY_REVIEW_DUMP"] {
            try falseAtWarning.joined(separator: "\n").write(toFile: dir + "/false.txt", atomically: true, encoding: .utf8)
            try unreviewed.joined(separator: "\n").write(toFile: dir + "/unreviewed.txt", atomically: true, encoding: .utf8)
            try judged.joined(separator: "\n").write(toFile: dir + "/judged.txt", atomically: true, encoding: .utf8)
        }
        // The target: no finding a reviewer judged false at warning or above; one that
        // appears is listed with its reviewer's reason.
        #expect(falseAtWarning.isEmpty, "\(falseAtWarning.count) judged false at warning or above, first: \(falseAtWarning.prefix(10))")
    }

    /// The table under `heading`, from its header row to the blank line after it.
    static func section(_ heading: String, of text: String) -> String {
        guard let start = text.range(of: heading + "\n\n") else { return "" }
        let rest = text[start.upperBound...]
        return String(rest[..<(rest.range(of: "\n\n")?.lowerBound ?? rest.endIndex)])
    }

    /// The table: per code, then per recording.
    static func render(byCode: [String: Count], byPreset: [String: Count], byRecording: [(String, Count)]) -> String {
        func percent(_ part: Int, _ whole: Int) -> String { whole == 0 ? "-" : String(format: "%.1f %%", Double(part) * 100 / Double(whole)) }
        var out = """
            # Findings on real recordings, reviewed

            Made by `RealWorldReviewTests` from the review files in `Tests/PipelineTests/Review/` and a
            replay of every real recording in `../shared/conformance` and the bundled browser captures
            under the eighteen built-in presets, `plain` as the baseline (a preset's finding that `plain`
            shares is counted once, under `plain`). Each group of findings (a recording, a code, a set of
            rules) was judged true, false or unverifiable by a reviewer who opened the entries.

            ## Per code

            | code | findings | judged false | unverifiable | at warning or above | false among them |
            | --- | ---: | ---: | ---: | ---: | ---: |

            """
        var total = Count()
        for code in byCode.keys.sorted() {
            let c = byCode[code]!
            total.all += c.all; total.judgedFalse += c.judgedFalse; total.unverifiable += c.unverifiable
            total.atWarning += c.atWarning; total.falseAtWarning += c.falseAtWarning
            out += "| \(code) | \(c.all) | \(c.judgedFalse) (\(percent(c.judgedFalse, c.all))) | \(c.unverifiable) | \(c.atWarning) | \(c.falseAtWarning) (\(percent(c.falseAtWarning, c.atWarning))) |\n"
        }
        out += "| all | \(total.all) | \(total.judgedFalse) (\(percent(total.judgedFalse, total.all))) | \(total.unverifiable) | \(total.atWarning) | \(total.falseAtWarning) (\(percent(total.falseAtWarning, total.atWarning))) |\n"
        out += "\n## Per preset\n\n| preset | findings | judged false | at warning or above | false among them |\n| --- | ---: | ---: | ---: | ---: |\n"
        for preset in Preset.builtIn.map(\.name) {
            let c = byPreset[preset] ?? Count()
            out += "| \(preset)\(preset == "plain" ? " (baseline)" : "") | \(c.all) | \(c.judgedFalse) | \(c.atWarning) | \(c.falseAtWarning) |\n"
        }
        out += "\n## Per recording\n\n| recording | findings | judged false | at warning or above | false among them |\n| --- | ---: | ---: | ---: | ---: |\n"
        for (recording, c) in byRecording {
            out += "| \(recording) | \(c.all) | \(c.judgedFalse) | \(c.atWarning) | \(c.falseAtWarning) |\n"
        }
        return out
    }
}
