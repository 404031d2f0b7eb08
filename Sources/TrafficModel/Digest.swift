import Crypto
import Foundation

extension Data {
    /// Lowercase hex SHA-256, the key of the content-addressed body store.
    public var sha256Hex: String { SHA256.hash(data: self).hexString }

    /// Lowercase hex MD5: what offline-package resource maps name a file by (the article iOS秒开H5实战总结 (2021-05-07)).
    public var md5Hex: String { Insecure.MD5.hash(data: self).map { String(format: "%02x", $0) }.joined() }
}

extension SHA256Digest {
    /// Lowercase hex, built in one buffer.
    var hexString: String {
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 64) { out in
            digits.withUTF8Buffer { hex in
                var k = 0
                for byte in self {
                    out[k] = hex[Int(byte >> 4)]
                    out[k + 1] = hex[Int(byte & 0x0F)]
                    k += 2
                }
            }
            return 64
        }
    }
}

/// Length and SHA-256 of a body: how findings name bodies without quoting them.
public struct BodyFingerprint: Sendable, Hashable, Codable {
    public var length: Int
    public var sha256: String

    public init(_ data: Data) {
        self.length = data.count
        // Most requests have no body: its hash is worked out once.
        self.sha256 = data.isEmpty ? Self.emptySHA256 : data.sha256Hex
    }

    /// A fingerprint worked out before, as the store keeps it.
    public init(length: Int, sha256: String) {
        self.length = length
        self.sha256 = sha256
    }

    private static let emptySHA256 = Data().sha256Hex
    public static let empty = BodyFingerprint(Data())
    public var isEmpty: Bool { length == 0 }
}

/// A body on its way to the store. `bytes` are the body itself, or, when `coding` is set,
/// the body as it crossed the wire, which that Content-Encoding value decodes to the body
/// `fingerprint` describes. A capture's text comes compressed, a fifth to a tenth of its
/// decoded size: the store keeps those bytes and decodes them when a recording is read.
public struct StoredBody: Sendable {
    public var bytes: Data
    public var coding: String?
    public var fingerprint: BodyFingerprint

    public init(_ bytes: Data, coding: String? = nil, fingerprint: BodyFingerprint) {
        self.bytes = bytes
        self.coding = coding
        self.fingerprint = fingerprint
    }
}

/// SHA-256 over data given in pieces, for files too large to hold at once.
public struct StreamingSHA256 {
    var hasher = SHA256()

    public init() {}

    public mutating func update(_ data: Data) { hasher.update(data: data) }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) { hasher.update(bufferPointer: bytes) }

    public func finalizeHex() -> String { hasher.finalize().hexString }
}

/// The fingerprints of bodies met before, for an import that hashes every body it stores.
///
/// A capture carries the same script, image or API answer many times over, and the store
/// keeps each body once, by its SHA-256. A body equal byte for byte to one met before takes
/// the fingerprint worked out the first time: comparing bytes runs at memory speed, where
/// SHA-256 runs at a tenth of it on a core without SHA instructions.
public struct RepeatedBodies {
    /// Bodies shorter than this are hashed every time: a block or two of SHA-256.
    static let smallest = RecentBodies<BodyFingerprint>.smallest
    /// Bytes sampled at each end and in the middle.
    static let sample = RecentBodies<BodyFingerprint>.sample

    private var recent: RecentBodies<BodyFingerprint>
    public var budget: Int { recent.budget }
    public var heldBytes: Int { recent.heldBytes }

    /// On the bench's capture, 4 MB of kept bodies finds all but 6 of the 17,921 repeats
    /// that unbounded room would (2 MB all but 14): a capture's repeated bodies are few and
    /// come back soon.
    public init(budget: Int = 4 << 20) {
        recent = RecentBodies(budget: budget)
    }

    /// `BodyFingerprint(body)`, reused when `body` was met before (`metBefore`).
    public mutating func fingerprint(of body: Data) -> (fingerprint: BodyFingerprint, metBefore: Bool) {
        guard recent.budget > 0, body.count >= Self.smallest else { return (BodyFingerprint(body), false) }
        let key = RecentBodies<BodyFingerprint>.key(body)
        if let fingerprint = recent.value(for: body, key: key) { return (fingerprint, true) }
        let fingerprint = BodyFingerprint(body)
        recent.keep(body, fingerprint, key: key)
        return (fingerprint, false)
    }

