/// The finding codes of docs/model.md, "Finding codes". Stable: CI gates and baselines key on them.
public enum FindingCode: String, Sendable, Hashable, Codable, CaseIterable {
    case bodyLost = "BODY_LOST"
    case bodyMutated = "BODY_MUTATED"
    case bodyStreamOnly = "BODY_STREAM_ONLY"
    case bodyTooLargeForHeader = "BODY_TOO_LARGE_FOR_HEADER"
    case urlMutated = "URL_MUTATED"
    case headerAdded = "HEADER_ADDED"
    case preflightAdded = "PREFLIGHT_ADDED"
    case redirectHidden = "REDIRECT_HIDDEN"
    case redirectMethodChanged = "REDIRECT_METHOD_CHANGED"
    case redirectCookieLost = "REDIRECT_COOKIE_LOST"
    case cookieMissing = "COOKIE_MISSING"
    case cookieExtra = "COOKIE_EXTRA"
    case cookieStale = "COOKIE_STALE"
    case jarDiverged = "JAR_DIVERGED"
    case cookieCrossSiteAccepted = "COOKIE_CROSS_SITE_ACCEPTED"
    case thirdPartyIntercepted = "THIRD_PARTY_INTERCEPTED"
    case requestStalled = "REQUEST_STALLED"
    case responseMutated = "RESPONSE_MUTATED"
    case corsBlocked = "CORS_BLOCKED"
    case bodyReencoded = "BODY_REENCODED"
    case headerLost = "HEADER_LOST"
    case requestFailed = "REQUEST_FAILED"

    /// The default severity. REDIRECT_HIDDEN is an error for a document and info for a
    /// subresource; this is the document case.
    public var defaultSeverity: Severity {
        switch self {
        case .bodyStreamOnly, .bodyReencoded, .bodyTooLargeForHeader, .urlMutated, .preflightAdded, .cookieExtra, .jarDiverged, .thirdPartyIntercepted: return .warning
        case .headerAdded: return .info
        default: return .error
        }
    }
}

/// How bad a finding is; gates fail at a chosen level and above.
public enum Severity: String, Sendable, Hashable, Codable, Comparable, CaseIterable {
    case info, warning, error

    public static func < (a: Severity, b: Severity) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}
