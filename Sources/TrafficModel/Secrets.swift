import Crypto
import Foundation

/// Which header and query-parameter values are secrets (docs/design.md, "Reliability and security"), and how to
/// hide them: in output (`redactURL`, `redactText`) or at rest (`redactAtRest`).
///
/// Cookie values are always secrets. The defaults add `Authorization`,
/// `Proxy-Authorization` and common token parameters; `--secret-header` and
/// `--secret-query`, or `H5REPLAY_SECRET_HEADERS` and `H5REPLAY_SECRET_QUERY` (comma
/// lists), add more.
public struct SecretNames: Sendable, Hashable {
    /// Lowercased header names whose whole value is secret.
    public var headers: Set<String>
    /// Lowercased query-parameter names whose value is secret.
    public var queryParameters: Set<String>

    public static let defaultHeaders: Set<String> = ["authorization", "proxy-authorization", "x-auth-token", "x-api-key", "x-csrf-token"]
    public static let defaultQueryParameters: Set<String> = [
        "token", "access_token", "id_token", "refresh_token", "auth", "password", "passwd", "pwd", "secret",
        "api_key", "apikey", "key", "sig", "signature", "ticket", "session", "sessionid", "sid", "code",
    ]

    public init(headers: Set<String> = SecretNames.defaultHeaders, queryParameters: Set<String> = SecretNames.defaultQueryParameters) {
        self.headers = Set(headers.map { $0.lowercased() })
        self.queryParameters = Set(queryParameters.map { $0.lowercased() })
    }

    public static let `default` = SecretNames()

    /// The defaults, plus names from the environment and from flags.
    public static func configured(headers: [String] = [], queryParameters: [String] = [], environment: [String: String] = ProcessInfo.processInfo.environment) -> SecretNames {
        func list(_ key: String) -> [String] {
            (environment[key] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        var names = SecretNames.default
        for h in headers + list("H5REPLAY_SECRET_HEADERS") { names.headers.insert(h.lowercased()) }
        for q in queryParameters + list("H5REPLAY_SECRET_QUERY") { names.queryParameters.insert(q.lowercased()) }
        return names
    }

    public func isSecretHeader(_ name: String) -> Bool { headers.contains(name.lowercased()) }

    /// The URL with each secret query parameter's value replaced by `transform(value)`.
    public func mapSecretQueryValues(_ url: String, _ transform: (String) -> String) -> String {
        guard let q = url.firstIndex(of: "?") else { return url }
        let end = url[q...].firstIndex(of: "#") ?? url.endIndex
        let query = url[url.index(after: q)..<end]
        var changed = false
        let parts = query.split(separator: "&", omittingEmptySubsequences: false).map { part -> String in
            guard let eq = part.firstIndex(of: "=") else { return String(part) }
            let name = part[..<eq]
            let decodedName = (String(name).removingPercentEncoding ?? String(name)).lowercased()
            guard queryParameters.contains(decodedName) else { return String(part) }
            changed = true
            return "\(name)=\(transform(String(part[part.index(after: eq)...])))"
        }
        guard changed else { return url }
        return String(url[...q]) + parts.joined(separator: "&") + String(url[end...])
    }

    /// For output: secret query values become `<redacted>`.
    public func redactURL(_ url: String) -> String {
        mapSecretQueryValues(url) { _ in "<redacted>" }
    }

    /// For output: every URL-like run of text (up to a space or quote) with secret query
    /// values hidden. Messages and diagnostics quote URLs.
    public func redactText(_ text: String) -> String {
        guard text.contains("?") else { return text }
        var out = ""
        var word = ""
        func flush() {
            out += word.contains("?") ? redactURL(word) : word
            word = ""
        }
        for c in text {
            if c == " " || c == "\"" || c == "'" || c == "\n" || c == "<" || c == ">" || c == "(" || c == ")" {
                flush()
                out.append(c)
            } else {
                word.append(c)
            }
        }
        flush()
        return out
    }

    /// At rest: a stand-in that keeps a value's length and identity (equal values stay
    /// equal, so cookie provenance and findings still work) without the value. A quote in
    /// the value is kept too: the behaviour model acts on it (C4, a script that writes
    /// cookies skips values holding one).
    public static func token(for value: String) -> String {
        let digest = SHA256.hash(data: Data(value.utf8)).hexString.prefix(12)
        return "redacted-\(value.utf8.count)-\(digest)" + (value.contains("'") ? "'" : "")
    }

    /// `import --redact`: cookie values (Cookie and Set-Cookie), secret headers and secret
    /// query values are replaced by `token(for:)` in URLs and headers. Bodies, with their
    /// lengths and hashes, are kept.
    public func redactAtRest(_ recording: inout Recording) {
        for i in recording.exchanges.indices { redactAtRest(&recording.exchanges[i]) }
    }

    /// `redactAtRest` for one exchange, as a streaming import stores it.
    public func redactAtRest(_ e: inout Exchange) {
        e.request.url = mapSecretQueryValues(e.request.url, Self.token)
        e.request.headers = HeaderList(e.request.headers.lazy.map { redactAtRest($0) })
        e.response.headers = HeaderList(e.response.headers.lazy.map { redactAtRest($0) })
        if let redirect = e.response.redirectURL { e.response.redirectURL = mapSecretQueryValues(redirect, Self.token) }
    }

    func redactAtRest(_ h: HeaderField) -> HeaderField {
        let name = h.name.lowercased()
        if name == "cookie" {
            let pairs = h.value.split(separator: ";", omittingEmptySubsequences: false).map { pair -> String in
                guard let eq = pair.firstIndex(of: "=") else { return String(pair) }
                return "\(pair[...eq])\(Self.token(for: String(pair[pair.index(after: eq)...]).trimmingCharacters(in: .whitespaces)))"
            }
            return HeaderField(h.name, pairs.joined(separator: ";"))
        }
        if name == "set-cookie" {
            let semicolon = h.value.firstIndex(of: ";") ?? h.value.endIndex
            let pair = h.value[..<semicolon]
            guard let eq = pair.firstIndex(of: "=") else { return h }
            let value = String(pair[pair.index(after: eq)...]).trimmingCharacters(in: .whitespaces)
            return HeaderField(h.name, "\(pair[...eq])\(Self.token(for: value))\(h.value[semicolon...])")
        }
        if name == "location" || name == "referer" || name == "content-location" {
            return HeaderField(h.name, mapSecretQueryValues(h.value, Self.token))
        }
        if headers.contains(name) { return HeaderField(h.name, Self.token(for: h.value)) }
        return h
    }
}
