import WebViewEmulation

/// One difference between a replay and the recording, explained.
public struct Finding: Sendable, Hashable, Codable {
    public var code: FindingCode
    public var severity: Severity
    public var preset: String
    public var recording: String
    /// The exchange's 0-based index in its recording, in time order.
    public var sequence: Int
    public var method: String
    public var url: String
    /// What the finding is about within the exchange, when several can share it: a cookie name.
    public var subject: String?
    /// The rules that produced it, and the weakest of their confidences.
    public var rules: [RuleID]
    public var confidence: Confidence
    /// Expected and actual, as named fields: body lengths and SHA-256, cookie names,
    /// URLs. Fields named in `Finding.secretFields` hold secrets and are redacted in reports.
    public var expected: [String: String]
    public var actual: [String: String]
    /// One plain sentence: what happened, why, and the rules with their confidence.
    public var message: String

    public init(code: FindingCode, severity: Severity, preset: String, recording: String, sequence: Int, method: String, url: String, subject: String?, rules: [RuleID], confidence: Confidence, expected: [String: String], actual: [String: String], message: String) {
        self.code = code
        self.severity = severity
        self.preset = preset
        self.recording = recording
        self.sequence = sequence
        self.method = method
        self.url = url
        self.subject = subject
        self.rules = rules
        self.confidence = confidence
        self.expected = expected
        self.actual = actual
        self.message = message
    }

    /// Fields of `expected` and `actual` that hold cookie values.
    public static let secretFields: Set<String> = ["value"]

    /// The identity a gate compares across runs: recording, exchange (method, URL and
    /// order), preset and code, and the subject when there is one.
    public var identity: String {
        [recording, String(sequence), method, url, preset, code.rawValue, subject ?? ""].joined(separator: "\u{1F}")
    }
}
