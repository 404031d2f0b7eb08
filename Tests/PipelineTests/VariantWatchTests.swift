import Foundation
import Testing
import WebViewEmulation
@testable import Findings
@testable import Pipeline

/// The adviser replays a change of one part (a mitigation, or an option of the strategy)
/// only where a watch along the preset's own replay saw it act (VariantWatch): where it did
/// not, the change must replay the recording exactly as the preset does, and the advice
/// must be the advice of replaying everything.
@Suite("Variant watch")
struct VariantWatchTests {
    static let presets = AdviceTests.everyPreset.compactMap { try? Preset.selecting($0).presets.first }

    static func preset(_ name: String) throws -> Preset { try #require(try Preset.selecting(name).presets.first) }

    /// Every candidate of `preset`'s advice the watch follows, with the recordings it saw it act on.
    static func watched(_ preset: Preset, _ adviser: Adviser) -> [AdviceCandidate] {
        let watched = adviser.watched(preset)
        let groups = Adviser.groups(adviser.everywhere(preset))
        return AdviceCandidates.all(for: groups.mapValues(\.recordings), preset: preset, others: []).compactMap { candidate in
            watched.acting[candidate.key].map { acting in
                var out = candidate
                out.acting = acting
                return out
            }
        }
    }

    @Test("every change of one part the watch saw act nowhere on a recording replays it as the preset does, outcome for outcome and jar event for jar event",
          arguments: AdviceTests.everyPreset)
    func unwatchedEqual(_ name: String) throws {
        let preset = try Self.preset(name)
        let adviser = Adviser(runner: AdviceTests.bundled.runner, recordings: AdviceTests.bundled.recordings)
        let profile = adviser.runner.profile, watched = adviser.watched(preset)
        #expect(watched.findings == adviser.allFindings(preset, on: Array(adviser.inputs.indices)), "the watched replay finds what the preset's own does")
        let own = adviser.inputs.map { $0.replay(preset, profile: profile) }
        for (key, variant) in AdviceCandidates.variants(of: preset) where VariantWatch.watchable(variant, in: preset) {
            let changed = variant.applied(to: preset)
            for (r, input) in adviser.inputs.enumerated() where !(watched.acting[key]?.contains(r) ?? true) {
                let before = own[r], after = input.replay(changed, profile: profile)
                #expect(before.outcomes == after.outcomes && before.jarEvents == after.jarEvents && before.divergences == after.divergences && before.prefetch == after.prefetch,
                    "\(name) with \(key) on \(input.recording.name): the watch saw it act nowhere, yet the replay differs")
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
