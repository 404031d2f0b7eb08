import CookieJar
import TrafficModel

/// `show --headers`: an exchange's request and response headers as recorded, each
/// Set-Cookie with what a browser's jar does with it (stored, deletes, or refused and
/// why), as Charles and mitmproxy let a person check a verdict by hand. Secret values are
/// redacted unless the redactor shows secrets; a cookie keeps its name.
struct RecordedHeaders {
    let redactor: Redactor

    /// What a jar does with one Set-Cookie of the response to `e`, read on its own.
    struct SetCookieVerdict {
        var header: String
        var verdict: String
        var reason: String?
    }

    func request(_ e: Exchange) -> [(name: String, value: String)] {
        e.request.headers.map { ($0.name, shown($0.name, $0.value)) }
    }

    func response(_ e: Exchange) -> [(name: String, value: String)] {
        e.response.headers.map { ($0.name, shown($0.name, $0.value)) }
    }

    /// Each Set-Cookie with the jar's verdict: stored, deletes (an expiry in the past), or
    /// refused and why (a Domain the host is not under, Secure over http, a __Host- prefix
    /// broken...).
    func setCookies(_ e: Exchange) -> [SetCookieVerdict] {
        guard let target = e.request.target else { return [] }
        return e.response.headers.all("Set-Cookie").map { header in
            var jar = CookieStore()
            let shownHeader = shown("Set-Cookie", header)
            switch jar.receive(header, from: target, at: e.responseArrivedAt) {
            case .stored: return SetCookieVerdict(header: shownHeader, verdict: "stored")
            case .deleted: return SetCookieVerdict(header: shownHeader, verdict: "deletes", reason: "its expiry is in the past")
            case .ignored(let reason): return SetCookieVerdict(header: shownHeader, verdict: "refused", reason: reason)
            }
        }
    }

    /// A header value as it may be shown: cookie values and secret headers redacted.
    func shown(_ name: String, _ value: String) -> String {
        guard !redactor.showSecrets else { return value }
        switch name.lowercased() {
        case "cookie":
            return value.split(separator: ";").map { pair in
                let trimmed = pair.trimmingOWS
                guard let eq = trimmed.firstIndex(of: "=") else { return String(trimmed) }
                return "\(trimmed[..<eq])=<redacted>"
            }.joined(separator: "; ")
        case "set-cookie":
            guard let eq = value.firstIndex(of: "=") else { return value }
            let end = value[eq...].firstIndex(of: ";") ?? value.endIndex
            return "\(value[..<eq])=<redacted>\(value[end...])"
        default:
            return redactor.names.isSecretHeader(name) ? "<redacted, \(value.utf8.count) bytes>" : redactor.text(value)
        }
    }
}
