import Foundation

/// What a rule's truth depends on: iOS, or the framework whose code does the intercepting.
/// The raw values are the names `rules.json` and `--preset NAME@VERSION` use.
public enum Component: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    case ios
    case capacitor
    case flutterInAppWebView = "flutter_inappwebview"
    case cordovaIOS = "cordova-ios"
    case ionicWebView = "cordova-plugin-ionic-webview"
    case reactNativeWebView = "react-native-webview"
    case tauri
    case kkjsbridge

    public static func < (a: Component, b: Component) -> Bool { a.rawValue < b.rawValue }
}

/// A release number as semver orders them: `7.4.3`, `6.2.0-beta.1`, `18.2`.
public struct SemanticVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var major: Int
    public var minor: Int
    public var patch: Int
    /// Dot-separated pre-release identifiers (`beta.1`), empty for a release.
    public var prerelease: [String]

    public init(_ major: Int, _ minor: Int = 0, _ patch: Int = 0, prerelease: [String] = []) {
        self.major = major
        self.minor = minor
        self.patch = patch
        self.prerelease = prerelease
    }

    /// Parses `7.4.3`, `v7.4.3`, `6.2.0-beta.1`; nil for anything else (`7.4` too: see
    /// `Partial` for ranges, `IOSVersion` for iOS).
    public init?(_ text: String) {
        guard let partial = Partial(text), let minor = partial.minor, let patch = partial.patch else { return nil }
        self.init(partial.major, minor, patch, prerelease: partial.prerelease)
    }

    public var description: String {
        "\(major).\(minor).\(patch)" + (prerelease.isEmpty ? "" : "-" + prerelease.joined(separator: "."))
    }

    /// semver 2.0.0, section 11: a pre-release sorts before its release; identifiers
    /// compare numerically when both are numbers, as text otherwise.
    public static func < (a: SemanticVersion, b: SemanticVersion) -> Bool {
        if (a.major, a.minor, a.patch) != (b.major, b.minor, b.patch) { return (a.major, a.minor, a.patch) < (b.major, b.minor, b.patch) }
        if a.prerelease.isEmpty || b.prerelease.isEmpty { return !a.prerelease.isEmpty && b.prerelease.isEmpty }
        for (x, y) in zip(a.prerelease, b.prerelease) where x != y {
            switch (Int(x), Int(y)) {
            case let (i?, j?): return i < j
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return x < y
            }
        }
        return a.prerelease.count < b.prerelease.count
    }

    /// A version as written in a range, where `7` and `7.4` leave parts open (`7.x`).
    struct Partial {
        var major: Int
        var minor: Int?
        var patch: Int?
        var prerelease: [String] = []

        init?(_ text: String) {
            var rest = Substring(text)
            if rest.first == "v" || rest.first == "=" { rest = rest.dropFirst() }
            var pre: [String] = []
            if let dash = rest.firstIndex(of: "-") {
                pre = rest[rest.index(after: dash)...].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
                guard !pre.isEmpty, pre.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber } }) else { return nil }
                rest = rest[..<dash]
            }
            let parts = rest.split(separator: ".", omittingEmptySubsequences: false)
            guard (1...3).contains(parts.count) else { return nil }
            func number(_ i: Int) -> Int?? {
                guard i < parts.count else { return .some(nil) }
                if ["x", "X", "*"].contains(parts[i]) { return .some(nil) }
                guard !parts[i].isEmpty, parts[i].allSatisfy(\.isASCII), let n = Int(parts[i]), n >= 0 else { return nil }
                return .some(n)
            }
            guard let major = number(0), let major, let minor = number(1), let patch = number(2) else { return nil }
            if minor == nil, patch != nil { return nil }
            self.major = major
            self.minor = minor
            self.patch = patch
            self.prerelease = pre
        }

        var floor: SemanticVersion { SemanticVersion(major, minor ?? 0, patch ?? 0, prerelease: prerelease) }
        /// The first version past every one this names: `7` -> 8.0.0, `7.4` -> 7.5.0.
        var ceiling: SemanticVersion? {
            if minor == nil { return SemanticVersion(major + 1) }
            if patch == nil { return SemanticVersion(major, minor! + 1) }
            return nil
        }
    }
}

