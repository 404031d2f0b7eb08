import Crypto
import Foundation

extension Data {
    /// Lowercase hex SHA-256, the key of the content-addressed body store.
    public var sha256Hex: String {
        let digest = SHA256.hash(data: self)
        var out = ""
        out.reserveCapacity(64)
        let hex: [Character] = Array("0123456789abcdef")
        for byte in digest {
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 0x0f)])
        }
        return out
    }
}

/// Length and SHA-256 of a body: how findings name bodies without quoting them.
public struct BodyFingerprint: Sendable, Hashable, Codable {
    public var length: Int
    public var sha256: String

    public init(_ data: Data) {
        self.length = data.count
        self.sha256 = data.sha256Hex
    }

    public static let empty = BodyFingerprint(Data())
    public var isEmpty: Bool { length == 0 }
}

/// SHA-256 over data given in pieces, for files too large to hold at once.
public struct StreamingSHA256 {
    var hasher = SHA256()

    public init() {}

    public mutating func update(_ data: Data) { hasher.update(data: data) }

    public func finalizeHex() -> String {
        hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }
}
