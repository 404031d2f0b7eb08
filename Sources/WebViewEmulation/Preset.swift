import Foundation

/// A named strategy with its mitigations: one column of the side-by-side matrix
/// (docs/model.md, "Presets").
public struct Preset: Sendable {
    /// The parts sit behind one reference: a preset is copied into every replay, and a
    /// copy then costs one retain rather than one per name, list and hook.
    final class Storage: Sendable {
        let name: String
        let summary: String
        let strategy: any InterceptionStrategy
        let mitigations: [any Mitigation]
        let framework: String?
        let app: AppShell?
        let hooks: ComposedHooks
        let profileOverride: ProfileOverride?
        let release: Release?
        /// The framework release replayed, and the rules it suspends: once per preset.
        let replayed: FrameworkRelease?
        /// The strategy and mitigation objects as a preset file wrote them; nil for a preset
        /// built in code, or once a part changes without them.
        let written: WrittenParts?

        init(
            name: String, summary: String, strategy: any InterceptionStrategy, mitigations: [any Mitigation], framework: String?, app: AppShell?, profileOverride: ProfileOverride?,
            release: Release? = nil, replayed: FrameworkRelease?? = nil, hooks: ComposedHooks? = nil, written: WrittenParts? = nil
        ) {
            self.name = name
            self.written = written
            self.release = release
            // Worked out from the rules data: a preset changed in another part keeps it
            // (the adviser's candidates, a scenario's HTTPDNS joining each replay).
            self.replayed = replayed ?? release.flatMap { r in
                (r.version ?? RuleCatalog.bundled.components[r.component]?.newestVersion).map { FrameworkRelease(r.component, $0) }
            }
            self.summary = summary
            self.strategy = strategy
            self.mitigations = mitigations
            self.framework = framework
            self.app = app
            self.profileOverride = profileOverride
            self.hooks = hooks ?? ComposedHooks(mitigations, strategy: strategy, app: app)
        }

        /// This storage with one part changed; the hooks gathered again when the strategy
        /// or the mitigations change.
        func with(name: String? = nil, summary: String? = nil, strategy: (any InterceptionStrategy)? = nil, mitigations: [any Mitigation]? = nil,
            framework: String?? = nil, app: AppShell?? = nil, profileOverride: ProfileOverride?? = nil, release: Release?? = nil, written: WrittenParts?? = nil) -> Storage {
            Storage(name: name ?? self.name, summary: summary ?? self.summary, strategy: strategy ?? self.strategy, mitigations: mitigations ?? self.mitigations,
                framework: framework ?? self.framework, app: app ?? self.app, profileOverride: profileOverride ?? self.profileOverride, release: release ?? self.release,
                replayed: release == nil ? .some(replayed) : nil, hooks: strategy == nil && mitigations == nil && app == nil ? hooks : nil,
                written: written ?? (strategy == nil && mitigations == nil ? self.written : nil))
        }
    }

    private var storage: Storage

    public var name: String {
        get { storage.name }
        set { storage = storage.with(name: newValue) }
    }
    public var summary: String {
        get { storage.summary }
        set { storage = storage.with(summary: newValue) }
    }
    public var strategy: any InterceptionStrategy {
        get { storage.strategy }
        set { storage = storage.with(strategy: newValue) }
    }
    public var mitigations: [any Mitigation] {
        get { storage.mitigations }
        set { storage = storage.with(mitigations: newValue) }
    }
    /// The framework the preset speaks for (`Capacitor`, `Cordova`...), nil for an app's
    /// own interception: `h5replay presets` groups by it.
    public var framework: String? {
        get { storage.framework }
        set { storage = storage.with(framework: .some(newValue)) }
    }
    /// The custom scheme the framework serves the page from, nil when the page stays on
    /// its server's origin (A1-A3).
    public var app: AppShell? {
        get { storage.app }
        set { storage = storage.with(app: .some(newValue)) }
    }
    /// The strategy and mitigation objects as the preset's file wrote them (nil for a preset
    /// built in code); changing the strategy or the mitigations without them forgets them.
    public var written: WrittenParts? {
        get { storage.written }
        set { storage = storage.with(written: .some(newValue)) }
    }
    /// This preset with its strategy and mitigations replaced, written as `parts`.
    public func replacing(strategy: any InterceptionStrategy, mitigations: [any Mitigation], written parts: WrittenParts?) -> Preset {
        var out = self
        out.storage = storage.with(strategy: strategy, mitigations: mitigations, written: .some(parts))
        return out
    }
    /// The mitigations' hooks gathered once, for every replay under this preset.
    var hooks: ComposedHooks { storage.hooks }
    /// Profile numbers this preset overrides (from a preset file), applied over the run's.
    public var profileOverride: ProfileOverride? {
        get { storage.profileOverride }
        set { storage = storage.with(profileOverride: .some(newValue)) }
    }

