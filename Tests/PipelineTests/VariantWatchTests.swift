import Foundation
import Testing
import WebViewEmulation
@testable import Findings
@testable import Pipeline

/// The adviser replays a change of one mitigation only where a watch along the preset's own
/// replay saw it act (VariantWatch): where it did not, the change must replay the recording
/// exactly as the preset does, and the advice must be the advice of replaying everything.
@Suite("Variant watch")
struct VariantWatchTests {
    static let presets = AdviceTests.everyPreset.compactMap { try? Preset.selecting($0).presets.first }

    static func preset(_ name: String) throws -> Preset { try #require(try Preset.selecting(name).presets.first) }

    /// Every candidate of `preset`'s advice the watch follows, with the recordings it saw it act on.
    static func watched(_ preset: Preset, _ adviser: Adviser) -> [AdviceCandidate] {
        let original = adviser.everywhere(preset)
        let groups = Adviser.groups(original)
        var candidates = AdviceCandidates.all(for: groups.mapValues(\.recordings), preset: preset, others: [])
        adviser.watch(&candidates, under: preset)
        return candidates.filter { $0.acting != nil }
    }

    @Test("a change the watch saw act nowhere on a recording replays it as the preset does, outcome for outcome and jar event for jar event", arguments: AdviceTests.everyPreset)
    func unwatchedEqual(_ name: String) throws {
        let preset = try Self.preset(name)
        let adviser = Adviser(runner: AdviceTests.bundled.runner, recordings: AdviceTests.bundled.recordings)
        let profile = adviser.runner.profile
        for candidate in Self.watched(preset, adviser) {
            for r in adviser.inputs.indices where !(candidate.acting?.contains(r) ?? true) {
                let input = adviser.inputs[r]
                let before = input.replay(preset, profile: profile), after = input.replay(candidate.preset, profile: profile)
                #expect(before.outcomes == after.outcomes && before.jarEvents == after.jarEvents && before.divergences == after.divergences && before.prefetch == after.prefetch,
                    "\(preset.name) with \(candidate.snippet) on \(input.recording.name): the watch saw it act nowhere, yet the replay differs")
            }
        }
    }

    @Test("the watch spares replays: across every preset, most of a change's recordings are ones it cannot act on")
    func spares() {
        let adviser = Adviser(runner: AdviceTests.bundled.runner, recordings: AdviceTests.bundled.recordings)
        var pairs = 0, acting = 0
        for preset in Self.presets {
            for candidate in Self.watched(preset, adviser) {
                pairs += adviser.inputs.count
                acting += candidate.acting?.count ?? 0
            }
        }
        #expect(pairs > 0, "no change was watched")
        #expect(acting * 2 < pairs, "the watch saw \(acting) of \(pairs) change-recording pairs act")
    }

    @Test("advice watched is the advice of replaying every change everywhere, on the bundled recordings", arguments: AdviceTests.everyPreset)
    func sameAdvice(_ name: String) throws {
        let preset = try Self.preset(name)
        var adviser = Adviser(runner: AdviceTests.bundled.runner, recordings: AdviceTests.bundled.recordings)
        let watched = adviser.advise(preset, others: Preset.builtIn)
        adviser.watching = false
        #expect(watched == adviser.advise(preset, others: Preset.builtIn))
    }

    static let realFiles = ["en.wikipedia.org.spdy-wpt.har", "www.nytimes.com.har", "aftonbladet.se-redirecting-to-www.har"]
        .map { RealWorldCorpusTests.conformance.appendingPathComponent("har-pagexray/test/files/\($0)").path }

    @Test("advice watched is the advice of replaying everything, on real exports nobody tuned to",
          .enabled(if: FileManager.default.fileExists(atPath: RealWorldCorpusTests.conformance.path), "../shared/conformance is not here"))
    func sameAdviceReal() throws {
        let recordings = try Self.realFiles.flatMap { try ImportPipeline().read($0, name: URL(fileURLWithPath: $0).deletingPathExtension().lastPathComponent) }
        var adviser = Adviser(runner: ReplayRunner(presets: Preset.builtIn, profile: Profile()), recordings: recordings)
        let watched = adviser.advise(all: Self.presets, others: Preset.builtIn)
        adviser.watching = false
        #expect(watched == adviser.advise(all: Self.presets, others: Preset.builtIn))
    }
}
