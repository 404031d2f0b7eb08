import TrafficModel
import WebViewEmulation

/// One difference between a replay and the recording, explained.
public struct Finding: Sendable, Hashable, Codable {
    /// The fields sit behind one reference, copied only when a shared finding is changed:
    /// a finding passes from the detector through the run's results to the store and the
    /// reports, and a copy then costs one retain, not one for each of its strings and lists.
    /// Encoded and compared as the fields themselves.
    @usableFromInline struct Fields: Sendable, Hashable, Codable {
        @usableFromInline var code: FindingCode
        @usableFromInline var severity: Severity
        @usableFromInline var preset: String
        @usableFromInline var recording: String
        @usableFromInline var sequence: Int
        @usableFromInline var method: String
        @usableFromInline var url: String
        @usableFromInline var subject: String? = nil
        @usableFromInline var subjects: [String] = []
        @usableFromInline var likelihood: Double? = nil
        @usableFromInline var rank: Rank = .subresource
        @usableFromInline var rules: [RuleID]
        @usableFromInline var confidence: Confidence
        @usableFromInline var expected: FindingFields
        @usableFromInline var actual: FindingFields
        @usableFromInline var detail: FindingDetail
        @usableFromInline var alternative: String? = nil
        /// The web view's own: the run's baseline preset finds the same on this exchange.
        /// Optional so that findings encoded before it decode as they were.
        @usableFromInline var baseline: Bool? = nil
        /// What the finding rests on that the recording does not say outright. Optional so
        /// that findings encoded before it decode as they were.
        @usableFromInline var inferences: [FindingInference]? = nil
        /// A message stored whole by an earlier version, read back as it was.
        @usableFromInline var storedMessage: String? = nil
    }

    @usableFromInline final class Box: ManagedBuffer<Fields, Never> {}

    /// Safe to share across threads: a buffer is changed only once `unique()` has made it
    /// this value's alone.
    @usableFromInline nonisolated(unsafe) var box: Box

    @usableFromInline init(fields: Fields) { box = unsafeDowncast(Box.create(minimumCapacity: 0) { _ in fields }, to: Box.self) }

    /// The fields, for a change: the pointer is valid while `box` holds the buffer.
    @usableFromInline var header: UnsafeMutablePointer<Fields> { box.withUnsafeMutablePointerToHeader { $0 } }

    @usableFromInline mutating func unique() {
        if !isKnownUniquelyReferenced(&box) { self = Finding(fields: box.withUnsafeMutablePointerToHeader { $0.pointee }) }
    }

    var fields: Fields { box.withUnsafeMutablePointerToHeader { $0.pointee } }

    public static func == (a: Finding, b: Finding) -> Bool { a.box === b.box || a.fields == b.fields }
    public func hash(into hasher: inout Hasher) { fields.hash(into: &hasher) }
    public init(from decoder: any Decoder) throws { self.init(fields: try Fields(from: decoder)) }
    public func encode(to encoder: any Encoder) throws { try fields.encode(to: encoder) }

