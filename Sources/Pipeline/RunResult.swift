import Findings
import ReportStore
import WebViewEmulation

/// What a run replayed of one recording under one preset: the outcomes and findings, the
/// jar's events, and what an offline package and a prefetch config did. `ReplayRunner` and
/// the observed run make them; `ReportStore` stores them (`StoredResult`).
public struct RunResult: Sendable, ReportStore.StoredResult {
    public var recording: String
    public var preset: String
    public var outcomes: [Outcome]
    public var findings: [Finding]
    public var jarEvents: [JarEvent]
    /// What an offline package and a prefetch config did, when the run had them.
    public var coverage: [CoverageItem] = []

    /// The recording had exchanges to replay (its outcomes may have been stored and let go).
    public var replayed: Bool
    /// How many of its exchanges a page sent (not the app's native code, NC1): with
    /// none, nothing a preset does to the web view's traffic was compared. Nil: not
    /// counted.
    public var pageExchanges: Int?
    /// Nothing of the preset was exercised: no exchange went through its interceptor or
    /// app shell and it has no mitigation, so its clean cell says nothing (`n/a`).
    public var idle = false

    public init(recording: String, preset: String, outcomes: [Outcome], findings: [Finding], jarEvents: [JarEvent] = [], replayed: Bool? = nil) {
        self.recording = recording
        self.preset = preset
        self.outcomes = outcomes
        self.findings = findings
        self.jarEvents = jarEvents
        self.replayed = replayed ?? !outcomes.isEmpty
    }
}
