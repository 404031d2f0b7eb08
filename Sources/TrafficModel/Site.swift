/// Registrable domains ("sites") for the third-party test of BEHAVIOUR.md section 2, ITP,
/// SameSite, and the cookie jar's public-suffix guard (RFC 6265bis section 5.7 steps 5-6).
///
/// The public suffixes are the whole Public Suffix List, its private section included, as
/// WebKit and Chromium read it: `www.ynet.co.il` and `go.calcalist.co.il` are two sites, and
/// so are two apps on `github.io`.
public enum Site {
    /// The registrable domain of `host`: one label above its public suffix; an IP address,
    /// a single-label host or a public suffix is its own site.
    public static func of(host: String) -> String {
        guard case .site(let start) = PublicSuffixList.shared.position(in: host) else { return host }
        return start == host.startIndex ? host : String(host[start...])
    }

    /// Whether `host` is itself a public suffix (`com`, `co.uk`, `github.io`, a single label).
    public static func isPublicSuffix(_ host: String) -> Bool {
        if case .publicSuffix = PublicSuffixList.shared.position(in: host) { return true }
        return false
    }
}

/// The Public Suffix List's rules (`PublicSuffixRules.swift`, made by
/// `Tools/make-public-suffixes.py`), read once into one table.
///
/// Each key is a suffix of some rule, labels whole: its flags say whether it is a rule
/// itself, the parent of a wildcard rule (`ck` for `*.ck`), an exception (`www.ck` for
/// `!www.ck`). Every suffix of a rule is a key, so a host's suffixes are looked up from
/// its last label leftwards and the walk stops at the first that is not a key: no longer
/// rule can match past it. A host of a registrable domain is two lookups.
public struct PublicSuffixList: Sendable {
    /// The list compiled into h5replay.
    public static let shared = PublicSuffixList(rules: rules)

    struct Flags: OptionSet, Hashable {
        let rawValue: UInt8
        static let rule = Flags(rawValue: 1)
        static let wildcardParent = Flags(rawValue: 2)
        static let exception = Flags(rawValue: 4)
    }

    private let table: [Substring: Flags]
    /// How many rules were read.
    public let count: Int

    /// Reads rules one per line as the generated file holds them; blank lines are skipped.
    public init(rules text: String) {
        var table: [Substring: Flags] = [:]
        var count = 0
        for line in text.split(separator: "\n") {
            var rule = line.drop(while: { $0 == " " })
            guard !rule.isEmpty else { continue }
            count += 1
            var flag = Flags.rule
            if rule.hasPrefix("!") {
                rule = rule.dropFirst()
                flag = .exception
            } else if rule.hasPrefix("*.") {
                rule = rule.dropFirst(2)
                flag = .wildcardParent
            }
            table[rule, default: []].insert(flag)
            // Every shorter suffix is a key, so the walk knows to go on.
            var rest = rule
            while let dot = rest.firstIndex(of: ".") {
                rest = rest[rest.index(after: dot)...]
                if table[rest] == nil { table[rest] = [] }
            }
        }
        self.table = table
        self.count = count
    }

    /// Where a host's registrable domain starts, or why it has none.
    public enum Position: Equatable, Sendable {
        /// An IP address (a colon, or only digits and dots): no public suffix.
        case address
        /// The whole host is a public suffix.
        case publicSuffix
        /// The registrable domain (the label above the public suffix) starts here.
        case site(String.Index)
    }

    /// The prevailing rule for a lowercase `host`: an exception when one matches, else the
    /// rule with the most labels, else the implicit `*`; and the label above it.
    public func position(in host: String) -> Position {
        let utf8 = host.utf8
        var numeric = true
        for c in utf8 {
            if c == 0x3A { return .address }
            if c != 0x2E, c < 48 || c > 57 { numeric = false }
        }
        if numeric { return .address }
        var suffixLabels = 1  // the implicit `*` rule
        var parentIsWildcard = false
        var labels = 0
        var start = utf8.endIndex
        while true {
            // The next label leftwards: from the dot before `start` back to a dot or the start.
            var j = labels == 0 ? start : utf8.index(before: start)
            while j > utf8.startIndex, utf8[utf8.index(before: j)] != 0x2E { j = utf8.index(before: j) }
            start = j
            labels += 1
            guard let flags = table[Substring(utf8[start...])] else {
                if parentIsWildcard { suffixLabels = labels }
                break
            }
            if flags.contains(.exception) {
                suffixLabels = labels - 1
                break
            }
            if flags.contains(.rule) || parentIsWildcard { suffixLabels = labels }
            parentIsWildcard = flags.contains(.wildcardParent)
            if start == utf8.startIndex { break }
        }
        // The start of the label above the suffix: just after the suffix's leftmost dot.
        var dots = 0
        var i = utf8.endIndex
        while i > utf8.startIndex {
            i = utf8.index(before: i)
            guard utf8[i] == 0x2E else { continue }
            dots += 1
            if dots == suffixLabels + 1 { return .site(utf8.index(after: i)) }
        }
        return dots == suffixLabels ? .site(utf8.startIndex) : .publicSuffix
    }
}
