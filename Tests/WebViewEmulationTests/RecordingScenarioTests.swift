import CookieJar
import Foundation
import HARFormat
import Testing
import TrafficModel
@testable import WebViewEmulation

/// What each preset must and must not find in each bundled recording.
@Suite("Bundled recordings under each preset")
struct RecordingScenarioTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func recording(_ name: String) throws -> Recording {
        let data = try Data(contentsOf: root.appendingPathComponent("Recordings/\(name).har"))
        return try HARImporter().recording(from: data, file: name, name: name)
    }

    static func run(_ name: String, _ preset: String, ios: IOSVersion = .newest, simulator: Bool = false) throws -> (Recording, EmulationResult) {
        let recording = try recording(name)
        let emulator = WebViewEmulator(preset: try #require(Preset.named(preset)), profile: Profile(ios: ios, simulator: simulator))
        return (recording, emulator.run(recording, provenance: CookieProvenance(recording: recording)))
    }

    /// Sequences whose body did not arrive intact, with the rules.
    static func bodyChanges(_ result: EmulationResult) -> [Int: [RuleID]] {
        var out: [Int: [RuleID]] = [:]
        for o in result.outcomes where o.has(.bodyChanged) || o.has(.redirectReissued) { out[o.sequence] = o[.bodyChanged] + o[.redirectReissued] }
        return out
    }

    static func isClean(_ result: EmulationResult, _ recording: Recording) -> Bool {
        result.outcomes.allSatisfy { o in
            !o.has(.bodyChanged) && !o.has(.redirectReissued) && o.cookieDifferences.isEmpty
                && (o.pageURL == nil || !o.has(.redirectHidden))
                && o.deliveredBody == BodyFingerprint(recording.exchanges[o.sequence].request.body)
        } && result.divergences.isEmpty
    }

    // MARK: - xhr-json-post

    @Test("the XHR POST: body lost through NSURLProtocol (P1), intact without interception")
    func xhrPost() throws {
        let (recording, plain) = try Self.run("xhr-json-post", "plain")
        #expect(Self.isClean(plain, recording))
        let (_, naive) = try Self.run("xhr-json-post", "urlprotocol-naive")
        #expect(Self.bodyChanges(naive) == [2: ["P1"]])
        #expect(naive.outcomes[2].deliveredBody == .empty)
    }

    @Test("the XHR POST through a scheme handler: intact on iOS 17, lost on iOS 11.0 (S1)")
    func xhrPostSchemeHandler() throws {
        let (recording, ios17) = try Self.run("xhr-json-post", "schemehandler-naive", ios: IOSVersion(17))
        #expect(Self.isClean(ios17, recording))
        let (_, ios11) = try Self.run("xhr-json-post", "schemehandler-naive", ios: IOSVersion(11, 0))
        #expect(Self.bodyChanges(ios11) == [2: ["S1"]])
        let (_, ios113) = try Self.run("xhr-json-post", "schemehandler-naive", ios: IOSVersion(11, 3))
        #expect(Self.bodyChanges(ios113).isEmpty)
    }

    // MARK: - fetch-blob-upload

    @Test("the Blob upload: lost through a scheme handler on every iOS (S2 from 11.3, S1 before)")
    func blobUpload() throws {
        let (recording, plain) = try Self.run("fetch-blob-upload", "plain")
        #expect(Self.isClean(plain, recording))
        #expect(recording.exchanges[1].bodyKind == .binary)
        #expect(recording.exchanges[1].initiator == .fetch)
        #expect(Self.bodyChanges(try Self.run("fetch-blob-upload", "schemehandler-naive").1) == [1: ["S2"]])
        #expect(Self.bodyChanges(try Self.run("fetch-blob-upload", "schemehandler-naive", ios: IOSVersion(11, 0)).1) == [1: ["S1"]])
        #expect(Self.bodyChanges(try Self.run("fetch-blob-upload", "urlprotocol-naive").1) == [1: ["P1"]])
    }

    @Test("an ArrayBuffer body survives the scheme handler from iOS 11.3 (S2 acts on Blobs only)")
    func arrayBuffer() throws {
        let recording = try Self.recording("fetch-blob-upload")
        let emulator = WebViewEmulator(preset: Preset.named("schemehandler-naive")!, profile: Profile(), scenario: Scenario(binaryAsBlob: false))
        let result = emulator.run(recording, provenance: CookieProvenance(recording: recording))
        #expect(Self.bodyChanges(result).isEmpty)
    }

    // MARK: - login-redirect

    @Test("the login POST and 302: the page sees the redirect only without interception")
    func loginRedirect() throws {
        let (recording, plain) = try Self.run("login-redirect", "plain")
        #expect(Self.isClean(plain, recording))
        #expect(plain.outcomes[1].pageURL == "https://shop.example.com/home")

        let (_, naive) = try Self.run("login-redirect", "urlprotocol-naive")
        #expect(Self.bodyChanges(naive) == [1: ["P1"]])
        #expect(naive.outcomes[1].pageURL == "https://shop.example.com/login")
        #expect(naive.outcomes[1][.redirectHidden] == ["P4"])
        // The session cookie set on the 302 hop lands in NativeJar (P3), which the
        // intercepted requests read, so they all carry it.
        #expect(naive.outcomes.allSatisfy { $0.cookieDifferences.isEmpty })

        let (_, forwarded) = try Self.run("login-redirect", "urlprotocol-forwarded")
        #expect(forwarded.outcomes[1].pageURL == "https://shop.example.com/home")
        #expect(!forwarded.outcomes[1].has(.redirectHidden))

        let (_, scheme) = try Self.run("login-redirect", "schemehandler-naive")
        #expect(Self.bodyChanges(scheme).isEmpty)
        #expect(scheme.outcomes[1][.redirectHidden] == ["S5"])
    }

    // MARK: - script-cookie-api

    @Test("the script-set cookie: sent without interception, missing from NativeJar requests (J3 with P3/S7)")
    func scriptCookie() throws {
        let (recording, plain) = try Self.run("script-cookie-api", "plain")
        #expect(Self.isClean(plain, recording))
        for (preset, jarRule) in [("urlprotocol-naive", RuleID("P3")), ("schemehandler-naive", RuleID("S7"))] {
            let (_, result) = try Self.run("script-cookie-api", preset)
            let differences = result.outcomes[2].cookieDifferences
            #expect(differences.count == 1)
            let missing = try #require(differences.first)
            #expect(missing.name == "ab_bucket" && missing.recordedValue == "B" && missing.sentValue == nil)
            #expect(missing.rules == [jarRule, "J3"])
            // The write happened after main.js (t=0.1 s) and before the API call (t=0.4 s):
            // a window of 0.3 s, shorter than J3's 1 s, so the miss is certain.
            #expect(missing.certain)
            #expect(result.divergences.isEmpty)
        }
    }

    @Test("on the simulator a document.cookie write never reaches NativeJar: the jars diverge (J3)")
    func simulatorDivergence() throws {
        let (_, plain) = try Self.run("script-cookie-api", "plain", simulator: true)
        #expect(plain.divergences.map(\.name) == ["ab_bucket"])
        #expect(plain.divergences.first?.rules == ["J3"])
        #expect(plain.divergences.first?.webValue == "B" && plain.divergences.first?.nativeValue == nil)
        #expect(plain.divergences.first?.explanation == "WebJar: written by script")
    }
}
