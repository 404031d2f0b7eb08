import Foundation

/// One header line as it was recorded: original casing, any text a HAR allows. An
/// exchange holds its fields as a `HeaderList`, which hands out these one at a time.
///
/// Recordings keep headers raw (HTTP/2 pseudo-headers and odd names from exporters
/// included) so that exports and diffs are exact.
public struct HeaderField: Sendable, Hashable, Codable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

extension String {
    /// ASCII case-insensitive comparison, as header names and cookie attributes need.
    @inlinable
    public func caseInsensitiveEquals(_ other: String) -> Bool {
        let a = self.utf8, b = other.utf8
        guard a.count == b.count else { return false }
        // Native strings: compare the bytes in place.
        if let same = a.withContiguousStorageIfAvailable({ pa in b.withContiguousStorageIfAvailable { pb in Self.caseInsensitiveEqual(pa, pb) } }), let same {
            return same
        }
        for (x, y) in zip(a, b) where x != y {
            let lx = (x >= 65 && x <= 90) ? x | 0x20 : x
            let ly = (y >= 65 && y <= 90) ? y | 0x20 : y
            if lx != ly { return false }
        }
        return true
    }

    /// `a` and `b`, of equal length, the same but for the case of ASCII letters. Inlined
    /// where header lists are searched by name, with the first bytes compared at once:
    /// most fields of a name's length are another name, told apart there (a name lookup
    /// of a capture's import called this for each, 1-2 % of the import's time). Bytes
    /// equal but for case are equal once bit 5 is set in both, so bytes that differ then
    /// differ however case is read.
    @inlinable
    static func caseInsensitiveEqual(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        if let x = a.first, let y = b.first, x | 0x20 != y | 0x20 { return false }
        for k in 0..<a.count where a[k] != b[k] {
            let x = a[k], y = b[k]
            let lx = (x >= 65 && x <= 90) ? x | 0x20 : x
            let ly = (y >= 65 && y <= 90) ? y | 0x20 : y
            if lx != ly { return false }
        }
        return true
    }

