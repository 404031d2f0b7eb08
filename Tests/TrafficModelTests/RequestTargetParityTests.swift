import Foundation
import Testing
@testable import TrafficModel

/// The URL splitter as it was, on Characters; the byte parser must agree with it.
enum CharacterURLSplitter {
    static func parse(_ url: String) -> RequestTarget? {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let scheme = String(url[url.startIndex..<schemeEnd.lowerBound]).asciiLowercased
        guard !scheme.isEmpty, scheme.utf8.allSatisfy({ ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 43 || $0 == 45 || $0 == 46 }) else { return nil }
        let rest = url[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        var authority = rest[rest.startIndex..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host: Substring
        var port: Int?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { port = Int(after.dropFirst()) ; if port == nil && after.count > 1 { return nil } }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[authority.startIndex..<colon]
            let portText = authority[authority.index(after: colon)...]
            if !portText.isEmpty {
                guard let p = Int(portText), p >= 0, p <= 65535 else { return nil }
                port = p
            }
        } else {
            host = authority
        }
        guard !host.isEmpty else { return nil }
        let hostText = String(host).asciiLowercased
        let portNumber = port ?? RequestTarget.defaultPort(scheme)
        let path: String
        let query: String?
        var remainder = rest[authorityEnd...]
        if let hash = remainder.firstIndex(of: "#") { remainder = remainder[remainder.startIndex..<hash] }
        if let q = remainder.firstIndex(of: "?") {
            let p = remainder[remainder.startIndex..<q]
            path = p.isEmpty ? "/" : String(p)
            query = String(remainder[remainder.index(after: q)...])
        } else {
            path = remainder.isEmpty ? "/" : String(remainder)
            query = nil
        }
            return RequestTarget(scheme: scheme, host: hostText, port: portNumber, path: path, query: query)
    }
}

@Suite("URL splitting on bytes agrees with splitting on characters")
struct RequestTargetParityTests {
    @Test("100,000 URL-like strings built from the pieces that matter")
    func parity() {
        let pieces = ["http", "HTTPS", "ws", "x+y", "://", ":", "/", "//", "?", "#", "@", "[", "]", "::1", "a.example", "WWW.Example.COM", "8080", "65536", "-1", "+80", "é", "中文", "%2F", "q=1&b=2", " ", "", "user:pw"]
        var state: UInt64 = 42
        func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
        var parsed = 0
        for _ in 0..<100_000 {
            var url = ""
            for _ in 0..<(1 + next(9)) { url += pieces[next(pieces.count)] }
            if next(2) == 0 { url = ["http://", "https://", "HTTP://"][next(3)] + url }
            let bytes = RequestTarget(url)
            let characters = CharacterURLSplitter.parse(url)
            #expect(bytes == characters, "\(url)")
            if bytes != characters { return }
            if bytes != nil { parsed += 1 }
        }
        #expect(parsed > 10_000)
    }
}

@Suite("Sites from the public suffix table agree with the list's algorithm run by splitting")
struct SiteParityTests {
    /// The Public Suffix List's algorithm as publicsuffix.org states it, on labels: every
    /// rule that matches; an exception prevails, else the rule with the most labels, else
    /// `*`; the registrable domain is one label more.
    struct Reference {
        var rules = Set<String>(), wildcards = Set<String>(), exceptions = Set<String>()
        init() {
            for line in PublicSuffixList.rules.split(separator: "\n") {
                let rule = line.trimmingCharacters(in: .whitespaces)
                if rule.hasPrefix("!") { exceptions.insert(String(rule.dropFirst())) }
                else if rule.hasPrefix("*.") { wildcards.insert(String(rule.dropFirst(2))) }
                else if !rule.isEmpty { rules.insert(rule) }
            }
        }
        func site(_ host: String) -> String {
            if host.contains(":") || host.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || $0 == 46 }) { return host }
            let labels = host.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            func suffix(_ k: Int) -> String { labels.suffix(k).joined(separator: ".") }
            var length = 1
            var exception: Int?
            for k in 1...labels.count {
                if exceptions.contains(suffix(k)) { exception = k - 1 }
                if rules.contains(suffix(k)) || (k > 1 && wildcards.contains(suffix(k - 1))) { length = max(length, k) }
            }
            if let e = exception { length = e }
            return labels.count > length ? suffix(length + 1) : host
        }
    }

    @Test("50,000 hosts built from labels, rules, wildcards, exceptions, empty labels, IPs and non-ASCII")
    func parity() {
        let reference = Reference()
        let pieces = ["a", "www", "example", "com", "co", "uk", "cn", "il", "github", "io", "ck", "kawasaki", "jp", "city",
                      "s3", "amazonaws", "", "中文", "xn--55qx5d", "1", "255", "::1", "x-y", "blogspot", "compute", "ap-south-1"]
        var state: UInt64 = 7
        func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
        for _ in 0..<50_000 {
            let host = (0..<(1 + next(6))).map { _ in pieces[next(pieces.count)] }.joined(separator: ".")
            #expect(Site.of(host: host) == reference.site(host), "\(host)")
            if Site.of(host: host) != reference.site(host) { return }
        }
    }
}

@Suite("Byte searches in strings agree with the UTF-8 view's")
struct ByteSearchTests {
    @Test("containsByte finds a byte wherever the view finds it: native, bridged, small, large and non-ASCII strings")
    func containsByte() {
        let texts = ["", "a", "::1", "[::1]", "a.example", "https://a.example/a b?c=d'e", String(repeating: "x", count: 300) + ":", "é中文 'x'",
                     NSString(string: "bridged a:b").description, String(decoding: [0x61, 0xFF, 0x3A], as: UTF8.self)]
        for text in texts {
            for byte: UInt8 in [0x00, 0x20, 0x27, 0x2E, 0x3A, 0x61, 0x78, 0xA9, 0xFF] {
                #expect(text.containsByte(byte) == text.utf8.contains(byte), "\(text) \(byte)")
            }
        }
        #expect("https://a.example/a b".containsByte(0x20) && !"https://a.example/ab".containsByte(0x20))
    }

    @Test("asciiLowercased lowers A-Z and nothing else, in native, bridged and non-ASCII strings")
    func asciiLowercased() {
        let texts = ["", "a", "A", "Z", "/Path/To/File.PNG", "already/lower", "@[`{", "ÉCOLE/Z", String(repeating: "Q", count: 200), NSString(string: "Bridged/X").description]
        for text in texts {
            let expected = String(decoding: text.utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
            #expect(text.asciiLowercased == expected, "\(text)")
        }
    }
}
