import TrafficModel

/// What happened to an exchange, kept as the parts its sentence is made of: the sentence's
/// form and the values it names (the exchange's label first). A report renders it into
/// words (`text`) when it shows the finding; the store keeps the parts, so a run of many
/// findings builds only the sentences someone reads.
public struct FindingDetail: Sendable, Hashable, Codable {
    /// One per sentence shape. The raw value is what the store writes.
    public enum Form: String, Sendable, Hashable, Codable, CaseIterable {
        /// A sentence written whole: one value (a finding made by hand, or read back from a
        /// database written before details were stored as parts).
        case text
        /// label, URL: D5.
        case requestFailedNoSNI = "request-failed-no-sni"
        /// label, URL: D4.
        case requestFailedCertificate = "request-failed-certificate"
        /// label.
        case requestStalled = "request-stalled"
        /// label, URL delivered.
        case urlMutated = "url-mutated"
        /// label, header name.
        case headerLost = "header-lost"
        /// label, header name.
        case headerAdded = "header-added"
        /// label.
        case preflightAdded = "preflight-added"
        /// label, body length.
        case bodyTooLargeForHeader = "body-too-large-for-header"
        /// label.
        case bodyStreamOnly = "body-stream-only"
        /// label: O2.
        case responseFromPackage = "response-from-package"
        /// label: X2.
        case responseMangled = "response-mangled"
        /// label, the CORS reason.
        case corsBlocked = "cors-blocked"
        /// label, the CORS reason: what the recording cannot tell.
        case corsUnverified = "cors-unverified"
        /// label.
        case thirdPartyIntercepted = "third-party-intercepted"
        /// label, cookie name.
        case cookieCrossSiteAccepted = "cookie-cross-site-accepted"
        /// label, status of the hop before, method delivered, "empty" or "other" body.
        case redirectMethodChanged = "redirect-method-changed"
        /// label, recorded length, and the reason when there is one.
        case bodyLost = "body-lost"
        /// label, delivered length, recorded length, and the reason when there is one.
        case bodyReencoded = "body-reencoded"
        /// label, delivered length, recorded length, and the reason when there is one.
        case bodyMutated = "body-mutated"
        /// label, the page's URL, the chain's last URL.
        case redirectHiddenDocument = "redirect-hidden-document"
        /// label, the chain's last URL.
        case redirectHidden = "redirect-hidden"
        /// label, then each cookie's name and explanation.
        case redirectCookieLost = "redirect-cookie-lost"
        case cookieMissing = "cookie-missing"
        case cookieExtra = "cookie-extra"
        case cookieStale = "cookie-stale"
        /// For each cookie: name, domain, path, where it is ("web", "native" or "both"),
        /// explanation.
        case jarDiverged = "jar-diverged"
    }

    public var form: Form
    public var values: [String]

    public init(_ form: Form, _ values: [String]) {
        self.form = form
        self.values = values
    }

    /// A sentence written whole.
    public init(text: String) { self.init(.text, [text]) }

    /// How many cookies a grouped sentence names before "and N more".
    static let namedCookies = 8

    /// The sentence, in plain words.
    public var text: String {
        let v = values
        func value(_ i: Int) -> String { i < v.count ? v[i] : "" }
        let label = value(0)
        func because(_ i: Int) -> String { v.count > i ? ", because \(v[i])" : "" }
        switch form {
        case .text:
            return value(0)
        case .requestFailedNoSNI:
            return "\(label) fails before any server answers: it goes to \(Self.shortURL(value(1))) without SNI, and that IP serves several names"
        case .requestFailedCertificate:
            return "\(label) fails before any server answers: it goes to \(Self.shortURL(value(1))), whose certificate names the host, not the IP"
        case .requestStalled:
            return "\(label) is never sent"
        case .urlMutated:
            return "\(label) reaches the server as \(Self.shortURL(value(1)))"
        case .headerLost:
            return "\(label) reaches the server without the \(value(1)) header the page sent"
        case .headerAdded:
            return "\(label) reaches the server with a \(value(1)) header the page did not send"
        case .preflightAdded:
            return "\(label) now needs a CORS preflight (an extra OPTIONS request) because a custom header makes it non-simple"
        case .bodyTooLargeForHeader:
            return "\(label) moves a \(value(1))-byte body into a header, more than anyone has measured to work"
        case .bodyStreamOnly:
            return "\(label) hands its body to the scheme handler only as a stream; a handler that reads HTTPBody sees nothing"
        case .responseFromPackage:
            return "\(label) is served the offline package's file, not what the server sent"
        case .responseMangled:
            return "\(label) gets its binary response mangled by the JSON bridge"
        case .corsBlocked:
            return "\(label) is sent from the app's own origin, and the page may not read its response: \(value(1))"
        case .corsUnverified:
            return "\(label) is sent from the app's own origin; whether the page may read its response is not in the recording: \(value(1))"
        case .thirdPartyIntercepted:
            return "\(label) belongs to a third-party site but goes through the app's interceptor"
        case .cookieCrossSiteAccepted:
            return "Before \(label.lowercasedFirst) a script set the cookie \(value(1)) for another site, and the native setter hook accepted it"
        case .redirectMethodChanged:
            return "\(label) follows a \(value(1)) redirect that must keep its method and body, but is re-issued as \(value(2)) with \(value(3) == "empty" ? "an empty body" : "another body")"
        case .bodyLost:
            return "\(label) reaches the server with an empty body (\(value(1)) bytes recorded)" + because(2)
        case .bodyReencoded:
            return "\(label) reaches the server with the same fields in other bytes (\(value(1)) bytes instead of \(value(2)))" + because(3)
        case .bodyMutated:
            return "\(label) reaches the server with a different body (\(value(1)) bytes instead of \(value(2)))" + because(3)
        case .redirectHiddenDocument:
            return "After \(label.lowercasedFirst) the page stays at \(Self.shortURL(value(1))) instead of following the redirect to \(Self.shortURL(value(2)))"
        case .redirectHidden:
            return "\(label) is redirected to \(Self.shortURL(value(1))) without the page knowing"
        case .redirectCookieLost, .cookieMissing, .cookieExtra, .cookieStale:
            return cookieSentence(label)
        case .jarDiverged:
            return divergenceSentence()
        }
    }