    /// Lowercases ASCII letters only (header names, hosts, schemes).
    public var asciiLowercased: String {
        // Most are lowercase already: no copy then. The bytes are scanned in place, not
        // through the view's indexes: the classifier lowercases every request's path.
        func isCapital(_ b: UInt8) -> Bool { b &- 65 < 26 }
        guard utf8.withContiguousStorageIfAvailable({ $0.contains(where: isCapital) }) ?? utf8.contains(where: isCapital) else { return self }
        return String(decoding: utf8.map { isCapital($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}

extension StringProtocol {
    /// Without leading and trailing SP and HTAB: HTTP's optional white space around a
    /// header value or a list item (RFC 9110 section 5.6.3), the WSP of cookie syntax.
    public var trimmingOWS: String {
        // Native strings and their slices: on the contiguous bytes, without index walking.
        if let trimmed = utf8.withContiguousStorageIfAvailable({ b -> String in
            String(decoding: UnsafeBufferPointer(rebasing: b[b.owsTrimmed(0..<b.count)]), as: UTF8.self)
        }) {
            return trimmed
        }
        let bytes = utf8
        var start = bytes.startIndex
        while start < bytes.endIndex, bytes[start] == 0x20 || bytes[start] == 0x09 { bytes.formIndex(after: &start) }
        // The end of the last byte that is not white space.
        var end = start
        var i = start
        while i < bytes.endIndex {
            let c = bytes[i]
            bytes.formIndex(after: &i)
            if c != 0x20 && c != 0x09 { end = i }
        }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    /// Whether `needle`'s bytes occur in these bytes (`firstIndex(ofBytes:in:)`).
    public func containsBytes(_ needle: String) -> Bool {
        withBytes(String(self), needle) { haystack, pattern in haystack.firstIndex(ofBytes: pattern, in: 0..<haystack.count) != nil }
    }
}

extension String {
    /// Whether the UTF-8 begins with `prefix`'s bytes: cookie paths and domains are
    /// compared as octets (RFC 6265bis sections 5.1.3 and 5.1.4).
    public func hasBytePrefix(_ prefix: String) -> Bool {
        withBytes(self, prefix) { a, b in a.count >= b.count && (b.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, b.count) == 0) }
    }

    /// Whether the UTF-8 begins with `prefix`'s, ASCII letters compared without case
    /// (media types, methods): `lowercased()` and `hasPrefix` compare Unicode text, a
    /// few hundred instructions where a byte loop takes a few dozen.
    public func hasCaseInsensitivePrefix(_ prefix: String) -> Bool {
        withBytes(self, prefix) { a, b in a.count >= b.count && String.caseInsensitiveEqual(UnsafeBufferPointer(rebasing: a[..<b.count]), b) }
    }

    /// Whether the UTF-8 holds `byte`, searched in place (`memchr`): `utf8.contains`
    /// steps through the view's indexes one byte at a time, 300-800 instructions for a
    /// host or a URL.
    public func containsByte(_ byte: UInt8) -> Bool {
        if let found = utf8.withContiguousStorageIfAvailable({ $0.isEmpty ? false : memchr($0.baseAddress!, Int32(byte), $0.count) != nil }) {
            return found
        }
        return utf8.contains(byte)
    }

    /// Whether the UTF-8 ends with `suffix`'s bytes.
    public func hasByteSuffix(_ suffix: String) -> Bool {
        withBytes(self, suffix) { a, b in a.count >= b.count && (b.isEmpty || memcmp(a.baseAddress! + (a.count - b.count), b.baseAddress!, b.count) == 0) }
    }
}

/// JSON string bytes tested eight at a time: the JSON reader and the store's writer share it.
public enum JSONBytes {
    /// A flag (0x80) on each byte of `word` that is `"`, `\` or a control character, by
    /// the "has a zero byte" trick: whether any is flagged is exact, and the lowest flag is
    /// the first such byte (only a byte above a flagged one can be flagged falsely). Bytes
    /// of 0x80 and over are never flagged.
    @inlinable public static func special(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* 0x22), backslash = word ^ (ones &* 0x5C)
        return (((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word)) & highs
    }
}

extension UnsafeBufferPointer where Element == UInt8 {
    /// Where `needle`'s bytes first occur within `range`, if they do: a plain search, for
    /// the header values, sentences and bodies the emulator looks into (a generic
    /// collection search cost tens of thousands of instructions a call).
    public func firstIndex(ofBytes needle: UnsafeBufferPointer<UInt8>, in range: Range<Int>) -> Int? {
        guard !needle.isEmpty else { return range.lowerBound }
        guard range.count >= needle.count else { return nil }
        for start in range.lowerBound...(range.upperBound - needle.count) where self[start] == needle[0] {
            if memcmp(baseAddress! + start, needle.baseAddress!, needle.count) == 0 { return start }
        }
        return nil
    }

    /// Whether any byte must be escaped in a JSON string: a control character, `"` or `\`.
    /// Sixteen bytes a step as one SSE2 vector (three compares, a mask), the last step
    /// overlapping the one before rather than a byte at a time; text under sixteen bytes
    /// as two overlapping words. A stored finding's strings pass through here, and a word
    /// a step then the tail byte by byte was a twentieth of storing a finding row.
    @inlinable public var needsJSONEscape: Bool {
        guard let base = baseAddress else { return false }
        let raw = UnsafeRawPointer(base)
        if count >= 16 {
            let quote = SIMD16<UInt8>(repeating: 0x22), backslash = SIMD16<UInt8>(repeating: 0x5C), space = SIMD16<UInt8>(repeating: 0x20)
            // One load and test for every step, the last moved back to end at the end.
            var i = 0
            repeat {
                let v = raw.loadUnaligned(fromByteOffset: Swift.min(i, count - 16), as: SIMD16<UInt8>.self)
                if any((v .== quote) .| (v .== backslash) .| (v .< space)) { return true }
                i += 16
            } while i < count
            return false
        }
        if count >= 8 {
            return JSONBytes.special(raw.loadUnaligned(as: UInt64.self)) | JSONBytes.special(raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)) != 0
        }
        for i in 0..<count {
            let c = base[i]
            if c < 0x20 || c == 0x22 || c == 0x5C { return true }
        }
        return false
    }

    /// Whether these bytes are `word`'s, ASCII letters compared without case.
    public func equalsCaseInsensitive(_ word: StaticString) -> Bool {
        count == word.utf8CodeUnitCount && matchesCaseInsensitive(word, at: 0)
    }

    /// Whether these bytes begin with `word`'s, ASCII letters compared without case (media
    /// types, tokens).
    public func hasCaseInsensitivePrefix(_ word: StaticString) -> Bool {
        count >= word.utf8CodeUnitCount && matchesCaseInsensitive(word, at: 0)
    }

    /// Whether `word`'s bytes occur in these, ASCII letters compared without case.
    public func containsCaseInsensitive(_ word: StaticString) -> Bool {
        let n = word.utf8CodeUnitCount
        guard count >= n else { return false }
        for start in 0...(count - n) where matchesCaseInsensitive(word, at: start) { return true }
        return false
    }

    /// `word` at `start` by `String.caseInsensitiveEqual`; `count` is long enough.
    func matchesCaseInsensitive(_ word: StaticString, at start: Int) -> Bool {
        word.withUTF8Buffer { String.caseInsensitiveEqual(UnsafeBufferPointer(rebasing: self[start..<start + $0.count]), $0) }
    }

    /// Whether these bytes begin with `word`'s, exactly.
    public func hasBytePrefix(_ word: StaticString) -> Bool {
        count >= word.utf8CodeUnitCount && (word.utf8CodeUnitCount == 0 || memcmp(baseAddress!, word.utf8Start, word.utf8CodeUnitCount) == 0)
    }

    /// Whether `word`'s bytes occur in these, exactly.
    public func containsBytes(_ word: StaticString) -> Bool {
        word.withUTF8Buffer { firstIndex(ofBytes: $0, in: 0..<count) != nil }
    }


    /// These bytes without their leading and trailing SP and HTAB.
    public var owsTrimmedBytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: self[owsTrimmed(0..<count)]) }

    /// `range` without its leading and trailing SP and HTAB (OWS, the WSP of cookie
    /// syntax): the one trim the byte-level splitters share.
    public func owsTrimmed(_ range: Range<Int>) -> Range<Int> {
        var (start, end) = (range.lowerBound, range.upperBound)
        while start < end, self[start] == 0x20 || self[start] == 0x09 { start += 1 }
        while end > start, self[end - 1] == 0x20 || self[end - 1] == 0x09 { end -= 1 }
        return start..<end
    }
}

/// Both strings' UTF-8 as contiguous bytes: read in place when they already are (native
/// and small strings), without the copies `withUTF8` on a `var` makes.
private func withBytes<R>(_ a: String, _ b: String, _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> R) -> R {
    if let inPlace = a.utf8.withContiguousStorageIfAvailable({ x in b.utf8.withContiguousStorageIfAvailable { y in body(x, y) } }), let result = inPlace {
        return result
    }
    var (a, b) = (a, b)
    return a.withUTF8 { x in b.withUTF8 { y in body(x, y) } }
}
