import Foundation
import Testing

/// `h5replay advise` as a user runs it: advice read from a stored run, and its snippet,
/// pasted into a preset file and replayed with `--preset-file`, gives the counted result.
@Suite("h5replay advise, end to end")
struct AdviseCLITests {
    static func findings(_ dir: URL) throws -> [[String: Any]] {
        let report = try CLITests.h5replay(["report", "--format", "json"], in: dir)
        return try #require(try CLITests.json(report.stdout)["findings"] as? [[String: Any]])
    }

    @Test("urlprotocol-naive on xhr-json-post: the advised mitigation, written into a preset file, replays to the findings advise counted")
    func appliedSnippet() throws {
        let dir = try CLITests.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let replay = try CLITests.h5replay(["replay", "Recordings/xhr-json-post.har", "--preset", "urlprotocol-naive", "--quiet"], in: dir)
        #expect(replay.status == 0, "\(replay.stderr)")
        let before = try Self.findings(dir).count
        let advise = try CLITests.h5replay(["advise", "--format", "json"], in: dir)
        #expect(advise.status == 0, "\(advise.stderr)")
        let advice = try #require(try CLITests.json(advise.stdout)["advice"] as? [[String: Any]])
        let first = try #require(advice.first { $0["kind"] as? String == "add-mitigation" })
        let snippet = try #require(first["snippet"] as? String)
        #expect(first["preset"] as? String == "urlprotocol-naive" && (first["codes"] as? [String: Int])?["BODY_LOST"] != nil && first["adds"] as? Int == 0, "\(first)")

        let file = #"{"name": "our-app", "strategy": {"kind": "urlprotocol", "redirects": "silent"}, "mitigations": [\#(snippet)]}"#
        try file.write(to: dir.appendingPathComponent("our-app.json"), atomically: true, encoding: .utf8)
        let again = try CLITests.h5replay(["replay", "Recordings/xhr-json-post.har", "--preset-file", "our-app.json", "--preset", "our-app", "--quiet"], in: dir)
        #expect(again.status == 0, "\(again.stderr)")
        let removes = try #require(first["removes"] as? Int), adds = try #require(first["adds"] as? Int)
        #expect(try Self.findings(dir).count == before - removes + adds)

        let table = try CLITests.h5replay(["advise", "--run", "1"], in: dir)
        #expect(table.stdout.contains("urlprotocol-naive:") && table.stdout.contains(snippet), "\(table.stdout)")
    }

    @Test("`replay --advise`: after the matrix, capacitor-http@7.4.2's lost FormData upload is answered by capacitor-http@7.4.3")
    func replayAdvise() throws {
        let dir = try CLITests.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try CLITests.h5replay(["replay", "Recordings/capacitor-uploads.har", "--preset", "capacitor-http@7.4.2", "--quiet", "--advise"], in: dir)
        #expect(result.status == 0, "\(result.stderr)")
        let advice = try #require(result.stdout.components(separatedBy: "Advice, each change replayed").last)
        #expect(advice.contains("version: capacitor-http@7.4.3  removes 1 (BODY_LOST 1)"), "\(result.stdout)")
    }

    @Test("`report --advise`: the JSON report's advice array holds the advice `advise` gives, none for the baseline plain; Markdown shows it under the preset")
    func reportAdvice() throws {
        let dir = try CLITests.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let replay = try CLITests.h5replay(["replay", "Recordings/xhr-json-post.har", "--preset", "plain,urlprotocol-naive", "--quiet"], in: dir)
        #expect(replay.status == 0, "\(replay.stderr)")
        let plainReport = try CLITests.json(try CLITests.h5replay(["report", "--format", "json"], in: dir).stdout)
        #expect((plainReport["advice"] as? [Any])?.isEmpty == true, "without --advise the array is empty")
        let report = try CLITests.h5replay(["report", "--advise", "--format", "json"], in: dir)
        #expect(report.status == 0, "\(report.stderr)")
        let advice = try #require(try CLITests.json(report.stdout)["advice"] as? [[String: Any]])
        let advise = try #require(try CLITests.json(try CLITests.h5replay(["advise", "--format", "json"], in: dir).stdout)["advice"] as? [[String: Any]])
        #expect(!advice.isEmpty && advice.map { $0["snippet"] as? String } == advise.map { $0["snippet"] as? String })
        #expect(advice.allSatisfy { $0["preset"] as? String == "urlprotocol-naive" }, "plain is the baseline: nothing of it to fix")
        for a in advice {
            for key in ["preset", "kind", "change", "snippet", "removes", "adds", "codes"] { #expect(a[key] != nil, "advice.\(key)") }
        }
        let markdown = try CLITests.h5replay(["report", "--advise", "--format", "markdown"], in: dir)
        let snippet = try #require(advice.first?["snippet"] as? String)
        #expect(markdown.stdout.contains("**Advice**") && markdown.stdout.contains(snippet), "\(markdown.stdout)")
    }

    @Test("advise reads the inputs replay takes: a profile file or scenario it cannot read is exit 2 naming the file")
    func adviseInputs() throws {
        let dir = try CLITests.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try CLITests.h5replay(["replay", "Recordings/xhr-json-post.har", "--preset", "urlprotocol-naive", "--quiet"], in: dir)
        for (flag, file) in [("--profile-file", "no-profile.json"), ("--scenario", "no-scenario.json")] {
            let result = try CLITests.h5replay(["advise", flag, file], in: dir)
            #expect(result.status == 2 && result.stderr.contains(file), "\(flag): \(result.status) \(result.stderr)")
        }
        try #"{"jarSyncDelay": 0}"#.write(to: dir.appendingPathComponent("profile.json"), atomically: true, encoding: .utf8)
        let given = try CLITests.h5replay(["advise", "--profile-file", "profile.json"], in: dir)
        #expect(given.status == 0 && given.stdout.contains("urlprotocol-naive:"), "\(given.stderr)")
    }
}