    static func key(_ body: Data) -> Int { RecentBodies<BodyFingerprint>.key(body) }
}

/// Bodies met lately, each with what was worked out from it (a fingerprint, a decoding),
/// found again by their bytes: by the length and a few sampled bytes, then compared byte
/// for byte, so a body never met before costs a lookup and a copy into the kept bodies. The
/// bytes kept are bounded by `budget`, the oldest let go first.
public struct RecentBodies<Value> {
    /// Bytes sampled at each end and in the middle.
    static var sample: Int { 64 }
    /// Bodies shorter than this are not worth keeping: working their value out again costs
    /// about as much as finding them.
    public static var smallest: Int { 256 }

    private struct Entry {
        var body: Data
        var value: Value
        /// The body's bytes and the value's, as counted against the budget.
        var cost: Int
    }

    public let budget: Int
    private var entries: [Int: Entry] = [:]
    /// Keys in the order their bodies were kept, oldest from `head`.
    private var order: [Int] = []
    private var head = 0
    public private(set) var heldBytes = 0

    public init(budget: Int) {
        self.budget = budget
    }

    /// The value kept with a body equal to `body` byte for byte, found under `key`
    /// (`Self.key(body)`).
    public func value(for body: some ContiguousBytes, key: Int) -> Value? {
        guard let entry = entries[key] else { return nil }
        let same = body.withUnsafeBytes { raw in
            entry.body.withUnsafeBytes { kept in raw.count == kept.count && (raw.isEmpty || memcmp(raw.baseAddress!, kept.baseAddress!, raw.count) == 0) }
        }
        return same ? entry.value : nil
    }

    /// Keeps a copy of `body` with `value` under `key`, when the pair costs at most a
    /// quarter of the budget; `valueBytes` is what the value holds besides (a decoded body).
    public mutating func keep(_ body: some ContiguousBytes, _ value: Value, key: Int, valueBytes: Int = 0) {
        // A copy of its own: the body may be a slice of a larger buffer, which keeping it
        // would keep whole.
        let copy = body.withUnsafeBytes { Data($0) }
        let cost = copy.count + valueBytes
        guard cost <= budget / 4 else { return }
        if let old = entries.updateValue(Entry(body: copy, value: value, cost: cost), forKey: key) { heldBytes -= old.cost }
        heldBytes += cost
        order.append(key)
        while heldBytes > budget, head < order.count {
            if let gone = entries.removeValue(forKey: order[head]) { heldBytes -= gone.cost }
            head += 1
        }
        if head > 4096, head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }

    /// The length, and the bytes at both ends and in the middle, mixed eight at a time
    /// (multiply, then fold the high bits down). Only ever a dictionary key in this process,
    /// and a body found under it is compared byte for byte: bodies that share a key cost a
    /// miss, never a wrong value. A seeded `Hasher` over the 192 bytes cost a capture's
    /// builder thread more than the lookup it served.
    public static func key(_ body: some ContiguousBytes) -> Int {
        body.withUnsafeBytes { raw in
            let n = raw.count, s = Self.sample
            var h = UInt64(truncatingIfNeeded: n) &* mixer
            guard n >= s else {
                mix(&h, raw)
                return Int(truncatingIfNeeded: h)
            }
            mix(&h, UnsafeRawBufferPointer(rebasing: raw[0..<s]))
            mix(&h, UnsafeRawBufferPointer(rebasing: raw[(n - s) / 2..<(n + s) / 2]))
            mix(&h, UnsafeRawBufferPointer(rebasing: raw[(n - s)...]))
            return Int(truncatingIfNeeded: h)
        }
    }

    private static var mixer: UInt64 { 0x9E37_79B9_7F4A_7C15 }

    /// Folds `bytes` into `h`, eight at a time, the last under eight one at a time.
    private static func mix(_ h: inout UInt64, _ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        var k = 0
        while k + 8 <= bytes.count {
            h = (h ^ base.loadUnaligned(fromByteOffset: k, as: UInt64.self)) &* mixer
            h ^= h >> 29
            k += 8
        }
        while k < bytes.count {
            h = (h ^ UInt64(bytes[k])) &* mixer
            k += 1
        }
        h ^= h >> 32
    }
}
