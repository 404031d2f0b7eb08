import Crypto
import Foundation

extension Data {
    /// Lowercase hex SHA-256, the key of the content-addressed body store.
    public var sha256Hex: String { SHA256.hash(data: self).hexString }

    /// Lowercase hex MD5: what offline-package resource maps name a file by (seed 004).
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

    private static let emptySHA256 = Data().sha256Hex
    public static let empty = BodyFingerprint(Data())
    public var isEmpty: Bool { length == 0 }
}

/// SHA-256 over data given in pieces, for files too large to hold at once.
public struct StreamingSHA256 {
    var hasher = SHA256()

    public init() {}

    public mutating func update(_ data: Data) { hasher.update(data: data) }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) { hasher.update(bufferPointer: bytes) }

    public func finalizeHex() -> String { hasher.finalize().hexString }
}
