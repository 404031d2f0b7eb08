import Foundation

/// The Netscape cookies.txt format that curl, wget and browser extensions write:
/// one cookie per line, seven tab-separated fields
/// `domain  include-subdomains  path  secure  expiry  name  value`, an expiry of 0 for a
/// session cookie, and a `#HttpOnly_` prefix on the domain of an HttpOnly cookie.
public enum CookieFile {
    public struct ParseError: Error, CustomStringConvertible, Sendable {
        public let line: Int
        public let problem: String
        public var description: String { "line \(line): \(problem)" }
    }

    /// Parses a cookies.txt; `creation` stamps every cookie (the file does not say).
    public static func parse(_ text: String, creation: Double) throws -> [Cookie] {
        var cookies: [Cookie] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = Substring(rawLine)
            if line.hasSuffix("\r") { line = line.dropLast() }
            var httpOnly = false
            if line.hasPrefix("#HttpOnly_") {
                httpOnly = true
                line = line.dropFirst("#HttpOnly_".count)
            } else if line.hasPrefix("#") || line.allSatisfy({ $0 == " " || $0 == "\t" }) {
                continue
            }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 7 || fields.count == 6 else {
                throw ParseError(line: index + 1, problem: "expected 7 tab-separated fields (domain, subdomains, path, secure, expiry, name, value), found \(fields.count)")
            }
            var domain = String(fields[0]).lowercased()
            let includeSubdomains = fields[1].uppercased() == "TRUE"
            if domain.hasPrefix(".") { domain.removeFirst() }
            guard !domain.isEmpty else { throw ParseError(line: index + 1, problem: "empty domain") }
            guard let expiry = Double(fields[4]) else { throw ParseError(line: index + 1, problem: "expiry \"\(fields[4])\" is not a number of seconds") }
            cookies.append(Cookie(
                name: String(fields[5]), value: fields.count == 7 ? String(fields[6]) : "",
                domain: domain, hostOnly: !includeSubdomains, path: fields[2].isEmpty ? "/" : String(fields[2]),
                expiry: expiry == 0 ? nil : expiry, secure: fields[3].uppercased() == "TRUE", httpOnly: httpOnly,
                creation: creation))
        }
        return cookies
    }

    /// Writes cookies in the same format, one per line, in jar order.
    public static func serialise(_ cookies: [Cookie]) -> String {
        var out = "# Netscape HTTP Cookie File\n"
        for c in cookies {
            let domain = (c.httpOnly ? "#HttpOnly_" : "") + (c.hostOnly ? "" : ".") + c.domain
            let expiry = c.expiry.map { String(Int64($0.rounded(.down))) } ?? "0"
            out += [domain, c.hostOnly ? "FALSE" : "TRUE", c.path, c.secure ? "TRUE" : "FALSE", expiry, c.name, c.value].joined(separator: "\t") + "\n"
        }
        return out
    }
}