    /// The cookie forms: label, then (name, explanation) pairs.
    func cookieSentence(_ label: String) -> String {
        var names: [String] = [], explanations: [String] = []
        var i = 1
        while i + 1 < values.count {
            names.append(values[i])
            explanations.append(values[i + 1])
            i += 2
        }
        guard let first = names.first else { return label }
        let one = names.count == 1
        let shown = names.prefix(Self.namedCookies).joined(separator: ", ")
        let listed = names.count > Self.namedCookies ? shown + " and \(names.count - Self.namedCookies) more" : shown
        // Say each distinct reason once, after the cookies it explains.
        var reasons: [(explanation: String, names: [String])] = []
        for (name, explanation) in zip(names, explanations) {
            if let k = reasons.firstIndex(where: { $0.explanation == explanation }) { reasons[k].names.append(name) } else { reasons.append((explanation, [name])) }
        }
        let why = reasons.count == 1 ? reasons[0].explanation
            : reasons.prefix(Self.namedCookies).map { "\($0.names.joined(separator: ", ")): \($0.explanation)" }.joined(separator: "; ")
        switch form {
        case .redirectCookieLost:
            return one ? "\(label) is sent without the cookie \(first), which a redirect response set and the recording carried: \(why)"
                : "\(label) is sent without \(names.count) cookies a redirect response set and the recording carried (\(listed)): \(why)"
        case .cookieMissing:
            return one ? "\(label) is sent without the cookie \(first), which the recording carried: \(why)"
                : "\(label) is sent without \(names.count) cookies the recording carried (\(listed)): \(why)"
        case .cookieExtra:
            return one ? "\(label) carries the cookie \(first), which the recording did not: \(why)"
                : "\(label) carries \(names.count) cookies the recording did not (\(listed)): \(why)"
        default:
            return one ? "\(label) carries an older value of the cookie \(first): \(why)"
                : "\(label) carries older values of \(names.count) cookies (\(listed)): \(why)"
        }
    }

    /// The jar divergence: (name, domain, path, where, explanation) per cookie.
    func divergenceSentence() -> String {
        var cookies: [(name: String, domain: String, path: String, place: String, explanation: String)] = []
        var i = 0
        while i + 4 < values.count {
            cookies.append((values[i], values[i + 1], values[i + 2], values[i + 3], values[i + 4]))
            i += 5
        }
        guard let first = cookies.first else { return "At the end of the flow NativeJar and WebJar disagree" }
        func place(_ where_: String) -> String {
            where_ == "web" ? "only WebJar holds" : where_ == "native" ? "only NativeJar holds" : "NativeJar and WebJar hold different values"
        }
        if cookies.count == 1 {
            return "At the end of the flow \(place(first.place))\(first.place == "both" ? " of" : "") the cookie \(first.name) (\(first.domain)\(first.path)) (\(first.explanation))"
        }
        return "At the end of the flow NativeJar and WebJar disagree on \(cookies.count) cookies: "
            + cookies.prefix(Self.namedCookies).map { "\($0.name) (\($0.domain)\($0.path); \(place($0.place)); \($0.explanation))" }.joined(separator: "; ")
            + (cookies.count > Self.namedCookies ? "; and \(cookies.count - Self.namedCookies) more" : "")
    }

    /// `url` as findings show it; `parsed`, when given, is `url` already parsed.
    public static func shortURL(_ url: String, parsed: RequestTarget? = nil) -> String {
        // An app's own scheme (app://localhost) says where the request went; http(s) goes without saying.
        let target = parsed ?? RequestTarget(url)
        let scheme = target?.scheme ?? url.prefix { $0 != ":" }.lowercased()
        var shown = target?.hostAndPath ?? url
        if scheme != "http" && scheme != "https" { shown = scheme + "://" + shown }
        // No more characters than bytes: most URLs are measured without counting characters.
        return shown.utf8.count > 100 && shown.count > 100 ? String(shown.prefix(97)) + "..." : shown
    }
}

extension String {
    /// The string with its first letter lowercased ("The XHR ..." after "After").
    var lowercasedFirst: String {
        // Labels start with an ASCII capital: lowercase that byte alone.
        if let first = utf8.first, first >= 65, first <= 90 {
            var bytes = Array(utf8)
            bytes[0] |= 0x20
            return String(decoding: bytes, as: UTF8.self)
        }
        return prefix(1).lowercased() + dropFirst()
    }
}