    @inlinable public var code: FindingCode {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.code } }
        _modify { unique(); yield &header.pointee.code }
    }
    @inlinable public var severity: Severity {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.severity } }
        _modify { unique(); yield &header.pointee.severity }
    }
    @inlinable public var preset: String {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.preset } }
        _modify { unique(); yield &header.pointee.preset }
    }
    @inlinable public var recording: String {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.recording } }
        _modify { unique(); yield &header.pointee.recording }
    }
    /// The exchange's 0-based index in its recording, in time order.
    @inlinable public var sequence: Int {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.sequence } }
        _modify { unique(); yield &header.pointee.sequence }
    }
    @inlinable public var method: String {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.method } }
        _modify { unique(); yield &header.pointee.method }
    }
    @inlinable public var url: String {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.url } }
        _modify { unique(); yield &header.pointee.url }
    }
    /// What the finding is about within the exchange, when several can share it: a cookie
    /// name; the first of `subjects`.
    @inlinable public var subject: String? {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.subject } }
        _modify { unique(); yield &header.pointee.subject }
    }
    /// Everything the finding concerns: every cookie of one exchange and code (a finding
    /// groups them), in header order; empty when it concerns the exchange as a whole.
    @inlinable public var subjects: [String] {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.subjects } }
        _modify { unique(); yield &header.pointee.subjects }
    }
    /// How likely the finding is, when the model cannot be sure: for a cookie a script
    /// wrote, the synchronisation delay over the window of the write (docs/model.md, "Where
    /// a cookie came from"). nil when certain.
    @inlinable public var likelihood: Double? {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.likelihood } }
        _modify { unique(); yield &header.pointee.likelihood }
    }
    /// How much it matters, by who issued the request (or which cookie it concerns).
    @inlinable public var rank: Rank {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.rank } }
        _modify { unique(); yield &header.pointee.rank }
    }
    /// The rules that produced it, and the weakest of their confidences.
    @inlinable public var rules: [RuleID] {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.rules } }
        _modify { unique(); yield &header.pointee.rules }
    }
    @inlinable public var confidence: Confidence {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.confidence } }
        _modify { unique(); yield &header.pointee.confidence }
    }
    /// Expected and actual, as named fields: body lengths and SHA-256, cookie names,
    /// URLs. Fields named in `Finding.secretFields` hold secrets and are redacted in reports.
    @inlinable public var expected: FindingFields {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.expected } }
        _modify { unique(); yield &header.pointee.expected }
    }
    @inlinable public var actual: FindingFields {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.actual } }
        _modify { unique(); yield &header.pointee.actual }
    }
    /// What happened to this exchange and why, as the parts of its sentence: rendered
    /// (`detail`) when a report shows it, stored as parts.
    @inlinable public var detailParts: FindingDetail {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.detail } }
        _modify { unique(); yield &header.pointee.detail }
    }
    /// What happened to this exchange and why, in plain words, without the rules' own
    /// statements: those come from the rule catalogue when the message is rendered.
    public var detail: String { detailParts.text }
    /// When the recording cannot say what the page used (an XHR or a fetch, a Blob or an
    /// ArrayBuffer) and the model kept the worse: which possibility this is.
    @inlinable public var alternative: String? {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.alternative } }
        _modify { unique(); yield &header.pointee.alternative }
    }
    /// The web view's own, not the strategy's: the run's baseline preset (`plain` unless
    /// `--baseline-preset` says otherwise) finds the same code, on the same exchange, for
    /// the same cookies or more. Reported once, in the baseline's section, and not counted
    /// against the preset.
    @inlinable public var baseline: Bool {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.baseline ?? false } }
        set { unique(); header.pointee.baseline = newValue ? true : nil }
    }
    /// What the finding rests on that the recording does not say outright: a cookie's
    /// source, the sending frame or API, each with what contradicts it.
    public var inferences: [FindingInference] {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.inferences } ?? [] }
        set { unique(); header.pointee.inferences = newValue.isEmpty ? nil : newValue }
    }
    /// A message stored whole by an earlier version, read back as it was.
    var storedMessage: String? {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.storedMessage } }
        _modify { unique(); yield &header.pointee.storedMessage }
    }

    /// One plain paragraph: what happened, why, and the rules with their statements and
    /// confidence, built from the detail and the rule catalogue when asked for.
    public var message: String {
        if let storedMessage { return storedMessage }
        return FindingText.message(detail: detail, rules: rules, alternative: alternative, inferences: inferences)
    }

    public init(code: FindingCode, severity: Severity, preset: String, recording: String, sequence: Int, method: String, url: String, subject: String?, rules: [RuleID], confidence: Confidence, expected: FindingFields, actual: FindingFields, detail: FindingDetail, alternative: String? = nil) {
        self.init(fields: Fields(
            code: code, severity: severity, preset: preset, recording: recording, sequence: sequence, method: method, url: url,
            subject: subject, rules: rules, confidence: confidence, expected: expected, actual: actual, detail: detail, alternative: alternative))
    }

    /// A finding whose detail is one sentence written whole.
    public init(code: FindingCode, severity: Severity, preset: String, recording: String, sequence: Int, method: String, url: String, subject: String?, rules: [RuleID], confidence: Confidence, expected: FindingFields, actual: FindingFields, detail: String, alternative: String? = nil) {
        self.init(code: code, severity: severity, preset: preset, recording: recording, sequence: sequence, method: method, url: url,
            subject: subject, rules: rules, confidence: confidence, expected: expected, actual: actual, detail: FindingDetail(text: detail), alternative: alternative)
    }

    /// Passes every free text of the finding through `transform` (secret redaction).
    public mutating func mapText(_ transform: (String) -> String) {
        detailParts.values = detailParts.values.map(transform)
        alternative = alternative.map(transform)
        storedMessage = storedMessage.map(transform)
    }

    /// A finding read back from a database written before details were stored apart.
    public init(code: FindingCode, severity: Severity, preset: String, recording: String, sequence: Int, method: String, url: String, subject: String?, rules: [RuleID], confidence: Confidence, expected: FindingFields, actual: FindingFields, storedMessage: String) {
        self.init(code: code, severity: severity, preset: preset, recording: recording, sequence: sequence, method: method, url: url, subject: subject, rules: rules, confidence: confidence, expected: expected, actual: actual, detail: storedMessage)
        self.storedMessage = storedMessage
    }

    /// Ordered for people: severity, then rank, then a lost request body of a POST before a
    /// GET, then likelihood, then the exchange.
    public static func moreImportant(_ a: Finding, _ b: Finding) -> Bool {
        if a.severity != b.severity { return a.severity > b.severity }
        if a.rank != b.rank { return a.rank < b.rank }
        let (aBody, bBody) = (a.method != "GET" && a.method != "HEAD", b.method != "GET" && b.method != "HEAD")
        if aBody != bBody { return aBody }
        if (a.likelihood ?? 1) != (b.likelihood ?? 1) { return (a.likelihood ?? 1) > (b.likelihood ?? 1) }
        return (a.recording, a.sequence) < (b.recording, b.sequence)
    }

    /// Fields of `expected` and `actual` that hold cookie values.
    public static let secretFields: Set<String> = ["value"]

    /// The identity a gate compares across runs: recording, exchange (method, URL and
    /// order), preset and code, and the subject when there is one.
    public var identity: String {
        [recording, String(sequence), method, url, preset, code.rawValue, subject ?? ""].joined(separator: "\u{1F}")
    }
}

