/// A preset with one of its mitigations changed: one more added after its own, or the one
/// at `index` replaced. What the adviser proposes (Pipeline's AdviceCandidates).
public struct MitigationVariant: Sendable {
    /// The mitigation replaced; nil for one added.
    public var index: Int?
    public var mitigation: any Mitigation

    public init(index: Int?, mitigation: any Mitigation) {
        self.index = index
        self.mitigation = mitigation
    }
}

/// Which variants of a preset would replay a recording differently, found in one replay of
/// the preset itself.
///
/// A replay is a sequence of steps, each a function of the state the last left. Until a
/// changed mitigation first answers something other than what the preset's own answers
/// (or, for one added, something other than nothing), the replay with it is the replay
/// without it, step for step. So each variant's hooks are called at the moments they would
/// be, beside the preset's, their answers compared and set aside: a variant that never
/// differed would have replayed the recording exactly as the preset did, and the adviser
/// need not replay it there. One that differed may still end the same; it is replayed.
///
/// Two kinds of hook act by being there, not by what they answer, and the watch leaves
/// those variants to a full replay (`watchable`): a jar link (the first part's wins) and a
/// document-start hook where the preset has none (any one makes the step note W1 and keep
/// a pooled web view's NativeJar).
///
/// The watched preset is built once for many recordings, so a watch replays one recording
/// at a time: its marks are one replay's.
public final class VariantWatch {
    let watched: Preset
    let profile: Profile
    let flags: Flags

    /// A watch of `variants` (each `watchable`) under `preset`.
    public init(_ variants: [MitigationVariant], under preset: Preset, profile: Profile) {
        let flags = Flags(count: variants.count)
        var mitigations: [any Mitigation] = preset.mitigations
        for (position, original) in (preset.mitigations.map { Optional($0) } + [nil]).enumerated() {
            let alternatives = variants.indices.filter { (variants[$0].index ?? preset.mitigations.count) == position }
            guard !alternatives.isEmpty else { continue }
            let watcher = Watcher(original: original, alternatives: alternatives.map { (variants[$0].mitigation.hooks, $0) }, flags: flags)
            if position < preset.mitigations.count { mitigations[position] = watcher } else { mitigations.append(watcher) }
        }
        watched = preset.replacing(strategy: preset.strategy, mitigations: mitigations, written: nil)
        self.profile = profile
        self.flags = flags
    }

    /// The preset's own replay of `input` and, for each variant, whether the preset with it
    /// could replay `input` differently: false means it would not.
    public func replay(_ input: ReplayInput) -> (result: EmulationResult, acting: [Bool]) {
        flags.acted = Array(repeating: false, count: flags.acted.count)
        let result = input.replay(watched, profile: profile)
        return (result, flags.acted)
    }

    /// Whether a watch can follow `variant` under `preset`.
    public static func watchable(_ variant: MitigationVariant, in preset: Preset) -> Bool {
        let parts = preset.mitigations.map(\.hooks)
        let original = variant.index.map { parts[$0] }
        let others = parts.indices.filter { $0 != variant.index }.map { parts[$0] } + (preset.app.map { [$0.hooks] } ?? [])
        let new = variant.mitigation.hooks
        let earlierLink = parts.prefix(variant.index ?? parts.count).contains { $0.jarLink != nil }
        let sameLink = earlierLink || new.jarLink == original?.jarLink
        let sameDocumentStart = (new.documentStart != nil) == (original?.documentStart != nil) || others.contains { $0.documentStart != nil }
        return sameLink && sameDocumentStart
    }

    /// What the watchers found: one replay's, on one thread (the emulation is sequential).
    final class Flags: @unchecked Sendable {
        var acted: [Bool]
        init(count: Int) { acted = Array(repeating: false, count: count) }
    }

    /// A mitigation of the preset (or none, for those added) with the variants' hooks beside
    /// it: it answers as the original does, and marks each variant that would answer
    /// otherwise.
    struct Watcher: Mitigation {
        let original: (any Mitigation)?
        /// Made once: a scenario's HTTPDNS joins each replay as one more mitigation, and the
        /// preset's hooks are gathered again for it.
        let hooks: MitigationHooks

        init(original: (any Mitigation)?, alternatives: [(hooks: MitigationHooks, flag: Int)], flags: Flags) {
            self.original = original
            hooks = Self.hooks(original?.hooks ?? MitigationHooks(), alternatives, flags)
        }

        var kind: String { original?.kind ?? "variant-watch" }
        var options: [String: String] { original?.options ?? [:] }
        var citedRules: [RuleID] { original?.citedRules ?? [] }

