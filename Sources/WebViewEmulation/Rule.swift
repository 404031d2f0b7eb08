import Foundation

/// A behaviour rule's id in rules.json: `P1`, `S5`, `J3`...
///
/// Held as bytes, not a `String`: transport plans, outcomes and findings carry many rule
/// ids, and a copy of a `String` is a call to retain it even when its bytes sit inline.
/// An id of up to 15 UTF-8 bytes (the catalogue's longest has five) is stored in place;
/// a longer one, from a hand-written preset file or database, is kept once in a table.
public struct RuleID: RawRepresentable, Sendable, Hashable, Codable, Comparable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// Bytes 0-7 of the id, first byte lowest.
    private var low: UInt64
    /// Bytes 8-14, and in the top byte the count; `Self.longTag` there when `low` is an
    /// index into `Self.long`.
    private var high: UInt64

    public var rawValue: String {
        if Int(high >> 56) == Self.longTag { return Self.long.id(at: Int(low)) }
        return withUTF8 { String(decoding: $0, as: UTF8.self) }
    }

    /// The id's UTF-8, read in place when it is stored in place: a store writes a rule
    /// list into a row without making a `String` of each id.
    public func withUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        let count = Int(high >> 56)
        if count == Self.longTag {
            var text = Self.long.id(at: Int(low))
            return try text.withUTF8(body)
        }
        let words = (low.littleEndian, high.littleEndian)
        return try withUnsafeBytes(of: words) { try body(UnsafeBufferPointer(rebasing: $0.bindMemory(to: UInt8.self)[..<count])) }
    }

    public init(rawValue: String) {
        var raw = rawValue
        (low, high) = raw.withUTF8 { Self.pack($0) }
    }
    public init(_ raw: String) { self.init(rawValue: raw) }
    public init(stringLiteral value: StaticString) {
        (low, high) = value.withUTF8Buffer { Self.pack($0) }
    }
    public init(from decoder: Decoder) throws { self.init(rawValue: try decoder.singleValueContainer().decode(String.self)) }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
    public var description: String { rawValue }

    /// Equal ids have equal words (an id is packed one way, a long one indexed once), so
    /// these compare and hash the words. Without them a `RawRepresentable` type takes the
    /// standard library's defaults, which build both ids' `rawValue` strings for every
    /// `==` and every hash: a transport plan's comparison, a rule table's lookup.
    public static func == (a: RuleID, b: RuleID) -> Bool { a.low == b.low && a.high == b.high }
    public static func != (a: RuleID, b: RuleID) -> Bool { !(a == b) }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(low)
        hasher.combine(high)
    }

    /// The id's two words, for a table that looks ids up without hashing a string.
    var words: (UInt64, UInt64) { (low, high) }

    /// Orders by family letter, then number: J1 < J3 < N1 < P1 < P4.
    public static func < (a: RuleID, b: RuleID) -> Bool {
        if let x = a.asciiParts, let y = b.asciiParts { return x.family != y.family ? x.family < y.family : x.number < y.number }
        let (fa, na) = a.parts, (fb, nb) = b.parts
        return fa != fb ? fa < fb : na < nb
    }

    /// `parts` read from the bytes, for an id of up to eight ASCII letters and then digits
    /// alone (every id of the catalogue): the letters big-endian in one word, so that words
    /// order as the letters do. Sorting a finding's rules went through `Character` for each
    /// letter, and cost the adviser more than hashing its findings.
    private var asciiParts: (family: UInt64, number: Int)? {
        withUTF8 { bytes in
            var family: UInt64 = 0, letters = 0
            while letters < bytes.count, (bytes[letters] | 0x20) >= UInt8(ascii: "a"), (bytes[letters] | 0x20) <= UInt8(ascii: "z") {
                guard letters < 8 else { return nil }
                family |= UInt64(bytes[letters]) << (56 - 8 * letters)
                letters += 1
            }
            let digits = bytes[letters...]
            guard !digits.isEmpty, digits.count < 19, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
            return (family, digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) })
        }
    }
    private var parts: (String, Int) {
        let raw = rawValue
        let letters = raw.prefix { $0.isLetter }
        return (String(letters), Int(raw.dropFirst(letters.count)) ?? 0)
    }

    private static let longTag = 0xFF
    private static func pack(_ bytes: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64) {
        guard bytes.count <= 15 else {
            return (UInt64(long.index(of: String(decoding: bytes, as: UTF8.self))), UInt64(longTag) << 56)
        }
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: UnsafeRawBufferPointer(bytes)) }
        return (UInt64(littleEndian: words.0), UInt64(littleEndian: words.1) | UInt64(bytes.count) << 56)
    }

    /// Ids too long to store in place, each once: equal ids get equal indexes.
    private static let long = LongIDs()
    private final class LongIDs: @unchecked Sendable {
        private let lock = NSLock()
        private var ids: [String] = []
        private var indexes: [String: Int] = [:]
        func index(of id: String) -> Int {
            lock.withLock {
                if let index = indexes[id] { return index }
                ids.append(id)
                indexes[id] = ids.count - 1
                return ids.count - 1
            }
        }
        func id(at index: Int) -> String { lock.withLock { ids[index] } }
    }
}

