import TrafficModel

/// Reads the JSON the store writes by hand, straight from the bytes: a header list
/// `[["name","value"],...]`, a list of strings `["a","b"]` (a finding's subjects and its
/// sentence's values), an object of strings `{"k":"v"}` (its expected and actual fields).
/// Every JSON string escape is read (`\"`, `\n`, `\u001f`, surrogate pairs); a header pair
/// may hold any number of strings (the first two are the name and the value, a missing one
/// is empty, as `[[String]]` was read before). Anything else, even whitespace between
/// tokens, is left to a full JSON reader: each read returns nil, never a guess. Foundation's
/// JSONDecoder was a fifth of reading a recording back and a sixth of loading a run.
struct StoredJSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var at = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// Reads `text` whole with `read`; nil when `read` fails or bytes are left over.
    static func read<T>(_ text: String, _ read: (inout StoredJSONReader) -> T?) -> T? {
        var text = text
        return text.withUTF8 { bytes -> T? in
            var reader = StoredJSONReader(bytes: bytes)
            guard let value = read(&reader), reader.at == bytes.count else { return nil }
            return value
        }
    }

    mutating func headerList() -> HeaderList? {
        var out: HeaderList = []
        let read = list {
            guard let strings = $0.stringList() else { return false }
            out.append(HeaderField(strings.first ?? "", strings.count > 1 ? strings[1] : ""))
            return true
        }
        return read ? out : nil
    }

    mutating func stringList() -> [String]? {
        var out: [String] = []
        let read = list {
            guard let s = $0.string() else { return false }
            out.append(s)
            return true
        }
        return read ? out : nil
    }

    /// An object's members in the order written.
    mutating func stringObject() -> [(String, String)]? {
        guard take(0x7B) else { return nil }
        var out: [(String, String)] = []
        if take(0x7D) { return out }
        repeat {
            guard let key = string(), take(0x3A), let value = string() else { return nil }
            out.append((key, value))
        } while take(0x2C)
        return take(0x7D) ? out : nil
    }

    /// `[element,...]`, each element read by `element`.
    mutating func list(_ element: (inout StoredJSONReader) -> Bool) -> Bool {
        guard take(0x5B) else { return false }
        if take(0x5D) { return true }
        repeat {
            guard element(&self) else { return false }
        } while take(0x2C)
        return take(0x5D)
    }

    /// Consumes `byte` when it is next.
    mutating func take(_ byte: UInt8) -> Bool {
        guard at < bytes.count, bytes[at] == byte else { return false }
        at += 1
        return true
    }

    /// A JSON string; nil when it is not one.
    mutating func string() -> String? {
        guard take(0x22) else { return nil }
        let start = at
        // Most names and values hold no escape: made from the bytes in place.
        while at < bytes.count, bytes[at] != 0x22, bytes[at] != 0x5C {
            if bytes[at] < 0x20 { return nil }
            at += 1
        }
        guard at < bytes.count else { return nil }
        if bytes[at] == 0x22 {
            at += 1
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<(at - 1)]), as: UTF8.self)
        }
        var out = Array(bytes[start..<at])
        while at < bytes.count {
            let c = bytes[at]
            at += 1
            switch c {
            case 0x22:
                return String(decoding: out, as: UTF8.self)
            case 0x5C:
                guard at < bytes.count else { return nil }
                let e = bytes[at]
                at += 1
                switch e {
                case 0x22, 0x5C, 0x2F: out.append(e)
                case 0x62: out.append(0x08)
                case 0x66: out.append(0x0C)
                case 0x6E: out.append(0x0A)
                case 0x72: out.append(0x0D)
                case 0x74: out.append(0x09)
                case 0x75:
                    guard var unit = hex4() else { return nil }
                    var scalar: Unicode.Scalar?
                    if (0xD800..<0xDC00).contains(unit) {
                        // A high surrogate: its low half follows as another escape.
                        guard take(0x5C), take(0x75), let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                        unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                        scalar = Unicode.Scalar(unit)
                    } else {
                        scalar = Unicode.Scalar(unit)
                    }
                    guard let scalar else { return nil }
                    out.append(contentsOf: String(scalar).utf8)
                default:
                    return nil
                }
            case 0..<0x20:
                return nil
            default:
                out.append(c)
            }
        }
        return nil
    }

    /// Four hex digits of a `\u` escape.
    mutating func hex4() -> UInt32? {
        guard at + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[at]
            at += 1
            let digit: UInt8
            switch c {
            case 0x30...0x39: digit = c - 0x30
            case 0x41...0x46: digit = c - 0x41 + 10
            case 0x61...0x66: digit = c - 0x61 + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}