/// A set of versions in npm's range syntax (node-semver): comparators joined by spaces
/// hold together, sets joined by `||` are alternatives; `1.2.3 - 2.3.4`, `^1.2.3`,
/// `~1.2.3` and `7.x` as npm reads them. `*` or an empty range is every version.
public struct VersionRange: Sendable, Hashable, CustomStringConvertible {
    struct Comparator: Sendable, Hashable {
        enum Operator: String, Sendable { case less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">=", equal = "=" }
        var op: Operator
        var version: SemanticVersion

        func admits(_ v: SemanticVersion) -> Bool {
            switch op {
            case .less: return v < version
            case .lessOrEqual: return v <= version
            case .greater: return v > version
            case .greaterOrEqual: return v >= version
            case .equal: return v == version
            }
        }
    }

    /// The text as written in rules.json.
    public let text: String
    private let alternatives: [[Comparator]]

    public init?(_ text: String) {
        var alternatives: [[Comparator]] = []
        for set in text.components(separatedBy: "||") {
            guard let comparators = Self.parseSet(set) else { return nil }
            alternatives.append(comparators)
        }
        self.text = text.trimmingCharacters(in: .whitespaces)
        self.alternatives = alternatives
    }

    public var description: String { text }

    public func contains(_ version: SemanticVersion) -> Bool {
        alternatives.contains { $0.allSatisfy { $0.admits(version) } }
    }

    /// Whether the range bounds versions from below, from above: each such bound needs
    /// its source in rules.json.
    public var bounds: (lower: Bool, upper: Bool) {
        let all = alternatives.flatMap { $0 }
        return (all.contains { [.greater, .greaterOrEqual, .equal].contains($0.op) }, all.contains { [.less, .lessOrEqual, .equal].contains($0.op) })
    }

    private static func parseSet(_ set: String) -> [Comparator]? {
        var words = set.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        // `>= 1.2.3`: an operator apart from its version.
        var joined: [String] = []
        while !words.isEmpty {
            let word = words.removeFirst()
            if ["<", "<=", ">", ">=", "="].contains(word), !words.isEmpty { joined.append(word + words.removeFirst()) } else { joined.append(word) }
        }
        if joined.count == 3, joined[1] == "-" {
            guard let from = SemanticVersion.Partial(joined[0]), let to = SemanticVersion.Partial(joined[2]) else { return nil }
            return [Comparator(op: .greaterOrEqual, version: from.floor)] + (to.ceiling.map { [Comparator(op: .less, version: $0)] } ?? [Comparator(op: .lessOrEqual, version: to.floor)])
        }
        var out: [Comparator] = []
        for word in joined {
            guard let parsed = parseComparator(word) else { return nil }
            out += parsed
        }
        return out
    }

    private static func parseComparator(_ word: String) -> [Comparator]? {
        if word == "*" || word == "x" || word == "X" { return [] }
        for op in ["<=", ">=", "<", ">", "=", "^", "~"] where word.hasPrefix(op) {
            guard let v = SemanticVersion.Partial(String(word.dropFirst(op.count))) else { return nil }
            switch op {
            case "<": return [Comparator(op: .less, version: v.floor)]
            case "<=": return [v.ceiling.map { Comparator(op: .less, version: $0) } ?? Comparator(op: .lessOrEqual, version: v.floor)]
            case ">": return [v.ceiling.map { Comparator(op: .greaterOrEqual, version: $0) } ?? Comparator(op: .greater, version: v.floor)]
            case ">=": return [Comparator(op: .greaterOrEqual, version: v.floor)]
            case "^": return [Comparator(op: .greaterOrEqual, version: v.floor), Comparator(op: .less, version: caretCeiling(v))]
            case "~": return [Comparator(op: .greaterOrEqual, version: v.floor), Comparator(op: .less, version: v.minor == nil ? SemanticVersion(v.major + 1) : SemanticVersion(v.major, v.minor! + 1))]
            default: return exact(v)
            }
        }
        guard let v = SemanticVersion.Partial(word) else { return nil }
        return exact(v)
    }