extension Array where Element == RuleID {
    /// Each rule once, in first-seen order. A finding cites a handful: a scan costs less
    /// than hashing each.
    public var uniqued: [RuleID] {
        var out: [RuleID] = []
        out.reserveCapacity(count)
        out.appendNew(self)
        return out
    }

    /// Appends each of `rules` not already in the list, in order.
    public mutating func appendNew(_ rules: [RuleID]) {
        for rule in rules where !contains(rule) { append(rule) }
    }

    /// Appends `rule` unless the list has it.
    public mutating func appendNew(_ rule: RuleID) {
        if !contains(rule) { append(rule) }
    }
}

/// How sure the model is of a rule (docs/model.md, "Confidence"), weakest first.
/// `measured`: a lab experiment saw a real WebKit engine do it (Tools/lab).
public enum Confidence: String, Sendable, Hashable, Codable, Comparable, CaseIterable {
    case folklore, inferred, reported, documented, source, measured

    public static func < (a: Confidence, b: Confidence) -> Bool { a.strength < b.strength }

    /// The order of `allCases`, weakest first.
    private var strength: Int {
        switch self {
        case .folklore: return 0
        case .inferred: return 1
        case .reported: return 2
        case .documented: return 3
        case .source: return 4
        case .measured: return 5
        }
    }
}

/// One rule of the behaviour model, as the rules data file states it.
public struct Rule: Sendable, Hashable, Codable {
    public var id: RuleID
    public var section: String
    public var statement: String
    /// A clause a QA engineer reads in a finding: "NSURLProtocol interception drops request bodies".
    public var summary: String
    public var confidence: Confidence
    public var source: String
    /// The finding codes this rule can produce.
    public var findings: [String]
    /// A measured rule: the path, from the repository's root, of the lab result that
    /// measures it first (`Tools/lab/results/ID.json`); `measurement` lists them all.
    public var experiment: String?
    /// What the lab measured in a real WebKit engine, when it did.
    public var measurement: Measurement?
    /// The releases the rule holds for, per component, in npm's range syntax
    /// (`{"capacitor": ">=4.8.2 <7.4.3"}`); nil for a rule true of every release covered.
    public var versions: [String: String]?
    /// Where each component's bounds come from: `from` the release, commit or PR where
    /// the behaviour starts, `until` where it stops.
    public var bounds: [String: RuleVersions.Bound]?
}

/// A rule measured in a real WebKit engine by the lab (Tools/lab): which engine, which
/// experiments (each the path of its result, `Tools/lab/results/ID.json`), whether the engine agreed,
/// and, when it did not or measured only part, why iOS may differ.
public struct Measurement: Sendable, Hashable, Codable {
    /// `WebKitGTK 2.50.6`.
    public var engine: String
    /// Paths from the repository's root, `Tools/lab/results/ID.json`.
    public var experiments: [String]
    public var agrees: Bool
    public var note: String?
    /// For a framework's own code run in the lab: the releases it ran, per component
    /// (`{"capacitor": "4.8.2, 5.7.8, ... 8.4.2"}`).
    public var versions: [String: String]?
}

/// The rules data file shipped in the package (`Resources/rules.json`).
public struct RuleCatalog: Sendable {
    public let version: Int
    public let rules: [Rule]
    /// The releases the model covers, per component.
    public let components: [Component: Coverage]
    /// Each version-bounded rule's ranges, parsed.
    public let histories: [RuleID: RuleVersions]
    /// The version-bounded rules, in order: a set of them is a bit mask over this list.
    public let boundedRules: [RuleID]
    private let byID: [RuleID: Rule]
    /// Each rule's confidence alone: every finding asks, and a rule is a large value to copy.
    private let confidenceByID: ConfidenceTable

