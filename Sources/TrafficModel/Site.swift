/// Registrable domains ("sites") for the third-party test of docs/model.md, "Request and body kinds", ITP,
/// SameSite, and the cookie jar's public-suffix guard (RFC 6265bis section 5.7 steps 5-6).
///
/// The public suffixes are the whole Public Suffix List, its private section included, as
/// WebKit and Chromium read it: `www.ynet.co.il` and `go.calcalist.co.il` are two sites, and
/// so are two apps on `github.io`.
public enum Site {
    /// The registrable domain of `host`: one label above its public suffix; an IP address,
    /// a single-label host or a public suffix is its own site.
    public static func of(host: String) -> String {
        var utf8 = host
        return utf8.withUTF8 { bytes in
            guard case .site(let start) = PublicSuffixList.shared.position(in: bytes), start > 0 else { return host }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start...]), as: UTF8.self)
        }
    }

    /// Whether `host` is itself a public suffix (`com`, `co.uk`, `github.io`, a single label).
    public static func isPublicSuffix(_ host: String) -> Bool {
        var utf8 = host
        return utf8.withUTF8 { PublicSuffixList.shared.position(in: $0) == .publicSuffix }
    }
}

/// The Public Suffix List's rules (`PublicSuffixRules.swift`, made by
/// `Tools/make-public-suffixes.py`), read once into one hash table over bytes.
///
/// Each key is a suffix of some rule, labels whole, hashed from its last byte leftwards:
/// a host's suffixes are then hashed in one pass from its end, each label adding to the
/// hash of the suffix to its right. A key's flags say whether it is a rule itself, the
/// parent of a wildcard rule (`ck` for `*.ck`), an exception (`www.ck` for `!www.ck`).
/// Every suffix of a rule is a key, so the walk stops at the first suffix that is not:
/// no longer rule can match past it. A host of a registrable domain is two lookups.
public struct PublicSuffixList: Sendable {
    /// The list compiled into h5replay.
    public static let shared = PublicSuffixList(rules: rules)

    struct Flags: OptionSet, Hashable {
        let rawValue: UInt8
        static let rule = Flags(rawValue: 1)
        static let wildcardParent = Flags(rawValue: 2)
        static let exception = Flags(rawValue: 4)
    }

    /// Open addressing, a power of two long: a slot's hash (0 when empty), its flags, and
    /// where its key's bytes sit in `keyBytes`, to confirm a hash match.
    private var hashes: [UInt64]
    private var flags: [Flags]
    private var keyStarts: [UInt32]
    private var keyLengths: [UInt16]
    private var keyBytes: [UInt8] = []
    private var mask: Int
    /// How many rules were read.
    public private(set) var count = 0

    /// Reads rules one per line as the generated file holds them; leading spaces and blank
    /// lines are skipped. The text's bytes are read in place, a line at a time: the table is
    /// built once per process, the first time a site is asked for.
    public init(rules text: String) {
        let all = Array(text.utf8)
        var lines = 0
        var inLine = false
        for byte in all {
            if byte == 0x0A { inLine = false } else if !inLine { inLine = true; lines += 1 }
        }
        var size = 1
        while size < lines * 4 { size <<= 1 }  // every rule's suffixes, at most half full
        hashes = Array(repeating: 0, count: size)
        flags = Array(repeating: [], count: size)
        keyStarts = Array(repeating: 0, count: size)
        keyLengths = Array(repeating: 0, count: size)
        mask = size - 1
        all.withUnsafeBufferPointer { all in
            var next = 0
            while next < all.count {
                var end = next
                while end < all.count && all[end] != 0x0A { end += 1 }
                var from = next
                next = end + 1
                while from < end && all[from] == 0x20 { from += 1 }
                guard from < end else { continue }
                count += 1
                var flag = Flags.rule
                if all[from] == 0x21 {  // "!"
                    from += 1
                    flag = .exception
                } else if end - from > 2, all[from] == 0x2A, all[from + 1] == 0x2E {  // "*."
                    from += 2
                    flag = .wildcardParent
                }
                let bytes = UnsafeBufferPointer(rebasing: all[from..<end])
                // The rule and, so the walk knows to go on, each shorter suffix of it.
                var hash = Self.seed
                var i = bytes.count
                while i > 0 {
                    i -= 1
                    if bytes[i] == 0x2E { insert(UnsafeBufferPointer(rebasing: bytes[(i + 1)...]), hash: hash, flags: []) }
                    hash = Self.step(hash, bytes[i])
                }
                insert(bytes, hash: hash, flags: flag)
            }
        }
    }

