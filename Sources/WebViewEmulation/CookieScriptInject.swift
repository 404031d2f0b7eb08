import CookieJar
import TrafficModel

/// A document-start user script writes NativeJar into `document.cookie`
/// (C3-C6).
public struct CookieScriptInject: Mitigation {
    public init() {}
    public var options: [String: String] { [:] }
    public var citedRules: [RuleID] { ["C3", "C4", "C5", "C6"] }

    public var hooks: MitigationHooks {
        MitigationHooks(documentStart: { start in Self.inject(start) })
    }

    /// The seed scripts write every NativeJar cookie of the page at document start:
    /// HttpOnly ones are dropped by WebKit (C3), values holding a quote are skipped by the
    /// script (C4), persistent ones are capped at 7 days (C6); nothing happens after
    /// document start (C5).
    static func inject(_ start: DocumentStart) -> [DocumentCookieWrite] {
        start.nativeCookies.map { original in
            if original.httpOnly { return .blocked(name: original.name, rule: "C3") }
            if original.value.containsByte(UInt8(ascii: "'")) { return .blocked(name: original.name, rule: "C4") }
            var cookie = original
            var rules: [RuleID] = ["C5"]
            if start.capsScriptCookies, let expiry = cookie.expiry, expiry > start.time + 7 * 86_400 {
                cookie.expiry = start.time + 7 * 86_400
                rules.append("C6")
            }
            return .written(cookie, rules: rules)
        }
    }
}

extension CookieScriptInject: PresetPart {
    public static var kindName: String { "cookie-script-inject" }
    public init(options: NoOptions) {}
}
