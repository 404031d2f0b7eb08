import Foundation
import TrafficModel

// Configuration files (preset, profile, scenario, offline package and prefetch files) read
// through `Decodable`; every problem an `InputError` naming the file, the JSON path of the
// value at fault (`strategy.kind`, `[1].mitigations[0].covers`, `(file)` for the whole)
// and what to write instead.

/// A problem met while decoding, at a coding path not yet rendered: `ConfigDecoding`
/// turns it into an `InputError` once it knows the file.
struct ConfigProblem: Swift.Error {
    var path: [any CodingKey]
    var problem: String

    init(_ path: [any CodingKey], _ problem: String) {
        self.path = path
        self.problem = problem
    }

    /// A problem with one option, its path relative to the value being built.
    init(at key: String, _ problem: String) {
        self.init([ConfigKey(key)], problem)
    }

    /// The words for what the decoder expected where it found something else.
    init(_ error: DecodingError) {
        switch error {
        case .typeMismatch(let type, let context): self.init(context.codingPath, Self.expected(type))
        case .valueNotFound(let type, let context): self.init(context.codingPath, Self.expected(type))
        case .keyNotFound(let key, let context): self.init(context.codingPath + [key], "is required")
        case .dataCorrupted(let context): self.init(context.codingPath, context.codingPath.isEmpty ? "not valid JSON" : "not a valid value")
        @unknown default: self.init([], "cannot be read")
        }
    }

    static func expected(_ type: Any.Type) -> String {
        if type == String.self { return "expected a string" }
        if type == Bool.self { return "expected true or false" }
        if type == Double.self || type == Int.self { return "expected a number" }
        let name = String(describing: type)
        if name.hasPrefix("Array") { return "expected an array" }
        return "expected an object"
    }

    /// `[1].mitigations[0].covers`; `(file)` for the top.
    var place: String {
        var out = ""
        for key in path {
            if let index = key.intValue {
                out += "[\(index)]"
            } else if key.stringValue.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) {
                out += out.isEmpty ? key.stringValue : ".\(key.stringValue)"
            } else {
                out += "[\"\(key.stringValue)\"]"  // a URL or host name as a key
            }
        }
        return out.isEmpty ? "(file)" : out
    }
}

/// A JSON object's key, any name.
struct ConfigKey: CodingKey, Hashable {
    let stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// An array's index in a coding path.
struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init(intValue: Int) { self.intValue = intValue }
}

/// Decodes configuration files through `Decodable`, every problem an `InputError`.
enum ConfigDecoding {
    static func decode<T: Decodable>(_ type: T.Type, from data: Data, file: String) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch let problem as ConfigProblem {
            throw InputError(file: file, place: problem.place, problem: problem.problem)
        } catch let error as DecodingError {
            let problem = ConfigProblem(error)
            throw InputError(file: file, place: problem.place, problem: problem.problem)
        }
    }

    /// Refuses a key the object does not know, naming those it does.
    static func only(_ keys: [String], in container: KeyedDecodingContainer<ConfigKey>) throws {
        for key in container.allKeys where !keys.contains(key.stringValue) {
            throw ConfigProblem(container.codingPath + [key], "unknown key; known: \(keys.sorted().joined(separator: ", "))")
        }
    }

    /// "unknown strategy \"urlprotocl\" (did you mean urlprotocol?); known: ...".
    static func unknown(_ what: String, _ typed: String, known: [String]) -> String {
        let guess = NameSuggestion.closest(to: typed, among: known).map { " (did you mean \($0)?)" } ?? ""
        return "unknown \(what) \"\(typed)\"\(guess); known: \(known.joined(separator: ", "))"
    }
}

extension KeyedDecodingContainer where Key == ConfigKey {
    /// A string the object must have: "a string is required" when it is missing or not one.
    func requiredString(_ key: String) throws -> String {
        guard let value = (try? decodeIfPresent(String.self, forKey: ConfigKey(key))) ?? nil else {
            throw ConfigProblem(codingPath + [ConfigKey(key)], "a string is required")
        }
        return value
    }

    func optional<T: Decodable>(_ type: T.Type, _ key: String) throws -> T? {
        try decodeIfPresent(type, forKey: ConfigKey(key))
    }

    func has(_ key: String) -> Bool { contains(ConfigKey(key)) }

    /// The value at `key` when it is there and of the type, nil otherwise (the sidecar
    /// files pass over what they do not use).
    func lenient<T: Decodable>(_ type: T.Type, _ key: String) -> T? {
        (try? decodeIfPresent(type, forKey: ConfigKey(key))) ?? nil
    }

    /// A problem with the value at `key`.
    func problem(_ key: String, _ text: String) -> ConfigProblem {
        ConfigProblem(codingPath + [ConfigKey(key)], text)
    }
}

/// "Did you mean ...?": the known name nearest a mistyped one, when it is near enough to be
/// the one meant (an edit distance of at most a third of its length, or one that starts
/// with what was typed).
public enum NameSuggestion {
    public static func closest(to typed: String, among known: [String]) -> String? {
        let typed = typed.lowercased()
        let scored = known.map { ($0, distance(typed, $0.lowercased())) }.sorted { $0.1 < $1.1 }
        guard let best = scored.first else { return nil }
        if best.1 <= max(2, typed.count / 3) { return best.0 }
        return known.first { $0.lowercased().hasPrefix(typed) && typed.count >= 3 }
    }

    /// Levenshtein distance over characters.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var row = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let kept = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = kept
            }
        }
        return row[b.count]
    }
}
