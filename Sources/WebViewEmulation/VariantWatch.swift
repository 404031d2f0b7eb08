import TrafficModel

/// A preset with one part changed: one more mitigation added after its own, the mitigation
/// at an index replaced, or its strategy replaced (one of its options set otherwise). What
/// the adviser proposes (Pipeline's AdviceCandidates).
public enum PresetVariant: Sendable {
    case adding(any Mitigation)
    case replacing(Int, any Mitigation)
    case strategy(any InterceptionStrategy)

    /// The preset with this change.
    public func applied(to preset: Preset) -> Preset {
        var mitigations = preset.mitigations, strategy = preset.strategy
        switch self {
        case .adding(let mitigation): mitigations.append(mitigation)
        case .replacing(let index, let mitigation): mitigations[index] = mitigation
        case .strategy(let changed): strategy = changed
        }
        return preset.replacing(strategy: strategy, mitigations: mitigations, written: nil)
    }

    /// Where among `count` mitigations this one goes (`count` for one added); nil for a
    /// strategy.
    func position(among count: Int) -> (Int, any Mitigation)? {
        switch self {
        case .adding(let mitigation): return (count, mitigation)
        case .replacing(let index, let mitigation): return (index, mitigation)
        case .strategy: return nil
        }
    }
}

/// Which variants of a preset would replay a recording differently, found in one replay of
/// the preset itself.
///
/// A replay is a sequence of steps, each a function of the state the last left. Until a
/// changed part first answers something other than what the preset's own answers (for a
/// mitigation added, something other than nothing), the replay with it is the replay
/// without it, step for step. So each variant's hooks, or its strategy's plans, are called
/// at the moments they would be, beside the preset's, their answers compared and set aside:
/// a variant that never differed would have replayed the recording exactly as the preset
/// did, and the adviser need not replay it there. One that differed may still end the same;
/// it is replayed.
///
/// Two kinds of hook act by being there, not by what they answer, and the watch leaves
/// those variants to a full replay (`watchable`): a jar link (the first part's wins) and a
/// document-start hook where the preset has none (any one makes the step note W1 and keep
/// a pooled web view's NativeJar). A strategy is watched only with the preset's jar link.
///
/// The watched preset is built once for many recordings, so a watch replays one recording
/// at a time: its marks are one replay's.
public final class VariantWatch {
    let watched: Preset
    let profile: Profile
    let flags: Flags

    /// A watch of `variants` (each `watchable`) under `preset`.
    public init(_ variants: [PresetVariant], under preset: Preset, profile: Profile) {
        let flags = Flags(count: variants.count)
        var mitigations: [any Mitigation] = preset.mitigations
        let count = preset.mitigations.count
        for (position, original) in (preset.mitigations.map { Optional($0) } + [nil]).enumerated() {
            let alternatives = variants.indices.compactMap { i in variants[i].position(among: count).flatMap { $0.0 == position ? ($0.1.hooks, i) : nil } }
            guard !alternatives.isEmpty else { continue }
            let watcher = Watcher(original: original, alternatives: alternatives, flags: flags)
            if position < count { mitigations[position] = watcher } else { mitigations.append(watcher) }
        }
        let strategies = variants.indices.compactMap { i -> (any InterceptionStrategy, Int)? in
            if case .strategy(let changed) = variants[i] { return (changed, i) }
            return nil
        }
        let strategy = strategies.isEmpty ? preset.strategy : StrategyWatcher(original: preset.strategy, alternatives: strategies, flags: flags)
        watched = preset.replacing(strategy: strategy, mitigations: mitigations, written: nil)
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
    public static func watchable(_ variant: PresetVariant, in preset: Preset) -> Bool { watchable([variant], in: preset)[0] }

    /// The same for each of `variants`, the preset's hooks gathered once.
    public static func watchable(_ variants: [PresetVariant], in preset: Preset) -> [Bool] {
        let parts = preset.mitigations.map(\.hooks)
        let starts = parts.map { $0.documentStart != nil }, appStarts = preset.app?.hooks.documentStart != nil
        return variants.map { variant in
            guard let (index, mitigation) = variant.position(among: parts.count) else {
                if case .strategy(let changed) = variant { return changed.jarLink == preset.strategy.jarLink }
                return false
            }
            let original = index < parts.count ? parts[index] : nil, new = mitigation.hooks
            let sameLink = parts.prefix(index).contains { $0.jarLink != nil } || new.jarLink == original?.jarLink
            let otherStarts = appStarts || starts.indices.contains { $0 != index && starts[$0] }
            return sameLink && ((new.documentStart != nil) == (original?.documentStart != nil) || otherStarts)
        }
    }

    /// The preset's strategy with the variants' strategies beside it: it plans as the
    /// original does, and marks each variant that would plan otherwise.
    ///
    /// A plan's redirect handling (`redirects`, `redirectRule`) is read only for the later
    /// hops of a chain, from the plan of the chain's first hop: on an exchange that starts
    /// no chain, two plans that differ there alone replay the same, and are not a difference.
    struct StrategyWatcher: InterceptionStrategy {
        let original: any InterceptionStrategy
        let alternatives: [(strategy: any InterceptionStrategy, flag: Int)]
        let flags: Flags

        var kind: String { original.kind }
        var options: [String: String] { original.options }
        var citedRules: [RuleID] { original.citedRules }
        var jarLink: JarLink { original.jarLink }

        func plan(for exchange: Exchange, in context: EmulationContext) -> TransportPlan {
            let plan = original.plan(for: exchange, in: context)
            let startsChain = exchange.redirect?.next != nil
            for (alternative, flag) in alternatives where !flags.acted[flag] {
                var other = alternative.plan(for: exchange, in: context)
                if !startsChain { (other.redirects, other.redirectRule) = (plan.redirects, plan.redirectRule) }
                if other != plan { flags.acted[flag] = true }
            }
            return plan
        }
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
