import Testing
import TrafficModel
@testable import CookieJar

/// The Cookie header split on bytes must give what splitting it on characters gave.
@Suite("Cookie header pairs split on bytes agree with splitting on characters")
struct RequestCookiesParityTests {
    /// The split as it was: every Cookie field, on characters.
    static func characterSplit(_ headers: HeaderList) -> [(name: String, value: String)] {
        var out: [(String, String)] = []
        for header in headers.all("Cookie") {
            for piece in header.split(separator: ";") {
                let trimmed = piece.trimmingOWS
                if trimmed.isEmpty { continue }
                if let eq = trimmed.firstIndex(of: "=") {
                    out.append((String(trimmed[trimmed.startIndex..<eq]), String(trimmed[trimmed.index(after: eq)...])))
                } else {
                    out.append(("", trimmed))
                }
            }
        }
        return out
    }

    @Test("100,000 generated Cookie headers: ASCII, white space, empty pieces, CR LF, non-ASCII and combining marks")
    func parity() {
        var rng = SystemRandomNumberGenerator()
        let pieces = ["a", "b", "sid", "=", ";", " ", "\t", "\r\n", "==", "x y", "é", "\u{301}", "中", ";;", "=;", "%20", "\"q\"", "\u{7F}", "\0"]
        let names = ["Cookie", "cookie", "COOKIE", "Set-Cookie", "X-Cookie"]
        for _ in 0..<100_000 {
            var headers: HeaderList = []
            for _ in 0..<Int.random(in: 0...3, using: &rng) {
                let value = (0..<Int.random(in: 0...12, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
                headers.append(HeaderField(names.randomElement(using: &rng)!, value))
            }
            let got = CookieProvenance.requestCookies(headers)
            let want = Self.characterSplit(headers)
            #expect(got.map(\.name) == want.map(\.name) && got.map(\.value) == want.map(\.value), "\(headers)")
            if got.map(\.name) != want.map(\.name) || got.map(\.value) != want.map(\.value) { return }
        }
    }
}
