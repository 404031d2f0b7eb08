#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TrafficModel

/// One JSON text, or one HAR entry, read into a flat list of tokens over the source bytes
/// (a "tape"): no value is turned into a Swift object until the importer asks for it, and a
/// member is found by comparing its name's bytes. Reading an entry reuses the tape's
/// storage, so the importer allocates per value it keeps, not per value in the file.
final class JSONTape {
    enum Kind: UInt8 { case null, bool, number, string, array, object }

    struct Token {
        var kind: Kind
        /// Strings: a backslash escape inside. Bools: the value. Objects: no two member
        /// names are the same, and none is written with an escape.
        var flag: Bool
        /// Strings: the bytes between the quotes. Objects: `start` is a mask with the bit
        /// of each member name (`JSONReader.nameBit`), every bit when a name has an escape;
        /// a name whose bit is not in it is no member's. Arrays: unused.
        var start: Int
        var end: Int
        /// The index of the token after this value and everything inside it.
        var next: Int
        var number: Double
    }

    var tokens: [Token] = []
    /// The source bytes; valid while the reader that filled the tape runs.
    var bytes: UnsafeBufferPointer<UInt8>

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// A view of the tokens for reading, valid inside `body` (the tape is not changed
    /// meanwhile). Reads through it check no exclusivity and count no references.
    func withView<R>(_ body: (JSONView) throws -> R) rethrows -> R {
        try tokens.withUnsafeBufferPointer { try body(JSONView(tokens: $0, bytes: bytes)) }
    }

    /// The token as a self-contained value (tests, and small texts inside a HAR).
    func value(_ t: Int) -> JSONValue { withView { $0.value(t) } }
}

/// Read access to a filled tape.
struct JSONView {
    let tokens: UnsafeBufferPointer<JSONTape.Token>
    let bytes: UnsafeBufferPointer<UInt8>

    /// A string token's text.
    func string(_ t: Int) -> String {
        let token = tokens[t]
        let slice = UnsafeBufferPointer(rebasing: bytes[token.start..<token.end])
        if !token.flag { return String(decoding: slice, as: UTF8.self) }
        return String(decoding: JSONReader.unescape(slice), as: UTF8.self)
    }

    /// The member of an object token named `key` (the last, if repeated). Names are
    /// compared as bytes; a name written with escapes is decoded first.
    func member(_ object: Int, _ key: StaticString) -> Int? {
        key.withUTF8Buffer { k in
            let length = k.count
            let names = UInt64(UInt(bitPattern: tokens[object].start))
            guard length == 0 || names & JSONReader.nameBit(k.baseAddress!, count: length) != 0 else { return nil }
            let unique = tokens[object].flag
            var child = object + 1
            let end = tokens[object].next
            var found: Int?
            let first = k.first ?? 0
            let base = bytes.baseAddress!
            while child < end {
                let name = tokens[child]
                if name.end - name.start == length, !name.flag {
                    // Names that differ mostly differ at the first byte.
                    if length == 0 || (base[name.start] == first && memcmp(base + name.start, k.baseAddress!, length) == 0) {
                        found = child + 1
                        if unique { return found }
                    }
                } else if name.flag, string(child).utf8.elementsEqual(k) {
                    found = child + 1
                }
                child = tokens[child + 1].next
            }
            return found
        }
    }

    /// The elements of an array token, or the member values of an object token.
    func children(_ container: Int) -> [Int] {
        var out: [Int] = []
        var child = container + 1
        let end = tokens[container].next
        let isObject = tokens[container].kind == .object
        while child < end {
            if isObject { child += 1 }
            out.append(child)
            child = tokens[child].next
        }
        return out
    }

    /// The JSON path from token 0 to token `t`: `request.headers[2].value`.
    func path(to t: Int) -> String {
        var out = ""
        var at = 0
        while at != t, at < tokens.count {
            let isObject = tokens[at].kind == .object
            var child = at + 1
            var position = 0
            var next = at
            while child < tokens[at].next {
                let value = isObject ? child + 1 : child
                if value <= t, t < tokens[value].next {
                    out += isObject ? (out.isEmpty ? "" : ".") + string(child) : "[\(position)]"
                    next = value
                    break
                }
                child = tokens[value].next
                position += 1
            }
            guard next != at else { break }
            at = next
        }
        return out
    }