    /// Which framework's code this preset replays and at which release: the component
    /// its version-bounded rules name, and the version asked for (nil: the newest known).
    public struct Release: Sendable, Hashable {
        public var component: Component
        public var version: SemanticVersion?
        /// The preset's name without the version, which a run asked for `NAME@VERSION`.
        public var baseName: String

        public init(component: Component, version: SemanticVersion? = nil, baseName: String) {
            self.component = component
            self.version = version
            self.baseName = baseName
        }
    }

    public var release: Release? {
        get { storage.release }
        set { storage = storage.with(release: .some(newValue)) }
    }

    /// The framework release this preset replays: the one asked for, else the newest the
    /// model covers.
    public var frameworkVersion: (component: Component, version: SemanticVersion)? {
        storage.replayed.map { ($0.component, $0.version) }
    }

    /// The profile this preset replays under, given the run's.
    public func profile(over base: Profile) -> Profile {
        let profile = profileOverride.map { base.applying($0) } ?? base
        return storage.replayed.map { profile.replaying($0) } ?? profile
    }

    /// This preset at a framework release, named as typed: `capacitor-http@7.4.2`. A
    /// version newer than the newest the model knows replays as the newest, with `note`
    /// saying so; an older one than it covers, or a preset with no framework, throws.
    public func at(_ version: SemanticVersion, typed: String? = nil) throws -> (preset: Preset, note: String?) {
        guard let release else { throw VersionRequest.noFramework(preset: name) }
        let catalog = RuleCatalog.bundled
        if let problem = catalog.coverageProblem(release.component, version) { throw VersionRequest.notCovered(preset: release.baseName, problem: problem) }
        var note: String?
        var replayed = version
        if let newest = catalog.components[release.component]?.newestVersion, version > newest {
            note = "\(release.baseName)@\(version): \(release.component.rawValue) \(version) is newer than the newest release the model knows (\(newest)); replayed as \(newest)"
            replayed = newest
        }
        var out = self
        out.name = typed ?? "\(release.baseName)@\(version)"
        out.release = Release(component: release.component, version: replayed, baseName: release.baseName)
        return (out, note)
    }

    /// Why a `NAME@VERSION` cannot be replayed.
    public enum VersionRequest: Error, CustomStringConvertible {
        case noFramework(preset: String)
        case notCovered(preset: String, problem: String)
        case malformed(String, preset: String)

        public var description: String {
            switch self {
            case .noFramework(let preset): return "\(preset) replays an app's own interception, not a framework release: it takes no @VERSION"
            case .notCovered(_, let problem): return problem
            case .malformed(let text, let preset):
                let known = Preset.named(preset)?.release.flatMap { c in RuleCatalog.bundled.components[c.component].map { "; the model knows \(c.component.rawValue) \($0.oldest) to \($0.newest)" } } ?? ""
                return "\(text) is not a version (write it as 7.4.2\(known))"
            }
        }
    }

