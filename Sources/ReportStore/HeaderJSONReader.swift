import TrafficModel

/// Reads a header list as the store writes it, `[["name","value"],...]`, straight from
/// the bytes: every JSON string escape (`\"`, `\n`, `\u001f`, surrogate pairs), any
/// number of strings in a pair (the first two are the name and the value, a missing one
/// is empty, as `[[String]]` was read before). Anything else, even whitespace between
/// tokens, is left to a full JSON reader: `read()` returns nil, never a guess.
struct HeaderJSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var at = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func read() -> [HeaderField]? {
        guard take(0x5B) else { return nil }
        var out: [HeaderField] = []
        if take(0x5D) { return at == bytes.count ? out : nil }
        repeat {
            guard take(0x5B) else { return nil }
            var strings: [String] = []
            if !take(0x5D) {
                repeat {
                    guard let s = string() else { return nil }
                    strings.append(s)
                } while take(0x2C)
                guard take(0x5D) else { return nil }
            }
            out.append(HeaderField(strings.first ?? "", strings.count > 1 ? strings[1] : ""))
        } while take(0x2C)
        guard take(0x5D), at == bytes.count else { return nil }
        return out
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
