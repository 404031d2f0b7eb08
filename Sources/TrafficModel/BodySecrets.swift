import Foundation

/// Secret values inside request bodies: a login form's `password=...`, a JSON body's
/// `"csrfToken": "..."`, a multipart field named `otp`. A sanitized export replaces each
/// with `SecretNames.token(for:)`, leaving the body of the same kind and parseable: the
/// form stays a form, the JSON the same document with the same keys, each multipart part
/// where it was. What is kept of a value is what the token says: its length in bytes and
/// a hash prefix, so equal values stay equal; the value itself is not.
extension SecretNames {
    /// Words that make a body field's name secret wherever they appear in it
    /// (`user_password`, `csrfToken`, `X-OTP`), beside the secret query names.
    public static let secretFieldWords = ["password", "passwd", "token", "secret", "csrf", "otp", "session", "auth", "key"]

    /// Whether a body field of this name holds a secret.
    public func isSecretField(_ name: String) -> Bool {
        let lower = name.lowercased()
        return queryParameters.contains(lower) || Self.secretFieldWords.contains { lower.contains($0) }
    }

    /// The request body with its secret fields replaced, by the Content-Type: form
    /// (`application/x-www-form-urlencoded`), JSON, or multipart form data; any other body
    /// as it was. Content-Length, when the request has one, follows the new body.
    public func redactBodySecrets(_ request: inout RecordedRequest) {
        guard !request.body.isEmpty, let given = request.headers.first("Content-Type") else { return }
        let type = given.lowercased()
        let redacted: Data?
        if type.hasPrefix("application/x-www-form-urlencoded") {
            redacted = redactForm(request.body)
        } else if type.hasPrefix("application/json") || type.contains("+json") {
            redacted = redactJSON(request.body)
        } else if type.hasPrefix("multipart/form-data"), let boundary = Self.boundary(of: given) {
            redacted = redactMultipart(request.body, boundary: boundary)
        } else {
            redacted = nil
        }
        guard let redacted, redacted != request.body else { return }
        request.body = redacted
        request.headers = HeaderList(request.headers.lazy.map { field in
            field.name.caseInsensitiveEquals("content-length") ? HeaderField(field.name, String(redacted.count)) : field
        })
    }

    /// A WebSocket's text messages as a request body of their kind is sanitized: in a JSON
    /// message each secret member's value replaced, and a secret query value in a URL it
    /// quotes; binary messages and other text as they were.
    public func redactMessageSecrets(_ e: inout Exchange) {
        guard !e.webSocketMessages.isEmpty else { return }
        e.webSocketMessages = e.webSocketMessages.map { m in
            guard m.opcode == 1 else { return m }
            var out = m
            if let redacted = redactJSON(m.data) {
                out.data = redacted
            } else if let text = String(data: m.data, encoding: .utf8), text.contains("?") {
                out.data = Data(text.split(separator: " ", omittingEmptySubsequences: false).map { mapSecretQueryValues(String($0), Self.token) }.joined(separator: " ").utf8)
            }
            return out
        }
    }

    /// `a=1&password=hunter2` with the secret values replaced; nil when nothing is secret.
    func redactForm(_ body: Data) -> Data? {
        guard let text = String(data: body, encoding: .utf8) else { return nil }
        var changed = false
        let parts = text.split(separator: "&", omittingEmptySubsequences: false).map { part -> String in
            guard let eq = part.firstIndex(of: "=") else { return String(part) }
            let name = String(part[..<eq]).replacingOccurrences(of: "+", with: " ")
            guard isSecretField(name.removingPercentEncoding ?? name) else { return String(part) }
            changed = true
            let value = String(part[part.index(after: eq)...])
            return "\(part[..<eq])=\(Self.token(for: value.removingPercentEncoding ?? value))"
        }
        return changed ? Data(parts.joined(separator: "&").utf8) : nil
    }

    /// A JSON body with each secret member's value (a string or a number, at any depth)
    /// replaced; nil when it does not parse or nothing is secret.
    public func redactJSON(_ body: Data) -> Data? {
        guard let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) else { return nil }
        var changed = false
        func walk(_ value: Any, key: String?) -> Any {
            if let dictionary = value as? [String: Any] {
                return dictionary.reduce(into: [String: Any]()) { out, member in out[member.key] = walk(member.value, key: member.key) }
            }
            if let array = value as? [Any] { return array.map { walk($0, key: key) } }
            // A string or a number (an OTP sent as one); true, false and null say nothing.
            guard let key, isSecretField(key), value is String || value is NSNumber else { return value }
            let text = (value as? String) ?? "\(value)"
            if !(value is String), text == "true" || text == "false" { return value }
            changed = true
            return Self.token(for: text)
        }
        let redacted = walk(object, key: nil)
        guard changed else { return nil }
        return try? JSONSerialization.data(withJSONObject: redacted, options: [.fragmentsAllowed, .sortedKeys, .withoutEscapingSlashes])
    }

    /// Multipart form data with each secret field's content replaced (a file part too);
    /// nil when nothing is secret or the body is not split by its boundary.
    func redactMultipart(_ body: Data, boundary: String) -> Data? {
        let delimiter = Data(("--" + boundary).utf8)
        var parts: [Data] = []
        var rest = body[...]
        while let range = rest.range(of: delimiter) {
            parts.append(Data(rest[..<range.lowerBound]))
            rest = rest[range.upperBound...]
        }
        parts.append(Data(rest))
        guard parts.count > 2 else { return nil }
        var changed = false
        let separator = Data("\r\n\r\n".utf8)
        for k in 1..<(parts.count - 1) {
            guard let split = parts[k].range(of: separator) else { continue }
            let head = String(decoding: parts[k][..<split.lowerBound], as: UTF8.self)
            guard let name = Self.fieldName(in: head), isSecretField(name) else { continue }
            var content = parts[k][split.upperBound...]
            let trailer = content.suffix(2) == Data("\r\n".utf8) ? Data("\r\n".utf8) : Data()
            content = content.dropLast(trailer.count)
            parts[k] = Data(parts[k][..<split.upperBound]) + Data(Self.token(for: String(decoding: content, as: UTF8.self)).utf8) + trailer
            changed = true
        }
        guard changed else { return nil }
        var out = parts[0]
        for part in parts.dropFirst() { out += delimiter + part }
        return out
    }

    /// `name="..."` of a part's Content-Disposition.
    static func fieldName(in head: String) -> String? {
        guard let start = head.range(of: "name=\"", options: .caseInsensitive) else { return nil }
        let after = head[start.upperBound...]
        return after.firstIndex(of: "\"").map { String(after[..<$0]) }
    }

    /// The boundary parameter of a multipart Content-Type, unquoted.
    static func boundary(of type: String) -> String? {
        guard let range = type.range(of: "boundary=", options: .caseInsensitive) else { return nil }
        var value = type[range.upperBound...].prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces)
        if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
        return value.isEmpty ? nil : value
    }
}