    public init(name: String, summary: String, framework: String? = nil, component: Component? = nil, app: AppShell? = nil, strategy: any InterceptionStrategy, mitigations: [any Mitigation] = []) {
        storage = Storage(name: name, summary: summary, strategy: strategy, mitigations: mitigations, framework: framework, app: app, profileOverride: nil,
            release: component.map { Release(component: $0, baseName: name) })
    }

    /// A preset composed as a strategy and the mitigations layered on it, in order:
    ///
    ///     Preset(name: "our-app", summary: "...", strategy: URLProtocolStrategy()) {
    ///         BodyBridge(idParameter: "rid")
    ///         CookieSetterHook(synchronous: true)
    ///     }
    public init(name: String, summary: String, framework: String? = nil, component: Component? = nil, app: AppShell? = nil, strategy: any InterceptionStrategy, @MitigationList mitigations: () -> [any Mitigation]) {
        self.init(name: name, summary: summary, framework: framework, component: component, app: app, strategy: strategy, mitigations: mitigations())
    }

    /// Every rule this preset's strategy, mitigations and app shell can cite.
    public var citedRules: [RuleID] {
        strategy.citedRules + mitigations.flatMap(\.citedRules) + (app?.citedRules ?? [])
    }

    /// The built-in presets, in matrix order: one file each in `Resources/presets/`, in the
    /// format users write (docs/presets/README.md), decoded once at first use; the number
    /// a file's name starts with is its column.
    public static let builtIn: [Preset] = {
        guard let folder = Bundle.module.url(forResource: "presets", withExtension: nil),
            let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path)
        else { fatalError("h5replay is installed without its presets resource") }
        do {
            return try names.filter { $0.hasSuffix(".json") }.sorted().flatMap { name in
                try PresetFile.load(Data(contentsOf: folder.appendingPathComponent(name)), file: "presets/\(name)")
            }
        } catch {
            fatalError("a built-in preset does not load: \(error)")
        }
    }()

    public static func named(_ name: String) -> Preset? { builtIn.first { $0.name == name } }

    /// The presets a name or a `*` glob selects (`capacitor*`), in matrix order.
    public static func matching(_ pattern: String, in presets: [Preset] = builtIn) -> [Preset] {
        presets.filter { Scenario.Override.glob(pattern, $0.name) }
    }

    /// The presets `NAME`, `GLOB`, `NAME@VERSION` or `GLOB@VERSION` selects, each at the
    /// release asked for, and a note for each version replayed as an older one. A glob
    /// with a version picks the framework presets it matches; empty when nothing matches.
    public static func selecting(_ pattern: String, in presets: [Preset] = builtIn) throws -> (presets: [Preset], notes: [String]) {
        guard let at = pattern.lastIndex(of: "@") else { return (matching(pattern, in: presets), []) }
        let namePart = String(pattern[..<at]), versionText = String(pattern[pattern.index(after: at)...])
        let matched = matching(namePart, in: presets)
        let glob = namePart.contains("*")
        guard !matched.isEmpty else { return ([], []) }
        guard let version = SemanticVersion(versionText) else { throw VersionRequest.malformed(versionText, preset: matched[0].release?.baseName ?? namePart) }
        var out: [Preset] = [], notes: [String] = []
        for preset in matched where !glob || preset.release != nil {
            let (versioned, note) = try preset.at(version, typed: glob ? nil : pattern)
            out.append(versioned)
            if let note { notes.append(note) }
        }
        if out.isEmpty { throw VersionRequest.noFramework(preset: namePart) }
        return (out, notes)
    }
}

/// Composes a preset's mitigations in the order written.
@resultBuilder
public enum MitigationList {
    public static func buildExpression(_ mitigation: any Mitigation) -> [any Mitigation] { [mitigation] }
    public static func buildBlock(_ parts: [any Mitigation]...) -> [any Mitigation] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [any Mitigation]?) -> [any Mitigation] { part ?? [] }
    public static func buildEither(first: [any Mitigation]) -> [any Mitigation] { first }
    public static func buildEither(second: [any Mitigation]) -> [any Mitigation] { second }
}