    public init(rules: [Rule], version: Int = 1, components: [Component: Coverage] = [:]) throws {
        self.version = version
        self.rules = rules
        self.components = components
        self.histories = try Self.histories(of: rules)
        self.boundedRules = histories.keys.sorted()
        guard boundedRules.count <= 64 else { throw VersionError.malformedRange("more than 64 version-bounded rules", rule: nil) }
        self.byID = Dictionary(rules.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        self.confidenceByID = ConfidenceTable(byID.mapValues(\.confidence))
    }

    /// The catalog bundled with h5replay.
    public static let bundled: RuleCatalog = {
        guard let url = Bundle.module.url(forResource: "rules", withExtension: "json"),
            let data = try? Data(contentsOf: url)
        else { fatalError("h5replay is installed without its rules.json resource") }
        do {
            return try RuleCatalog(data: data)
        } catch {
            fatalError("the bundled rules.json does not parse: \(error)")
        }
    }()

    public init(data: Data) throws {
        struct File: Decodable {
            var version: Int
            var components: [String: Coverage]?
            var rules: [Rule]
        }
        let file = try JSONDecoder().decode(File.self, from: data)
        var components: [Component: Coverage] = [:]
        for (name, coverage) in file.components ?? [:] {
            guard let component = Component(rawValue: name) else { throw VersionError.unknownComponent(name, rule: nil) }
            for release in [coverage.oldest, coverage.newest] + coverage.releases where SemanticVersion.Partial(release) == nil {
                throw VersionError.malformedRange("\(name) release \(release)", rule: nil)
            }
            components[component] = coverage
        }
        try self.init(rules: file.rules, version: file.version, components: components)
    }

    /// What a rules file can get wrong about versions.
    public enum VersionError: Error, CustomStringConvertible {
        case unknownComponent(String, rule: RuleID?)
        case malformedRange(String, rule: RuleID?)

        public var description: String {
            switch self {
            case .unknownComponent(let name, let rule):
                return "\(rule.map { "rule \($0): " } ?? "")unknown component \(name); known: \(Component.allCases.map(\.rawValue).joined(separator: ", "))"
            case .malformedRange(let text, let rule):
                return "\(rule.map { "rule \($0): " } ?? "")\(text) is not a version range in npm's syntax"
            }
        }
    }

    private static func histories(of rules: [Rule]) throws -> [RuleID: RuleVersions] {
        var out: [RuleID: RuleVersions] = [:]
        for rule in rules {
            guard let versions = rule.versions else { continue }
            var ranges: [Component: VersionRange] = [:]
            var sources: [Component: RuleVersions.Bound] = [:]
            for (name, text) in versions {
                guard let component = Component(rawValue: name) else { throw VersionError.unknownComponent(name, rule: rule.id) }
                guard let range = VersionRange(text) else { throw VersionError.malformedRange("\(name) \"\(text)\"", rule: rule.id) }
                ranges[component] = range
                sources[component] = rule.bounds?[name]
            }
            out[rule.id] = RuleVersions(ranges: ranges, sources: sources)
        }
        return out
    }

    /// The rules that do not hold at these versions: a range for a component the run
    /// replays that leaves its version out. A rule bounded on a component the run does
    /// not replay (a Capacitor rule under a Cordova preset) cannot act anyway and holds.
    public func suspended(at versions: RunVersions) -> [RuleID] {
        histories.compactMap { id, history in
            history.ranges.contains { component, range in versions.version(of: component).map { !range.contains($0) } ?? false } ? id : nil
        }.sorted()
    }

    /// The rules bounded on `component` whose range leaves `version` out, as bits over
    /// `boundedRules`.
    public func suspensionMask(_ component: Component, at version: SemanticVersion) -> UInt64 {
        var mask: UInt64 = 0
        for (i, id) in boundedRules.enumerated() where histories[id]?.ranges[component].map({ !$0.contains(version) }) == true { mask |= 1 << i }
        return mask
    }

    /// Whether `version` is one the model covers for `component`: nil when it is, else
    /// what is wrong with it, naming the covered range.
    public func coverageProblem(_ component: Component, _ version: SemanticVersion) -> String? {
        guard let coverage = components[component] else { return "the model knows no releases of \(component.rawValue)" }
        if version < coverage.oldestVersion {
            return "\(component.rawValue) \(version) is older than the model covers (\(coverage.oldest) to \(coverage.newest))"
        }
        return nil
    }

    public subscript(id: RuleID) -> Rule? { byID[id] }

    /// The weakest confidence among `ids`: a finding is only as sure as its least sure rule.
    public func confidence(of ids: [RuleID]) -> Confidence {
        var weakest: Confidence?
        for id in ids {
            if let c = confidenceByID[id], weakest.map({ c < $0 }) ?? true { weakest = c }
        }
        return weakest ?? .inferred
    }

    /// Rule id to confidence, open addressing over the id's two words: a lookup is a
    /// multiply and a compare or two, where a dictionary hashes the id through SipHash.
    /// Every finding looks up each of its rules.
    struct ConfidenceTable: Sendable {
        private let keys: [(UInt64, UInt64)]
        private let values: [Confidence?]
        private let mask: Int

        init(_ entries: [RuleID: Confidence]) {
            var size = 8
            while size < entries.count * 2 { size *= 2 }
            let mask = size - 1
            var keys = Array(repeating: (UInt64(0), UInt64(0)), count: size)
            var values = [Confidence?](repeating: nil, count: size)
            for (id, confidence) in entries {
                var slot = Self.slot(id.words, mask)
                while values[slot] != nil { slot = (slot + 1) & mask }
                keys[slot] = id.words
                values[slot] = confidence
            }
            (self.keys, self.values, self.mask) = (keys, values, mask)
        }

        private static func slot(_ words: (UInt64, UInt64), _ mask: Int) -> Int {
            let mixed = (words.0 ^ (words.1 &* 0x9E37_79B9_7F4A_7C15)) &* 0xBF58_476D_1CE4_E5B9
            return Int(truncatingIfNeeded: mixed >> 32) & mask
        }

        subscript(id: RuleID) -> Confidence? {
            let words = id.words
            var slot = Self.slot(words, mask)
            while let value = values[slot] {
                if keys[slot] == words { return value }
                slot = (slot + 1) & mask
            }
            return nil
        }
    }
}
