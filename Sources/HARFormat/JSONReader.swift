#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A JSON value as `JSONReader` reads it: no Foundation objects, objects kept as their
/// members in file order (a HAR object has a handful of keys; a scan beats hashing).
enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

struct JSONObject: Sendable {
    var keys: [String] = []
    var values: [JSONValue] = []

    /// The last member of that name, as JSON parsers commonly keep.
    subscript(key: String) -> JSONValue? {
        var i = keys.count - 1
        while i >= 0 {
            if keys[i] == key { return values[i] }
            i -= 1
        }
        return nil
    }
}

/// Why a JSON text did not read, and where.
struct JSONSyntaxError: Error, CustomStringConvertible {
    var problem: String
    /// Byte offset in the text.
    var offset: Int
    var line: Int
    var column: Int

    var description: String { "\(problem) at line \(line), column \(column) (byte \(offset))" }
}

/// A UTF-8 JSON reader over bytes (RFC 8259), for HAR files: one pass, strings decoded
/// straight from the bytes, numbers without a detour through text.
///
/// `forEachEntry` reads a HAR's `log.entries` one element at a time, handing each to the
/// caller before reading the next, so that what is held at once is one entry's values
/// rather than the whole file's.
struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var i = 0
    /// Nesting limit, against stack exhaustion on hostile input.
    static let maxDepth = 512
    var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Reads one whole JSON text.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws -> JSONValue {
        var reader = JSONReader(bytes)
        let value = try reader.value()
        try reader.end()
        return value
    }

    /// Reads a HAR document, calling `entry` with each element of `log.entries` in turn.
    /// Returns the root with `log.entries` left out, and whether it was there and an array.
    mutating func forEachEntry(_ entry: (Int, JSONValue) throws -> Void) throws -> (root: JSONValue, entries: EntriesShape) {
        skipSpace()
        guard peek == UInt8(ascii: "{") else { let v = try value(); try end(); return (v, .notAnObjectRoot) }
        var shape = EntriesShape.missing
        var root = JSONObject()
        try members({ reader, key in
            guard key == "log" else { return try reader.value() }
            reader.skipSpace()
            guard reader.peek == UInt8(ascii: "{") else { return try reader.value() }
            var log = JSONObject()
            try reader.members({ reader, key in
                guard key == "entries" else { return try reader.value() }
                reader.skipSpace()
                guard reader.peek == UInt8(ascii: "[") else {
                    let v = try reader.value()
                    shape = .notAnArray(v.typeName)
                    return v
                }
                shape = .array
                var index = 0
                try reader.elements { reader in
                    try entry(index, try reader.value())
                    index += 1
                }
                return .array([])
            }, store: { log.keys.append($0); log.values.append($1) })
            return .object(log)
        }, store: { root.keys.append($0); root.values.append($1) })
        try end()
        return (.object(root), shape)
    }

    enum EntriesShape: Equatable {
        case array
        case missing
        case notAnArray(String)
        case notAnObjectRoot
    }

    // MARK: - Values

    var peek: UInt8? { i < bytes.count ? bytes[i] : nil }

    mutating func end() throws(JSONSyntaxError) {
        skipSpace()
        if i < bytes.count { throw error("unexpected text after the JSON value") }
    }

    @inline(__always)
    mutating func skipSpace() {
        while i < bytes.count {
            let c = bytes[i]
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            i += 1
        }
    }

    mutating func value() throws -> JSONValue {
        skipSpace()
        guard i < bytes.count else { throw error("the text ends where a value was expected") }
        switch bytes[i] {
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "{"):
            var object = JSONObject()
            try members({ reader, _ in try reader.value() }, store: { object.keys.append($0); object.values.append($1) })
            return .object(object)
        case UInt8(ascii: "["):
            var items: [JSONValue] = []
            try elements { reader in items.append(try reader.value()) }
            return .array(items)
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw error("unexpected character \(Self.describe(bytes[i]))")
        }
    }

    /// `{ "key": value, ... }`: `read` reads each member's value (the reader is after the
    /// colon), `store` keeps it.
    mutating func members(_ read: (inout JSONReader, String) throws -> JSONValue, store: (String, JSONValue) -> Void) throws {
        try open()
        i += 1
        skipSpace()
        if peek == UInt8(ascii: "}") { i += 1; depth -= 1; return }
        while true {
            skipSpace()
            guard peek == UInt8(ascii: "\"") else { throw error("expected a member name in double quotes") }
            let key = try string()
            skipSpace()
            guard peek == UInt8(ascii: ":") else { throw error("expected ':' after a member name") }
            i += 1
            store(key, try read(&self, key))
            skipSpace()
            guard let c = peek else { throw error("the text ends inside an object") }
            i += 1
            if c == UInt8(ascii: "}") { depth -= 1; return }
            guard c == UInt8(ascii: ",") else { i -= 1; throw error("expected ',' or '}' in an object") }
        }
    }

    /// `[ value, ... ]`, `read` reading each element.
    mutating func elements(_ read: (inout JSONReader) throws -> Void) throws {
        try open()
        i += 1
        skipSpace()
        if peek == UInt8(ascii: "]") { i += 1; depth -= 1; return }
        while true {
            try read(&self)
            skipSpace()
            guard let c = peek else { throw error("the text ends inside an array") }
            i += 1
            if c == UInt8(ascii: "]") { depth -= 1; return }
            guard c == UInt8(ascii: ",") else { i -= 1; throw error("expected ',' or ']' in an array") }
        }
    }

    mutating func open() throws(JSONSyntaxError) {
        depth += 1
        if depth > Self.maxDepth { throw error("nested deeper than \(Self.maxDepth) levels") }
    }

    mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
        let n = word.utf8CodeUnitCount
        guard i + n <= bytes.count, memcmp(bytes.baseAddress! + i, word.utf8Start, n) == 0 else {
            throw error("unexpected character \(Self.describe(bytes[i]))")
        }
        i += n
    }

    /// A string at `i` (at its opening quote).
    mutating func string() throws(JSONSyntaxError) -> String {
        i += 1
        let start = i
        // The common case: no escape. Find the closing quote.
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                let text = try validated(start, i)
                i += 1
                return text
            }
            if c == UInt8(ascii: "\\") { break }
            if c < 0x20 { throw error("a control character inside a string") }
            i += 1
        }
        guard i < bytes.count else { throw error("the text ends inside a string") }
        var out = [UInt8](UnsafeBufferPointer(rebasing: bytes[start..<i]))
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                i += 1
                guard let text = String(validating: out, as: UTF8.self) else { throw error("a string that is not UTF-8", at: start) }
                return text
            }
            if c < 0x20 { throw error("a control character inside a string") }
            if c != UInt8(ascii: "\\") {
                out.append(c)
                i += 1
                continue
            }
            i += 1
            guard i < bytes.count else { break }
            switch bytes[i] {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4(at: i + 1)
                i += 4
                if scalar >= 0xD800, scalar < 0xDC00 {
                    // A high surrogate: a low one should follow as \uDC00-\uDFFF.
                    if i + 6 < bytes.count, bytes[i + 1] == UInt8(ascii: "\\"), bytes[i + 2] == UInt8(ascii: "u"),
                       let low = try? hex4(at: i + 3), low >= 0xDC00, low < 0xE000 {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                    } else {
                        scalar = 0xFFFD
                    }
                } else if scalar >= 0xDC00, scalar < 0xE000 {
                    scalar = 0xFFFD
                }
                Self.appendUTF8(UInt32(scalar), to: &out)
            default: throw error("an unknown escape \\\(Self.describe(bytes[i]))")
            }
            i += 1
        }
        throw error("the text ends inside a string")
    }

    func validated(_ start: Int, _ end: Int) throws(JSONSyntaxError) -> String {
        let slice = UnsafeBufferPointer(rebasing: bytes[start..<end])
        var high: UInt8 = 0
        for b in slice { high |= b }
        if high < 0x80 { return String(decoding: slice, as: UTF8.self) }
        guard let text = String(validating: slice, as: UTF8.self) else { throw error("a string that is not UTF-8", at: start) }
        return text
    }

    func hex4(at k: Int) throws(JSONSyntaxError) -> Int {
        guard k + 4 <= bytes.count else { throw error("the text ends inside a \\u escape") }
        var v = 0
        for j in k..<k + 4 {
            let c = bytes[j]
            let d: Int
            switch c {
            case 0x30...0x39: d = Int(c - 0x30)
            case 0x41...0x46: d = Int(c - 0x41 + 10)
            case 0x61...0x66: d = Int(c - 0x61 + 10)
            default: throw error("a \\u escape needs four hex digits", at: j)
            }
            v = v << 4 | d
        }
        return v
    }

    static func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
        switch scalar {
        case 0..<0x80: out.append(UInt8(scalar))
        case 0x80..<0x800:
            out.append(UInt8(0xC0 | scalar >> 6))
            out.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            out.append(UInt8(0xE0 | scalar >> 12))
            out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        default:
            out.append(UInt8(0xF0 | scalar >> 18))
            out.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// Powers of ten a double holds exactly: a mantissa under 2^53 divided or multiplied by
    /// one of them is correctly rounded.
    static let exactPowers: [Double] = (0...22).map { p in (0..<p).reduce(1.0) { r, _ in r * 10 } }

    /// A number at `i`, as RFC 8259 spells one.
    mutating func number() throws(JSONSyntaxError) -> Double {
        let start = i
        var negative = false
        if bytes[i] == UInt8(ascii: "-") {
            negative = true
            i += 1
        }
        guard i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 else { throw error("a number needs a digit") }
        if bytes[i] == 0x30, i + 1 < bytes.count, bytes[i + 1] >= 0x30, bytes[i + 1] <= 0x39 {
            throw error("a number with a leading zero")
        }
        var mantissa: UInt64 = 0
        var digits = 0
        while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 {
            mantissa = mantissa &* 10 &+ UInt64(bytes[i] - 0x30)
            digits += 1
            i += 1
        }
        var fraction = 0
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            guard i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 else { throw error("a digit must follow the decimal point") }
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 {
                mantissa = mantissa &* 10 &+ UInt64(bytes[i] - 0x30)
                digits += 1
                fraction += 1
                i += 1
            }
        }
        var exact = digits <= 15 && fraction <= 22
        if i < bytes.count, bytes[i] | 0x20 == UInt8(ascii: "e") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 else { throw error("a digit must follow the exponent") }
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
            exact = false
        }
        if exact {
            let value = Double(mantissa) / Self.exactPowers[fraction]
            return negative ? -value : value
        }
        // Long or exponent forms: the C library's correctly rounded conversion.
        var text = [CChar](repeating: 0, count: i - start + 1)
        for k in start..<i { text[k - start] = CChar(bitPattern: bytes[k]) }
        return strtod(text, nil)
    }

    // MARK: - Errors

    func error(_ problem: String, at offset: Int? = nil) -> JSONSyntaxError {
        let at = min(offset ?? i, bytes.count)
        var line = 1
        var lineStart = 0
        for k in 0..<at where bytes[k] == 0x0A {
            line += 1
            lineStart = k + 1
        }
        return JSONSyntaxError(problem: problem, offset: at, line: line, column: at - lineStart + 1)
    }

    static func describe(_ c: UInt8) -> String {
        c >= 0x20 && c < 0x7F ? "'\(Character(Unicode.Scalar(c)))'" : "byte 0x\(String(c, radix: 16, uppercase: true))"
    }
}