/// A finding's message: its detail, then why, from the rule catalogue.
public enum FindingText {
    /// "...: NSURLProtocol interception drops request bodies (P1, source)."; after a detail
    /// that already has a colon, "; because ...".
    public static func message(detail: String, rules: [RuleID], alternative: String?, inferences: [FindingInference] = [], catalog: RuleCatalog = .bundled) -> String {
        var text = detail + because(rules, after: detail, catalog: catalog) + "."
        if let alternative { text += " The recording does not say what the page used; this is the worse case, \(alternative)." }
        if !inferences.isEmpty { text += " It rests on inferences: " + inferences.map(\.sentence).joined(separator: "; ") + "." }
        return text
    }

    static func because(_ rules: [RuleID], after sentence: String, catalog: RuleCatalog) -> String {
        let known = rules.compactMap { catalog[$0] }
        guard !known.isEmpty else { return rules.isEmpty ? "" : " (\(rules.map(\.rawValue).joined(separator: ", ")))" }
        let clauses = known.map { rule in
            // A measured rule says where: "S2, measured in WebKitGTK 2.50.6".
            let mark = rule.confidence == .measured ? "measured in \(rule.measurement?.engine ?? "WebKit")" : rule.confidence.rawValue
            return "\(rule.summary) (\(rule.id), \(mark))"
        }
        return (sentence.containsBytes(": ") ? "; because " : ": ") + clauses.joined(separator: "; ")
    }
}

/// How much a finding matters to the page, most first: a cookie the scenario names as
/// important (`importantCookies`), the main frame's document, a first-party API call
/// (XHR, fetch, beacon), another first-party subresource, a third party.
public enum Rank: String, Sendable, Hashable, Codable, Comparable, CaseIterable {
    case important
    case document
    case api
    case subresource
    case thirdParty = "third-party"

    /// `important` < `document` < ... : earlier matters more.
    public static func < (a: Rank, b: Rank) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// At least as important as `floor`.
    public func reaches(_ floor: Rank) -> Bool { self <= floor }

    /// The rank of a request by its initiator and frame. A request the app's own page sent
    /// (its Origin or Referer on the app's scheme, capacitor://localhost) is the app's
    /// traffic: every server is another site to that page, its API's too, so its rank
    /// goes by initiator (name third parties with the scenario's `firstPartySites`).
    public static func of(_ e: Exchange) -> Rank {
        if e.frame.thirdParty && !e.request.issuedOnAppScheme { return .thirdParty }
        if e.initiator.isDocument && e.frame.kind == .main { return .document }
        if e.initiator.isScripted { return .api }
        return .subresource
    }
}