    func value(_ t: Int) -> JSONValue {
        let token = tokens[t]
        switch token.kind {
        case .null: return .null
        case .bool: return .bool(token.flag)
        case .number: return .number(token.number)
        case .string: return .string(string(t))
        case .array: return .array(children(t).map(value))
        case .object:
            var object = JSONObject()
            var child = t + 1
            while child < token.next {
                object.keys.append(string(child))
                object.values.append(value(child + 1))
                child = tokens[child + 1].next
            }
            return .object(object)
        }
    }
}

/// A JSON value as a self-contained tree, for small texts and tests.
enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// A number as text, as exporters mean it: integers without a fraction.
    static func text(of n: Double) -> String {
        if n == n.rounded(), abs(n) < 1e15 { return String(Int64(n)) }
        return String(n)
    }
}

struct JSONObject: Sendable, Equatable {
    var keys: [String] = []
    var values: [JSONValue] = []
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

/// A UTF-8 JSON reader over bytes (RFC 8259) that fills a `JSONTape`: one pass, strings
/// checked but not decoded, numbers read without a detour through text.
///
/// `forEachEntry` reads a HAR's `log.entries` one element at a time into one reused tape,
/// handing each to the caller before reading the next: what is held at once is one entry's
/// tokens, whatever the file's size.
struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var i = 0
    /// Nesting limit, against stack exhaustion on hostile input.
    static let maxDepth = 512
    var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Reads one whole JSON text as a tree.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws -> JSONValue {
        var reader = JSONReader(bytes)
        let tape = JSONTape(bytes: bytes)
        try reader.value(into: &tape.tokens)
        try reader.end()
        return tape.value(0)
    }

    /// Reads again the one value that starts at byte `start` (an entry, by the range
    /// `forEachEntry` gave for it) onto `tokens`, emptied first.
    static func value(in bytes: UnsafeBufferPointer<UInt8>, at start: Int, into tokens: inout [JSONTape.Token]) throws {
        var reader = JSONReader(bytes)
        reader.i = start
        tokens.removeAll(keepingCapacity: true)
        try reader.value(into: &tokens)
    }

    /// Reads a HAR document, calling `entry` with a tape holding each element of
    /// `log.entries` in turn (the element is token 0) and the element's byte range. Returns
    /// a tape of the rest of the document, with `log.entries` read as an empty array when
    /// it was one.
    mutating func forEachEntry(_ entry: (Int, JSONView, Range<Int>) throws -> Void) throws -> JSONTape {
        let bytes = self.bytes
        return try forEachEntry { index, tokens, range in
            try tokens.withUnsafeBufferPointer { try entry(index, JSONView(tokens: $0, bytes: bytes), range) }
        }
    }

    /// `forEachEntry`, handing each element's tape itself: the caller may take the tokens
    /// by swapping in another array, which the next element is then read onto (emptied
    /// first, its capacity kept), instead of copying them.
    mutating func forEachEntry(tapes entry: (Int, inout [JSONTape.Token], Range<Int>) throws -> Void) throws -> JSONTape {
        let root = JSONTape(bytes: bytes)
        var rootTokens: [JSONTape.Token] = []
        var entryTokens: [JSONTape.Token] = []
        skipSpace()
        guard peek == UInt8(ascii: "{") else {
            try value(into: &rootTokens)
            try end()
            root.tokens = rootTokens
            return root
        }
        try object(into: &rootTokens, hasSpecial: true) { reader, rootTokens, key in
            guard key == "log" else { return false }
            reader.skipSpace()
            guard reader.peek == UInt8(ascii: "{") else { return false }
            try reader.object(into: &rootTokens, hasSpecial: true) { reader, rootTokens, key in
                guard key == "entries" else { return false }
                reader.skipSpace()
                guard reader.peek == UInt8(ascii: "[") else { return false }
                // The entries stand in the root as an empty array.
                rootTokens.append(.init(kind: .array, flag: false, start: 0, end: 0, next: rootTokens.count + 1, number: 0))
                var index = 0
                try reader.elements { reader in
                    entryTokens.removeAll(keepingCapacity: true)
                    reader.skipSpace()
                    let start = reader.i
                    try reader.value(into: &entryTokens)
                    let range = start..<reader.i
                    try entry(index, &entryTokens, range)
                    index += 1
                }
                return true
            }
            return true
        }
        try end()
        root.tokens = rootTokens
        return root
    }

    // MARK: - Values

    var peek: UInt8? { i < bytes.count ? bytes[i] : nil }

