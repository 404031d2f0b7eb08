/// An iOS version as the model distinguishes them: 11.0, 11.3, 12 ... 18, 18.1, 26, 27.
public struct IOSVersion: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    public var major: Int
    public var minor: Int

    public init(_ major: Int, _ minor: Int = 0) {
        self.major = major
        self.minor = minor
    }

    /// Parses `17`, `17.0`, `11.3`.
    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), let major = Int(parts[0]) else { return nil }
        let minor = parts.count > 1 ? Int(parts[1]) : 0
        guard let minor else { return nil }
        self.init(major, minor)
    }

    public static func < (a: IOSVersion, b: IOSVersion) -> Bool { (a.major, a.minor) < (b.major, b.minor) }
    public var description: String { minor == 0 && major != 11 ? "\(major)" : "\(major).\(minor)" }

    /// The releases the model names (rules.json's `components.ios.releases`): each major
    /// from 11, and the point releases where a rule starts or stops within one (11.3, 18.1).
    public static let supported: [IOSVersion] = (RuleCatalog.bundled.components[.ios]?.releases ?? []).compactMap(IOSVersion.init)
    /// The newest release the model knows: the default.
    public static let newest: IOSVersion = supported.max() ?? IOSVersion(18)

    /// Whether the model speaks for this release: a named one, or a point release of a
    /// named major (18.2, 26.1), which each rule's range judges as written.
    public var isKnown: Bool {
        Self.supported.contains(self) || (Self.supported.contains { $0.major == major } && minor < 10)
    }
}

/// The platform facts a replay depends on (docs/model.md, "Profiles and versions").
public struct Profile: Sendable, Hashable {
    public var ios: IOSVersion {
        didSet { iosSuspended = Self.iosMask(ios) }
    }
    /// The rules the iOS version suspends, and those the framework release does, as bits
    /// over `RuleCatalog.boundedRules`: a profile is copied into every request's context,
    /// and plain bits cost nothing to copy where arrays cost a retain each.
    private var iosSuspended: UInt64
    private var frameworkSuspended: UInt64 = 0
    /// The framework release replayed, as its index among those `replaying(_:)` has seen
    /// (plain bits too); -1 for none.
    private var releaseIndex = -1
    /// The framework release the preset replays (`capacitor` 7.4.2), nil for an app's own
    /// interception; `replaying(_:)` sets it with the rules it suspends.
    public var framework: (component: Component, version: SemanticVersion)? {
        releaseIndex < 0 ? nil : FrameworkRelease.seen.release(at: releaseIndex).map { ($0.component, $0.version) }
    }
    /// The rules that do not hold at these versions (rules.json's `versions`): a rule
    /// here does not act.
    public var suspended: [RuleID] {
        let mask = iosSuspended | frameworkSuspended
        return Self.bounded.indices.filter { mask & (1 << $0) != 0 }.map { Self.bounded[$0] }
    }

    fileprivate static let bounded = RuleCatalog.bundled.boundedRules
    private static let newestMask = RuleCatalog.bundled.suspensionMask(.ios, at: SemanticVersion(IOSVersion.newest.major, IOSVersion.newest.minor))
    private static func iosMask(_ ios: IOSVersion) -> UInt64 {
        ios == .newest ? newestMask : RuleCatalog.bundled.suspensionMask(.ios, at: SemanticVersion(ios.major, ios.minor))
    }
    public var simulator: Bool
    /// J1: how long an added or changed cookie takes to reach the other jar, seconds.
    public var jarSyncDelay: Double
    /// J2: how long a deletion takes to reach the other jar, seconds.
    public var jarDeletionDelay: Double
    /// J3: how long a `document.cookie` write takes to reach NativeJar; nil: never.
    public var scriptWriteDelay: Double?
    /// C7: how long `WKHTTPCookieStore.setCookie` takes to complete, seconds.
    public var cookieStoreSyncDelay: Double
    /// C8: how long an asynchronous `document.cookie` setter hook takes to reach NativeJar.
    public var cookieSetterHookDelay: Double
    /// N4: Intelligent Tracking Prevention (from iOS 14).
    public var itp: Bool

    /// The profile for an iOS version on a device or the simulator, with the latencies
    /// the engineering articles report.
    public init(ios: IOSVersion = .newest, simulator: Bool = false) {
        self.ios = ios
        self.simulator = simulator
        self.jarSyncDelay = 1.0
        self.jarDeletionDelay = 10.0
        self.scriptWriteDelay = simulator ? nil : 1.0
        self.cookieStoreSyncDelay = 0.05
        self.cookieSetterHookDelay = 0.01
        self.iosSuspended = Self.iosMask(ios)
        self.itp = true
        self.itp = holds(Self.n4)
    }

    /// N4 as `init` asks it, for every profile a replay makes.
    static let n4 = Bounded("N4")

    /// This profile replaying a framework release, with the rules that release suspends.
    public func replaying(_ release: FrameworkRelease) -> Profile {
        var p = self
        p.releaseIndex = release.index
        p.frameworkSuspended = release.mask
        return p
    }

    /// The versions this profile replays.
    public var versions: RunVersions { RunVersions(ios: ios, framework: framework) }

    /// Whether a version-bounded rule holds at this profile's versions: a site that
    /// applies one asks first.
    public func holds(_ rule: RuleID) -> Bool { holds(Self.Bounded(rule)) }

    /// A rule's bit in the profile's masks, looked up once: a site that asks for every
    /// request keeps one as a static (`Profile.Bounded("S1")`), so that asking is a mask
    /// test, not a parse of the id and a search of the bounded rules (54 instructions an
    /// evaluation, callgrind).
    public struct Bounded: Sendable {
        let bit: UInt64
        public init(_ rule: RuleID) {
            bit = Profile.bounded.firstIndex(of: rule).map { 1 << UInt64($0) } ?? 0
        }
    }

    @inline(__always) public func holds(_ rule: Bounded) -> Bool {
        (iosSuspended | frameworkSuspended) & rule.bit == 0
    }

    /// `iOS 18 device`, `iOS 11.0 simulator`.
    public var name: String { "iOS \(ios) \(simulator ? "simulator" : "device")" }
}
