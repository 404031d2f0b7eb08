import Foundation

// A strategy or mitigation object as its preset file wrote it, kept beside the built value
// so that advice (issue 70) can change one option and write the object back: the snippet a
// person pastes over the one in their file.

/// A JSON value as a preset file writes it.
public enum WrittenValue: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([WrittenValue])
    case object([String: WrittenValue])

    public init(from decoder: any Decoder) throws {
        if var list = try? decoder.unkeyedContainer() {
            var out: [WrittenValue] = []
            while !list.isAtEnd { out.append(try list.decode(WrittenValue.self)) }
            self = .array(out)
        } else if let object = try? decoder.container(keyedBy: ConfigKey.self) {
            var out: [String: WrittenValue] = [:]
            for key in object.allKeys { out[key.stringValue] = try object.decode(WrittenValue.self, forKey: key) }
            self = .object(out)
        } else {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() {
                self = .null
            } else if let b = try? single.decode(Bool.self) {
                self = .bool(b)
            } else if let n = try? single.decode(Double.self) {
                self = .number(n)
            } else {
                self = .string(try single.decode(String.self))
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var single = encoder.singleValueContainer()
        switch self {
        case .null: try single.encodeNil()
        case .bool(let b): try single.encode(b)
        case .number(let n): try single.encode(n)
        case .string(let s): try single.encode(s)
        case .array(let a): try single.encode(a)
        case .object(let o): try single.encode(o)
        }
    }

    /// Parses JSON text; nil when it is not JSON.
    public init?(json text: String) {
        guard let value = try? JSONDecoder().decode(WrittenValue.self, from: Data(text.utf8)) else { return nil }
        self = value
    }

    /// The value as a preset file writes it: `{"kind": "body-bridge", "covers": ["xhr", "fetch"]}`,
    /// `kind` first, then the other keys in order.
    public var text: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n): return n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)
        case .string(let s): return Self.quoted(s)
        case .array(let a): return "[" + a.map(\.text).joined(separator: ", ") + "]"
        case .object(let o):
            let keys = o.keys.sorted { ($0 == "kind" ? 0 : 1, $0) < ($1 == "kind" ? 0 : 1, $1) }
            return "{" + keys.map { "\(Self.quoted($0)): \(o[$0]!.text)" }.joined(separator: ", ") + "}"
        }
    }

    static func quoted(_ s: String) -> String {
        // Most strings need no escape: quoted as they are, without an encoder for each
        // (the advice writes every candidate's object as text).
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 >= 0x7F }) { return "\"" + s + "\"" }
        let data = (try? JSONEncoder().encode(s)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\\/", with: "/")
    }

    /// The object's value at `key`, nil when this is not an object or lacks it.
    public subscript(key: String) -> WrittenValue? {
        guard case .object(let o) = self else { return nil }
        return o[key]
    }

    /// This object with `key` set to `value`.
    public func setting(_ key: String, to value: WrittenValue) -> WrittenValue {
        guard case .object(var o) = self else { return self }
        o[key] = value
        return .object(o)
    }
}

/// A preset's strategy and mitigation objects as its file wrote them, in order.
public struct WrittenParts: Sendable, Hashable {
    public var strategy: WrittenValue
    public var mitigations: [WrittenValue]

    public init(strategy: WrittenValue, mitigations: [WrittenValue]) {
        self.strategy = strategy
        self.mitigations = mitigations
    }
}

/// One option of a kind that a change may set to counter a rule (advice, issue 70): its
/// key, what the kind does when the key is left out, the values that counter the rules,
/// each as a preset file writes it, and the rules whose outcome it changes.
public struct OptionChoice: Sendable, Hashable {
    public let key: String
    public let defaultValue: WrittenValue
    public let counters: [WrittenValue]
    public let rules: [RuleID]

    /// `OptionChoice("stripsId", default: "false", counters: ["true"], rules: ["B2"])`.
    public init(_ key: String, default defaultValue: String, counters: [String], rules: [RuleID]) {
        self.key = key
        self.defaultValue = WrittenValue(json: defaultValue) ?? .null
        self.counters = counters.compactMap { WrittenValue(json: $0) }
        self.rules = rules
    }
}
