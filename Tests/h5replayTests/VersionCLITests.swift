import Foundation
import Testing

/// Framework releases and iOS versions on the command line: `--preset NAME@VERSION`, the
/// upgrade question in every report format, `--ios` through today.
@Suite("h5replay at framework releases, end to end")
struct VersionCLITests {
    typealias CLI = CLITests

    @Test("two releases of capacitor-http side by side: BODY_LOST for the XHR FormData under 7.4.2 only, columns and the JSON preset named as typed, the upgrade in table, Markdown, HTML and JSON")
    func upgradeQuestion() throws {
        let dir = try CLI.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try CLI.h5replay(["replay", "Recordings/capacitor-uploads.har", "--preset", "capacitor-http@7.4.2,capacitor-http@8.4.2"], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("recording          capacitor-http@7.4.2  capacitor-http@8.4.2"), "\(run.stdout)")
        #expect(run.stdout.contains("Upgrade capacitor-http@7.4.2 -> capacitor-http@8.4.2: fixes 1, breaks 1"))
        #expect(run.stdout.contains("capacitor-uploads: fixes BODY_LOST #3; breaks BODY_REENCODED #3"))
        let json = try CLI.json(try CLI.h5replay(["report", "--format", "json"], in: dir).stdout)
        let findings = try #require(json["findings"] as? [[String: Any]])
        let lost = findings.filter { $0["code"] as? String == "BODY_LOST" }
        #expect(lost.map { $0["preset"] as? String } == ["capacitor-http@7.4.2"] && lost.first?["rules"] as? [String] == ["CAPH3"])
        #expect((json["run"] as? [String: Any])?["presets"] as? [String] == ["capacitor-http@7.4.2", "capacitor-http@8.4.2"])
        let upgrade = try #require((json["upgrades"] as? [[String: Any]])?.first)
        #expect(upgrade["from"] as? String == "capacitor-http@7.4.2" && upgrade["to"] as? String == "capacitor-http@8.4.2")
        let change = try #require((upgrade["recordings"] as? [[String: Any]])?.first)
        #expect((change["fixed"] as? [[String: Any]])?.map { $0["code"] as? String } == ["BODY_LOST"])
        #expect((change["broken"] as? [[String: Any]])?.map { $0["code"] as? String } == ["BODY_REENCODED"])
        #expect(try CLI.h5replay(["report", "--format", "markdown", "--output", "r.md"], in: dir).status == 0)
        let markdown = try String(contentsOf: dir.appendingPathComponent("r.md"), encoding: .utf8)
        #expect(markdown.contains("### Upgrade capacitor-http@7.4.2 to capacitor-http@8.4.2: fixes 1, breaks 1") && markdown.contains("| capacitor-uploads | BODY\\_LOST #3 | BODY\\_REENCODED #3 |"))
        #expect(try CLI.h5replay(["report", "--format", "html", "--output", "r.html"], in: dir).status == 0)
        let html = try String(contentsOf: dir.appendingPathComponent("r.html"), encoding: .utf8)
        #expect(html.contains("<h2>Upgrade capacitor-http@7.4.2 to capacitor-http@8.4.2: fixes 1, breaks 1</h2>"))
    }

    @Test("a version older than covered, malformed, or on a preset of no framework exits 2 naming the known range; a newer one runs as the newest with a note")
    func versionErrors() throws {
        let dir = try CLI.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        for (preset, message) in [("capacitor-http@3.2.0", "capacitor 3.2.0 is older than the model covers (4.8.2 to 8.4.2)"),
                                  ("capacitor-http@7.4", "7.4 is not a version (write it as 7.4.2; the model knows capacitor 4.8.2 to 8.4.2)"),
                                  ("schemehandler-naive@1.0.0", "schemehandler-naive replays an app's own interception, not a framework release")] {
            let r = try CLI.h5replay(["replay", "Recordings/capacitor-uploads.har", "--preset", preset], in: dir)
            #expect(r.status == 2 && r.stderr.contains(message), "\(preset): \(r.stderr)")
        }
        let newer = try CLI.h5replay(["replay", "Recordings/capacitor-uploads.har", "--preset", "flutter*@7.0.0"], in: dir)
        #expect(newer.status == 0 && newer.stderr.contains("flutter-inappwebview-intercept@7.0.0: flutter_inappwebview 7.0.0 is newer than the newest release the model knows (6.1.5); replayed as 6.1.5"), "\(newer.stderr)")
    }

    @Test("`--ios` takes every release through 27 and point releases; the default is the newest; 19 is refused")
    func iosReleases() throws {
        let dir = try CLI.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try CLI.h5replay(["replay", "Recordings/sso-form-post.har", "--preset", "plain"], in: dir).stdout.contains("iOS 27 device"))
        let at18 = try CLI.h5replay(["replay", "Recordings/sso-form-post.har", "--preset", "plain", "--ios", "18.0"], in: dir)
        #expect(at18.status == 0 && at18.stdout.contains("(N6"), "\(at18.stdout)")
        let at26 = try CLI.h5replay(["replay", "Recordings/sso-form-post.har", "--preset", "plain", "--ios", "26.1"], in: dir)
        #expect(at26.status == 0 && !at26.stdout.contains("(N6") && at26.stdout.contains("(N5"))
        let refused = try CLI.h5replay(["replay", "Recordings/sso-form-post.har", "--ios", "19"], in: dir)
        #expect(refused.status == 2 && refused.stderr.contains("26, 27"))
    }

    @Test("a preset file's \"version\" replays its framework at that release; a version on a preset of no framework is an error naming the file and key")
    func presetFileVersion() throws {
        let dir = try CLI.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("ours.json")
        try Data(#"[{"name": "our-capacitor", "app": {"framework": "capacitor"}, "strategy": {"kind": "capacitor-http"}, "version": "7.0.0"}, {"name": "our-capacitor-now", "app": {"framework": "capacitor"}, "strategy": {"kind": "capacitor-http"}}]"#.utf8).write(to: file)
        let run = try CLI.h5replay(["replay", "Recordings/multipart-file-upload.har", "--preset-file", "ours.json", "--preset", "our-capacitor,our-capacitor-now"], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        let json = try CLI.json(try CLI.h5replay(["report", "--format", "json"], in: dir).stdout)
        let lost = (json["findings"] as? [[String: Any]] ?? []).filter { $0["code"] as? String == "BODY_LOST" }.map { $0["preset"] as? String }
        #expect(lost == ["our-capacitor"])
        try Data(#"{"name": "ours", "strategy": {"kind": "urlprotocol"}, "version": "1.0.0"}"#.utf8).write(to: file)
        let bad = try CLI.h5replay(["replay", "Recordings/multipart-file-upload.har", "--preset-file", "ours.json"], in: dir)
        #expect(bad.status == 2 && bad.stderr.contains("ours.json: version: a version picks a framework's release"), "\(bad.stderr)")
    }
}