    static let seed: UInt64 = 0xcbf2_9ce4_8422_2325
    /// FNV-1a, one byte.
    @inline(__always) static func step(_ hash: UInt64, _ byte: UInt8) -> UInt64 { (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }

    private mutating func insert(_ key: UnsafeBufferPointer<UInt8>, hash: UInt64, flags flag: Flags) {
        let h = hash == 0 ? 1 : hash
        var slot = Int(truncatingIfNeeded: h) & mask
        while hashes[slot] != 0 {
            if hashes[slot] == h, matches(slot, key) {
                flags[slot].formUnion(flag)
                return
            }
            slot = (slot + 1) & mask
        }
        hashes[slot] = h
        flags[slot] = flag
        keyStarts[slot] = UInt32(keyBytes.count)
        keyLengths[slot] = UInt16(key.count)
        keyBytes.append(contentsOf: key)
    }

    private func matches(_ slot: Int, _ key: UnsafeBufferPointer<UInt8>) -> Bool {
        guard Int(keyLengths[slot]) == key.count else { return false }
        let start = Int(keyStarts[slot])
        return keyBytes.withUnsafeBufferPointer { all in
            UnsafeBufferPointer(rebasing: all[start..<(start + key.count)]).elementsEqual(key)
        }
    }

    /// The flags of a key, nil when it is none.
    private func lookup(_ key: UnsafeBufferPointer<UInt8>, hash: UInt64) -> Flags? {
        let h = hash == 0 ? 1 : hash
        var slot = Int(truncatingIfNeeded: h) & mask
        while hashes[slot] != 0 {
            if hashes[slot] == h, matches(slot, key) { return flags[slot] }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// Where a host's registrable domain starts, or why it has none.
    public enum Position: Equatable, Sendable {
        /// An IP address (a colon, or only digits and dots): no public suffix.
        case address
        /// The whole host is a public suffix.
        case publicSuffix
        /// The registrable domain (the label above the public suffix) starts at this byte.
        case site(Int)
    }

    /// The prevailing rule for a lowercase host: an exception when one matches, else the
    /// rule with the most labels, else the implicit `*`; and the label above it.
    public func position(in host: UnsafeBufferPointer<UInt8>) -> Position {
        var numeric = true
        for c in host {
            if c == 0x3A { return .address }
            if c != 0x2E, c < 48 || c > 57 { numeric = false }
        }
        if numeric { return .address }
        var suffixLabels = 1  // the implicit `*` rule
        var parentIsWildcard = false
        var labels = 0
        var hash = Self.seed
        var i = host.count
        // Each turn: the next label leftwards joins the suffix, then the suffix is looked up.
        walk: while true {
            if labels > 0 { hash = Self.step(hash, 0x2E) }  // the dot between
            while i > 0, host[i - 1] != 0x2E {
                i -= 1
                hash = Self.step(hash, host[i])
            }
            labels += 1
            guard let found = lookup(UnsafeBufferPointer(rebasing: host[i...]), hash: hash) else {
                if parentIsWildcard { suffixLabels = labels }
                break walk
            }
            if found.contains(.exception) {
                suffixLabels = labels - 1
                break walk
            }
            if found.contains(.rule) || parentIsWildcard { suffixLabels = labels }
            parentIsWildcard = found.contains(.wildcardParent)
            if i == 0 { break walk }
            i -= 1  // onto the dot
        }
        // The start of the label above the suffix: just after the suffix's leftmost dot.
        var dots = 0
        var j = host.count
        while j > 0 {
            j -= 1
            guard host[j] == 0x2E else { continue }
            dots += 1
            if dots == suffixLabels + 1 { return .site(j + 1) }
        }
        return dots == suffixLabels ? .site(0) : .publicSuffix
    }
}
