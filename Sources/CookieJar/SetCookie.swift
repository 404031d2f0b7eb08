import TrafficModel

/// A parsed `Set-Cookie` header (RFC 6265bis section 5.6, "The Set-Cookie Header Field").
public struct SetCookie: Sendable, Hashable {
    public var name: String
    public var value: String
    /// Attributes in order, names as written; the last occurrence of each wins.
    public var expires: Double?
    public var maxAge: Double?
    public var domain: String?
    public var path: String?
    public var secure = false
    public var httpOnly = false
    public var sameSite: Cookie.SameSite = .default

    /// Parses `header`; nil when the algorithm says to ignore the whole set-cookie-string.
    ///
    /// On the header's octets, as the RFC's algorithm is written: a ";" or "=" followed by
    /// a combining mark still separates (a search by Characters would not see it), and no
    /// grapheme breaking is paid for on the import's hot path.
    public static func parse(_ header: String) -> SetCookie? {
        var header = header
        return header.withUTF8 { parse(bytes: $0) }
    }

    static func parse(bytes b: UnsafeBufferPointer<UInt8>) -> SetCookie? {
        let semicolon = UInt8(ascii: ";"), equals = UInt8(ascii: "=")
        // 1. If the set-cookie-string contains a %x00-08 / %x0A-1F / %x7F character
        //    (CTL characters excluding HTAB): abort and ignore it entirely.
        for c in b where (c <= 0x08) || (c >= 0x0A && c <= 0x1F) || c == 0x7F { return nil }
        func first(_ byte: UInt8, in range: Range<Int>) -> Int? {
            var i = range.lowerBound
            while i < range.upperBound {
                if b[i] == byte { return i }
                i += 1
            }
            return nil
        }
        // Step 4 and the attributes' step 3: without leading and trailing WSP.
        func trimmed(_ range: Range<Int>) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: b[b.owsTrimmed(range)]), as: UTF8.self)
        }
        // 2. If it contains ";", the name-value-pair is everything up to the first ";" and
        //    the unparsed-attributes the rest, ";" included. Otherwise it is all the pair.
        let pairEnd = first(semicolon, in: 0..<b.count) ?? b.count
        // 3. If the pair lacks "=", the name is empty and the value is the whole pair.
        //    Otherwise the name is up to the first "=" and the value follows it.
        // 4. Remove any leading or trailing WSP from the name and the value.
        let cookieName: String, cookieValue: String
        if let eq = first(equals, in: 0..<pairEnd) {
            (cookieName, cookieValue) = (trimmed(0..<eq), trimmed((eq + 1)..<pairEnd))
        } else {
            (cookieName, cookieValue) = ("", trimmed(0..<pairEnd))
        }
        // 5. If both are empty, ignore. 6. If name and value together exceed 4096 octets, ignore.
        if cookieName.isEmpty && cookieValue.isEmpty { return nil }
        if cookieName.utf8.count + cookieValue.utf8.count > 4096 { return nil }
        var result = SetCookie(name: cookieName, value: cookieValue)
        // Attributes (section 5.6, steps for the unparsed-attributes).
        var next = pairEnd
        while next < b.count {
            // 1. Consume the leading ";". 2. The cookie-av is up to the next ";".
            let avStart = next + 1
            let avEnd = first(semicolon, in: avStart..<b.count) ?? b.count
            next = avEnd
            // 3. Split at the first "=" into attribute-name and attribute-value; trim WSP.
            let attrName: String, attrValue: String
            if let eq = first(equals, in: avStart..<avEnd) {
                (attrName, attrValue) = (trimmed(avStart..<eq), trimmed((eq + 1)..<avEnd))
            } else {
                (attrName, attrValue) = (trimmed(avStart..<avEnd), "")
            }
            // 4. An attribute-value longer than 1024 octets is ignored.
            if attrValue.utf8.count > 1024 { continue }
            result.apply(attribute: attrName.asciiLowercased, value: attrValue)
        }
        return result
    }

    private mutating func apply(attribute: String, value: String) {
        switch attribute {
        case "expires":
            // 5.6.1: parse as cookie-date; ignore the attribute on failure.
            if let date = CookieDate.parse(value) { expires = date }
        case "max-age":
            // 5.6.2: first char must be a DIGIT or "-", the rest DIGITs; else ignore.
            guard let first = value.utf8.first, (first >= 48 && first <= 57) || first == 45 else { return }
            guard value.utf8.dropFirst().allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return }
            let magnitude = Double(value.utf8.dropFirst(first == 45 ? 1 : 0).reduce(0.0) { min($0 * 10 + Double($1 - 48), 1e18) })
            if first == 45 && value.utf8.count == 1 { return }
            maxAge = first == 45 ? -magnitude : magnitude
        case "domain":
            // 5.6.3: the cookie-domain is the value without a leading "."; an empty value
            // gives an empty cookie-domain, which (being the last Domain) makes the
            // cookie host-only in the storage model. Lowercased.
            domain = (value.hasPrefix(".") ? String(value.dropFirst()) : value).asciiLowercased
        case "path":
            // 5.6.4: an empty value or one not starting with "/" gives the default path.
            path = value.hasPrefix("/") ? value : ""
        case "secure": secure = true
        case "httponly": httpOnly = true
        case "samesite":
            switch value.asciiLowercased {
            case "none": sameSite = .none
            case "strict": sameSite = .strict
            case "lax": sameSite = .lax
            default: sameSite = .default
            }
        default: break
        }
    }

    init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

