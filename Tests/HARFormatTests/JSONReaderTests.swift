import Foundation
import Testing
@testable import HARFormat

/// The HAR importer's JSON reader against Foundation's JSONSerialization: the same values
/// for what RFC 8259 accepts, a refusal with a place for what it does not.
@Suite("JSON reader")
struct JSONReaderTests {
    /// JSONValue as Foundation-comparable plain values.
    static func plain(_ v: JSONValue) -> AnyHashable {
        switch v {
        case .null: return "<null>"
        case .bool(let b): return b ? "<true>" : "<false>"
        case .number(let n): return n
        case .string(let s): return "s:" + s
        case .array(let items): return items.map(plain)
        case .object(let o):
            var d: [String: AnyHashable] = [:]
            for (k, v) in zip(o.keys, o.values) { d[k] = plain(v) }
            return d
        }
    }

    static func plain(foundation v: Any) -> AnyHashable {
        switch v {
        case is NSNull: return "<null>"
        case let s as String: return "s:" + s
        case let n as NSNumber:
            if String(cString: n.objCType) == "c" { return n.boolValue ? "<true>" : "<false>" }
            return n.doubleValue
        case let a as [Any]: return a.map { plain(foundation: $0) }
        case let d as [String: Any]: return d.mapValues { plain(foundation: $0) }
        default: return "?"
        }
    }

    static func read(_ text: String) throws -> JSONValue {
        var bytes = Array(text.utf8)
        return try bytes.withUnsafeMutableBufferPointer { try JSONReader.parse(UnsafeBufferPointer($0)) }
    }

    static let accepted = [
        #"{}"#, #"[]"#, #"0"#, #"-0"#, #"1.5"#, #"-12.25e3"#, #"1E-7"#, #"123456789012345678901234567890"#,
        #"0.1"#, #"3.141592653589793"#, #"1e308"#, #"5e-324"#, #"[1,2.5,-3,4e2]"#, #"  {"a" : [ true , false , null ] }  "#,
        #""plain""#, #""esc \" \\ \/ \b \f \n \r \t""#, #""\u00e9\u4e2d\uD83D\uDE00""#, #""café ☕ 😀""#,
        #"{"a":1,"a":2}"#, #"{"nested":{"deeper":[{"x":[[]]}]}}"#, "\"tab\\tinside\"",
        #"{"log":{"entries":[{"time":12.5,"request":{"method":"GET"}}]}}"#,
    ]

    @Test("what RFC 8259 accepts reads as JSONSerialization reads it", arguments: accepted)
    func acceptsLikeFoundation(_ text: String) throws {
        let ours = Self.plain(try Self.read(text))
        let theirs = Self.plain(foundation: try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]))
        #expect(ours == theirs, "\(text)")
    }

    static let refused: [(String, Int)] = [
        ("", 0), ("{", 1), (#"{"a"}"#, 4), (#"{"a":}"#, 5), ("[1,]", 3), ("[1 2]", 3), ("01", 0), ("1.", 2), ("-", 1),
        ("1e", 2), (#""unterminated"#, 13), ("\"ctl\u{01}\"", 4), (#""\x""#, 2), (#""\u12G4""#, 5), ("tru", 0), ("nul", 0),
        ("{} {}", 3), (#"{'a':1}"#, 1), ("[NaN]", 1), (String(repeating: "[", count: 600), 512),
    ]

    @Test("what RFC 8259 refuses is refused, with the byte where it went wrong", arguments: refused)
    func refuses(_ text: String, _ offset: Int) {
        do {
            _ = try Self.read(text)
            Issue.record("\(text.debugDescription) was accepted")
        } catch let error as JSONSyntaxError {
            #expect(error.offset == offset, "\(text.debugDescription): \(error)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("a line and column name the place of an error")
    func place() throws {
        do {
            _ = try Self.read("{\n  \"a\": 1,\n  \"b\": tru\n}")
            Issue.record("accepted")
        } catch let error as JSONSyntaxError {
            #expect(error.line == 3 && error.column == 8, "\(error)")
        }
    }

    @Test("random documents read as JSONSerialization reads them")
    func randomDocuments() throws {
        var rng = SystemRandomNumberGenerator()
        func value(_ depth: Int) -> Any {
            switch Int.random(in: 0..<(depth > 3 ? 4 : 6), using: &rng) {
            case 0: return Int.random(in: -1_000_000...1_000_000, using: &rng)
            case 1: return Double(Int.random(in: -100_000...100_000, using: &rng)) / 1000
            case 2: return String((0..<Int.random(in: 0..<12, using: &rng)).map { _ in "aZ0 \"\\/\n\té中😀\u{01}".randomElement(using: &rng)! })
            case 3: return Bool.random(using: &rng)
            case 4: return (0..<Int.random(in: 0..<5, using: &rng)).map { _ in value(depth + 1) }
            default:
                var d: [String: Any] = [:]
                for k in 0..<Int.random(in: 0..<5, using: &rng) { d["k\(k)"] = value(depth + 1) }
                return d
            }
        }
        for _ in 0..<300 {
            let doc = ["v": value(0)]
            let data = try JSONSerialization.data(withJSONObject: doc)
            let text = String(decoding: data, as: UTF8.self)
            #expect(Self.plain(try Self.read(text)) == Self.plain(foundation: try JSONSerialization.jsonObject(with: data)), "\(text)")
        }
    }

    @Test("a member is found by name as a walk of every member finds it: the last when repeated, written with escapes or not, none when absent")
    func memberLookup() throws {
        // Names as written in the file, and what each decodes to.
        let pool: [(written: String, name: String)] = [
            ("a", "a"), ("b", "b"), ("ab", "ab"), ("ba", "ba"), ("request", "request"), ("response", "response"),
            ("name", "name"), ("value", "value"), ("", ""), ("é", "é"), (#"\u0061"#, "a"), (#"re\u0071uest"#, "request"),
            ("requesT", "requesT"), ("headersSize", "headersSize"), ("_fromCache", "_fromCache"), ("x", "x"), ("y", "y"),
        ]
        let keys: [StaticString] = ["a", "b", "ab", "ba", "request", "response", "name", "value", "", "é", "headersSize", "_fromCache", "missing", "z"]
        var state: UInt64 = 3
        func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
        var tokens: [JSONTape.Token] = []
        // An object of more names than its mask has bits, with one repeated past them.
        let wide: [(written: String, name: String)] = [("a", "a")] + (0..<100).map { ("n\($0)", "n\($0)") } + [("a", "a"), ("b", "b")]
        for round in 0..<3_000 {
            // Mostly plain names, as exporters write them; now and then an escape.
            let members = round == 0 ? wide : (0..<next(20)).map { _ in pool[next(next(4) == 0 ? pool.count : pool.count - 2)] }
            let text = "{" + members.enumerated().map { #""\#($1.written)": \#($0)"# }.joined(separator: ", ") + "}"
            var bytes = Array(text.utf8)
            try bytes.withUnsafeMutableBufferPointer { raw in
                let bytes = UnsafeBufferPointer(raw)
                try JSONReader.value(in: bytes, at: 0, into: &tokens)
                tokens.withUnsafeBufferPointer { tape in
                    let view = JSONView(tokens: tape, bytes: bytes)
                    for key in keys {
                        let expected = members.lastIndex { $0.name == key.description }
                        let found = view.member(0, key).map { Int(view.tokens[$0].number) }
                        #expect(found == expected, "round \(round): \(key) in \(text)")
                    }
                }
            }
        }
    }
}