        static func hooks(_ own: MitigationHooks, _ alternatives: [(hooks: MitigationHooks, flag: Int)], _ flags: Flags) -> MitigationHooks {
            func slot<In, Out: Equatable & Sendable>(_ hook: KeyPath<MitigationHooks, (@Sendable (In) -> Out)?>, neutral: Out) -> (@Sendable (In) -> Out)? {
                VariantWatch.watch(own[keyPath: hook], alternatives.map { ($0.hooks[keyPath: hook], $0.flag) }, neutral: neutral, flags)
            }
            let issued = VariantWatch.watch(own.requestIssued.map(returning), alternatives.map { ($0.hooks.requestIssued.map(returning), $0.flag) }, neutral: true, flags)
            let firstLoad = VariantWatch.watch(own.beforeFirstLoad.map(taking), alternatives.map { ($0.hooks.beforeFirstLoad.map(taking), $0.flag) }, neutral: nil, flags)
            let none: LoadAnswer? = nil
            let aboutToGo = VariantWatch.watch(own.loadAboutToGo, alternatives.map { ($0.hooks.loadAboutToGo, $0.flag) }, neutral: none, flags)
            let atInterceptor = VariantWatch.watch(own.loadAtInterceptor.map(pairing), alternatives.map { ($0.hooks.loadAtInterceptor.map(pairing), $0.flag) }, neutral: none, flags)
            var hooks = MitigationHooks(jarLink: own.jarLink)
            hooks.requestIssued = issued.map(discarding)
            hooks.cookieHost = slot(\.cookieHost, neutral: nil)
            hooks.documentLoadCookies = slot(\.documentLoadCookies, neutral: nil)
            hooks.setCookieStored = slot(\.setCookieStored, neutral: nil)
            hooks.documentStart = slot(\.documentStart, neutral: [])
            hooks.scriptCookieWritten = slot(\.scriptCookieWritten, neutral: ScriptWriteEffect(copy: nil, acceptedCrossSite: false))
            hooks.scriptCookieDeleted = slot(\.scriptCookieDeleted, neutral: nil)
            hooks.beforeFirstLoad = firstLoad.map(untaking)
            hooks.webSetCookieArriving = slot(\.webSetCookieArriving, neutral: nil)
            hooks.loadAboutToGo = aboutToGo
            hooks.loadAtInterceptor = atInterceptor.map(unpairing)
            hooks.pageLoadStarts = slot(\.pageLoadStarts, neutral: nil)
            return hooks
        }
    }

    /// A hook that answers as `original` (or `neutral` where there is none) and marks each
    /// alternative that answers otherwise; nil when none of them hooks the moment.
    static func watch<In, Out: Equatable & Sendable>(_ original: (@Sendable (In) -> Out)?, _ alternatives: [((@Sendable (In) -> Out)?, Int)], neutral: Out, _ flags: Flags) -> (@Sendable (In) -> Out)? {
        guard original != nil || alternatives.contains(where: { $0.0 != nil }) else { return nil }
        return { input in
            let answer = original?(input) ?? neutral
            for (alternative, flag) in alternatives where !flags.acted[flag] && (alternative?(input) ?? neutral) != answer {
                flags.acted[flag] = true
            }
            return answer
        }
    }

    /// The same for a moment whose hooks also change the outcome: an alternative differs
    /// when its answer or the outcome it leaves does.
    static func watch<In, Out: Equatable & Sendable>(
        _ original: (@Sendable (inout Outcome, In) -> Out)?, _ alternatives: [((@Sendable (inout Outcome, In) -> Out)?, Int)], neutral: Out, _ flags: Flags
    ) -> (@Sendable (inout Outcome, In) -> Out)? {
        guard original != nil || alternatives.contains(where: { $0.0 != nil }) else { return nil }
        return { outcome, input in
            let before = outcome
            let answer = original.map { $0(&outcome, input) } ?? neutral
            for (alternative, flag) in alternatives where !flags.acted[flag] {
                var other = before
                if (alternative.map { $0(&other, input) } ?? neutral) != answer || other != outcome { flags.acted[flag] = true }
            }
            return answer
        }
    }
}

/// `requestIssued` as a moment that answers (always the same), for `VariantWatch.watch`.
private func returning(_ hook: @escaping @Sendable (inout Outcome, IssuedRequest) -> Void) -> @Sendable (inout Outcome, IssuedRequest) -> Bool {
    { outcome, request in
        hook(&outcome, request)
        return true
    }
}

/// `beforeFirstLoad` as a moment with an input.
private func taking(_ hook: @escaping @Sendable () -> JarMirror?) -> @Sendable (()) -> JarMirror? {
    { _ in hook() }
}

/// `loadAtInterceptor`'s two inputs as one.
private func pairing(_ hook: @escaping @Sendable (inout Outcome, PendingLoad, TransportPlan) -> LoadAnswer?) -> @Sendable (inout Outcome, (PendingLoad, TransportPlan)) -> LoadAnswer? {
    { outcome, input in hook(&outcome, input.0, input.1) }
}

/// `returning` undone.
private func discarding(_ hook: @escaping @Sendable (inout Outcome, IssuedRequest) -> Bool) -> @Sendable (inout Outcome, IssuedRequest) -> Void {
    { outcome, request in _ = hook(&outcome, request) }
}

/// `taking` undone.
private func untaking(_ hook: @escaping @Sendable (()) -> JarMirror?) -> @Sendable () -> JarMirror? {
    { hook(()) }
}

/// `pairing` undone.
private func unpairing(_ hook: @escaping @Sendable (inout Outcome, (PendingLoad, TransportPlan)) -> LoadAnswer?) -> @Sendable (inout Outcome, PendingLoad, TransportPlan) -> LoadAnswer? {
    { outcome, load, plan in hook(&outcome, (load, plan)) }
}