    private static func exact(_ v: SemanticVersion.Partial) -> [Comparator] {
        guard let ceiling = v.ceiling else { return [Comparator(op: .equal, version: v.floor)] }
        return [Comparator(op: .greaterOrEqual, version: v.floor), Comparator(op: .less, version: ceiling)]
    }

    /// `^`: changes that do not modify the left-most non-zero part.
    private static func caretCeiling(_ v: SemanticVersion.Partial) -> SemanticVersion {
        if v.major > 0 || v.minor == nil { return SemanticVersion(v.major + 1) }
        if v.minor! > 0 || v.patch == nil { return SemanticVersion(0, v.minor! + 1) }
        return SemanticVersion(0, 0, v.patch! + 1)
    }
}

/// The releases of one component the model speaks for, from rules.json's `components`.
public struct Coverage: Sendable, Hashable, Codable {
    /// The oldest release whose code the model was read against.
    public var oldest: String
    /// The newest: a preset without a version replays as this release.
    public var newest: String
    /// The releases where the model's facts were read or change, in order.
    public var releases: [String]
    /// Where the releases were read.
    public var source: String

    public var oldestVersion: SemanticVersion { Self.version(oldest) }
    public var newestVersion: SemanticVersion { Self.version(newest) }

    /// A release as semver: iOS's `18.2` is 18.2.0.
    static func version(_ text: String) -> SemanticVersion {
        guard let partial = SemanticVersion.Partial(text) else { preconditionFailure("rules.json names release \(text), which does not parse") }
        return partial.floor
    }
}

/// A rule's history: where it starts and stops holding, per component, each bound with
/// the release, commit or change that moved it.
public struct RuleVersions: Sendable, Hashable {
    public struct Bound: Sendable, Hashable, Codable {
        /// Where the behaviour starts: the release, commit or PR.
        public var from: String?
        /// Where it stops.
        public var until: String?
    }

    public var ranges: [Component: VersionRange]
    public var sources: [Component: Bound]

    public init(ranges: [Component: VersionRange], sources: [Component: Bound]) {
        self.ranges = ranges
        self.sources = sources
    }
}

/// A framework release a preset replays, with the rules it suspends (worked out once).
public struct FrameworkRelease: Sendable, Hashable {
    public var component: Component
    public var version: SemanticVersion
    /// The rules it suspends, as bits over `RuleCatalog.boundedRules`.
    public var mask: UInt64
    /// Its place among the releases seen, which a profile holds instead of the release.
    public var index: Int

    public init(_ component: Component, _ version: SemanticVersion) {
        self.component = component
        self.version = version
        self.mask = RuleCatalog.bundled.suspensionMask(component, at: version)
        self.index = 0
        self.index = Self.seen.index(of: self)
    }

    /// Every release a preset replayed, each once: a few per run.
    static let seen = Seen()
    final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var releases: [FrameworkRelease] = []
        func index(of release: FrameworkRelease) -> Int {
            lock.withLock {
                if let i = releases.firstIndex(where: { $0.component == release.component && $0.version == release.version }) { return i }
                releases.append(release)
                return releases.count - 1
            }
        }
        func release(at index: Int) -> FrameworkRelease? { lock.withLock { index < releases.count ? releases[index] : nil } }
    }
}

/// The versions one column of a run replays: iOS, and the framework its preset speaks
/// for at the release the run asked for or the newest known.
public struct RunVersions: Sendable, Hashable {
    public var ios: IOSVersion
    public var framework: (component: Component, version: SemanticVersion)?

    public init(ios: IOSVersion, framework: (component: Component, version: SemanticVersion)? = nil) {
        self.ios = ios
        self.framework = framework
    }

    public func version(of component: Component) -> SemanticVersion? {
        if component == .ios { return SemanticVersion(ios.major, ios.minor) }
        return framework.flatMap { $0.component == component ? $0.version : nil }
    }

    public static func == (a: RunVersions, b: RunVersions) -> Bool {
        a.ios == b.ios && a.framework?.component == b.framework?.component && a.framework?.version == b.framework?.version
    }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ios)
        hasher.combine(framework?.component)
        hasher.combine(framework?.version)
    }
}