    mutating func end() throws {
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

    /// Reads one value at `i` onto the tape.
    mutating func value(into tokens: inout [JSONTape.Token]) throws {
        skipSpace()
        guard i < bytes.count else { throw error("the text ends where a value was expected") }
        switch bytes[i] {
        case UInt8(ascii: "\""):
            let (start, end, escaped) = try string()
            tokens.append(.init(kind: .string, flag: escaped, start: start, end: end, next: tokens.count + 1, number: 0))
        case UInt8(ascii: "{"): try object(into: &tokens) { _, _, _ in false }
        case UInt8(ascii: "["):
            let at = tokens.count
            tokens.append(.init(kind: .array, flag: false, start: 0, end: 0, next: 0, number: 0))
            try elements { reader in try reader.value(into: &tokens) }
            tokens[at].next = tokens.count
        case UInt8(ascii: "t"):
            try literal("true")
            tokens.append(.init(kind: .bool, flag: true, start: 0, end: 0, next: tokens.count + 1, number: 0))
        case UInt8(ascii: "f"):
            try literal("false")
            tokens.append(.init(kind: .bool, flag: false, start: 0, end: 0, next: tokens.count + 1, number: 0))
        case UInt8(ascii: "n"):
            try literal("null")
            tokens.append(.init(kind: .null, flag: false, start: 0, end: 0, next: tokens.count + 1, number: 0))
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let n = try number()
            tokens.append(.init(kind: .number, flag: false, start: 0, end: 0, next: tokens.count + 1, number: n))
        default: throw error("unexpected character \(Self.describe(bytes[i]))")
        }
    }

    /// `{ "key": value, ... }` onto the tape: each member's name token, then its value.
    /// `special` may read a member's value itself (the reader is after the colon) and
    /// returns true when it did, having put one value on the tape for it.
    mutating func object(into tokens: inout [JSONTape.Token], hasSpecial: Bool = false, special: (inout JSONReader, inout [JSONTape.Token], String) throws -> Bool) throws {
        let at = tokens.count
        tokens.append(.init(kind: .object, flag: true, start: 0, end: 0, next: 0, number: 0))
        try open()
        i += 1
        skipSpace()
        if peek == UInt8(ascii: "}") {
            i += 1
            depth -= 1
            tokens[at].next = tokens.count
            return
        }
        // The names' mask, and whether they are unique (`Token.flag`): a lookup then passes
        // over an absent name at once, and stops at the first match.
        var names: UInt64 = 0
        var unique = true
        let base = bytes.baseAddress!
        while true {
            skipSpace()
            guard peek == UInt8(ascii: "\"") else { throw error("expected a member name in double quotes") }
            let (start, end, escaped) = try string()
            if escaped {
                names = ~0
                unique = false
            } else {
                let bit = Self.nameBit(base + start, count: end - start)
                if unique && names & bit != 0 {
                    // The same bit as an earlier name: the same name, or another that shares it.
                    var child = at + 1
                    while child < tokens.count {
                        let earlier = tokens[child]
                        if earlier.end - earlier.start == end - start, memcmp(base + earlier.start, base + start, end - start) == 0 { unique = false }
                        child = tokens[child + 1].next
                    }
                }
                names |= bit
            }
            tokens.append(.init(kind: .string, flag: escaped, start: start, end: end, next: tokens.count + 1, number: 0))
            skipSpace()
            guard peek == UInt8(ascii: ":") else { throw error("expected ':' after a member name") }
            i += 1
            // Only the root and log of a HAR have special members: spell the name out there.
            if hasSpecial, try special(&self, &tokens, String(decoding: JSONReader.unescape(UnsafeBufferPointer(rebasing: bytes[start..<end])), as: UTF8.self)) {
                // read by `special`
            } else {
                try value(into: &tokens)
            }
            skipSpace()
            guard let c = peek else { throw error("the text ends inside an object") }
            i += 1
            if c == UInt8(ascii: "}") {
                depth -= 1
                tokens[at].next = tokens.count
                tokens[at].start = Int(bitPattern: UInt(names))
                tokens[at].flag = unique
                return
            }
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

    mutating func open() throws {
        depth += 1
        if depth > Self.maxDepth { throw error("nested deeper than \(Self.maxDepth) levels") }
    }

    mutating func literal(_ word: StaticString) throws {
        let n = word.utf8CodeUnitCount
        guard i + n <= bytes.count, memcmp(bytes.baseAddress! + i, word.utf8Start, n) == 0 else {
            throw error("unexpected character \(Self.describe(bytes[i]))")
        }
        i += n
    }

    /// The bit of a member name of `count` bytes in its object's mask: from its length and
    /// its first, middle and last bytes, which tell a HAR's names apart.
    @inline(__always) static func nameBit(_ name: UnsafePointer<UInt8>, count: Int) -> UInt64 {
        guard count > 0 else { return 1 }
        let mixed = UInt64(count) &* 0x9E37_79B9 ^ UInt64(name[0]) &* 0x85EB_CA6B ^ UInt64(name[count - 1]) &* 0xC2B2_AE35 ^ UInt64(name[count / 2]) &* 0x27D4_EB2F
        return 1 << ((mixed ^ (mixed >> 17)) & 63)
    }

    /// A string at `i` (at its opening quote): the range of its bytes between the quotes,
    /// and whether it holds an escape. Checks escapes, control characters and UTF-8.
    mutating func string() throws -> (Int, Int, Bool) {
        i += 1
        let start = i
        var escaped = false
        var high: UInt64 = 0
        let n = bytes.count
        let base = bytes.baseAddress!
        let highs: UInt64 = 0x8080_8080_8080_8080
        while i < n {
            // Eight bytes at a time up to the first quote, backslash or control character
            // (bytes outside ASCII pass, and are checked as UTF-8 at the end). In each test
            // only a byte above a flagged one can be flagged falsely, so the lowest flag is
            // the byte to stop at.
            while i + 8 <= n {
                let w = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                let special = JSONBytes.special(w)
                if special != 0 {
                    let ahead = special.trailingZeroBitCount >> 3
                    // Bytes before the stop: only their high bits count.
                    high |= w & ((1 << (ahead << 3)) &- 1)
                    i += ahead
                    break
                }
                high |= w
                i += 8
            }
            guard i < n else { break }
            let c = base[i]
            if c == UInt8(ascii: "\"") {
                let end = i
                i += 1
                if high & highs != 0, String(validating: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self) == nil {
                    throw error("a string that is not UTF-8", at: start)
                }
                return (start, end, escaped)
            }
            if c == UInt8(ascii: "\\") {
                escaped = true
                i += 1
                guard i < n else { break }
                switch base[i] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    break
                case UInt8(ascii: "u"):
                    _ = try hex4(at: i + 1)
                    i += 4
                default: throw error("an unknown escape \\\(Self.describe(base[i]))")
                }
                i += 1
                continue
            }
            if c < 0x20 { throw error("a control character inside a string") }
            high |= UInt64(c)
            i += 1
        }
        throw error("the text ends inside a string")
    }

    /// The bytes of a checked string with its escapes undone.
    static func unescape(_ s: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(s.count)
        var k = 0
        func hex(_ at: Int) -> Int {
            var v = 0
            for j in at..<at + 4 {
                let c = s[j]
                v = v << 4 | Int(c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x61 + 10)
            }
            return v
        }
        while k < s.count {
            let c = s[k]
            guard c == UInt8(ascii: "\\") else {
                out.append(c)
                k += 1
                continue
            }
            k += 1
            switch s[k] {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = hex(k + 1)
                k += 4
                if scalar >= 0xD800, scalar < 0xDC00 {
                    // A high surrogate: a low one should follow as \uDC00-\uDFFF.
                    if k + 6 < s.count, s[k + 1] == UInt8(ascii: "\\"), s[k + 2] == UInt8(ascii: "u"),
                       case let low = hex(k + 3), low >= 0xDC00, low < 0xE000 {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        k += 6
                    } else {
                        scalar = 0xFFFD
                    }
                } else if scalar >= 0xDC00, scalar < 0xE000 {
                    scalar = 0xFFFD
                }
                appendUTF8(UInt32(scalar), to: &out)
            default: out.append(s[k])  // \" \\ \/
            }
            k += 1
        }
        return out
    }

    func hex4(at k: Int) throws -> Int {
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

    /// Powers of ten a double holds exactly: a mantissa under 2^53 divided by one of them
    /// is correctly rounded.
    static let exactPowers: [Double] = (0...22).map { p in (0..<p).reduce(1.0) { r, _ in r * 10 } }

    /// A number at `i`, as RFC 8259 spells one.
    mutating func number() throws -> Double {
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
