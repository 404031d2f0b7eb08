import Findings
import Foundation
import ReportStore
import TrafficModel
import WebViewEmulation

/// Turns what reached `serve` (its stored arrivals) into a run with preset `observed`
/// (docs/design.md, "Replay"), so that the same detectors compare the real client with the
/// recording: bodies lost or changed, Cookie headers that differ, requests that never
/// arrived, redirect hops not followed. Observed findings cite no model rule: they are what
/// happened. It lives here, not in ReplayServer, so that the NIO origin detects nothing.
public enum ObservedRun {
    public static let preset = "observed"

    public struct Result: Sendable {
        public var recording: Recording
        public var outcomes: [Outcome]
        public var findings: [Finding]
    }

    /// What reached one `serve` session: its arrivals as stored, and the results they make.
    public struct Observed: Sendable {
        public var arrivals: [ReportStore.ArrivalRecord]
        public var results: [Result]
        /// The arrivals no recorded exchange answered.
        public var unmatched: [ReportStore.ArrivalRecord]
    }

    /// A recorded exchange an arrival matched: the recording's place in the session's
    /// list and the exchange's sequence.
    public typealias Ref = ExchangeRef

    /// Reads a session's stored arrivals and holds them against its recordings.
    public static func observe(_ session: ReportStore.ServeSession, recordings: [Recording], store: ReportStore) throws -> Observed {
        let index = Dictionary(recordings.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
        let arrivals = try store.pendingArrivals(session: session.id)
        let matched = arrivals.map { a in a.recordingName.flatMap { index[$0] }.flatMap { r in a.sequence.map { Ref(recording: r, sequence: $0) } } }
        let results = build(recordings: recordings, arrivals: zip(matched, arrivals).map { ($0, $1.method, $1.headers, $1.body) })
        let unmatched = zip(matched, arrivals).filter { $0.0 == nil }.map { $0.1 }
        return Observed(arrivals: arrivals, results: results, unmatched: unmatched)
    }

    /// Stores the observed run and ends the session (`ReportStore.finishServeSession`);
    /// nil when no recorded exchange was requested.
    public static func store(_ observed: Observed, session: ReportStore.ServeSession, in store: ReportStore, toolVersion: String) throws -> Int64? {
        try store.finishServeSession(
            session.id,
            results: observed.results.map { RunResult(recording: $0.recording.name, preset: preset, outcomes: $0.outcomes, findings: $0.findings) },
            recordings: observed.results.map(\.recording), label: session.label, toolVersion: toolVersion)
    }

    /// One arrival as the detectors read it: the exchange it matched, what was sent.
    public typealias Arrival = (matched: Ref?, method: String, headers: HeaderList, body: Data)

    /// One result per recording that at least one arrival matched.
    public static func build(recordings: [Recording], arrivals: [Arrival], detector: FindingDetector = FindingDetector()) -> [Result] {
        var byExchange: [Ref: Arrival] = [:]
        for a in arrivals {
            guard let ref = a.matched, byExchange[ref] == nil else { continue }
            byExchange[ref] = a
        }
        var results: [Result] = []
        for (r, recording) in recordings.enumerated() {
            let arrived = { (sequence: Int) in byExchange[Ref(recording: r, sequence: sequence)] }
            guard recording.exchanges.contains(where: { arrived($0.sequence) != nil }) else { continue }
            let outcomes = recording.exchanges.compactMap { e in outcome(of: e, in: recording, arrived: arrived) }
            let result = EmulationResult(preset: preset, outcomes: outcomes, divergences: [], jarEvents: [])
            results.append(Result(recording: recording, outcomes: outcomes, findings: detector.findings(for: recording, result: result)))
        }
        return results
    }

    /// What became of one recorded exchange at the origin: its arrival as an outcome, a
    /// missing outcome when it never came, nil when no page would have asked for it.
    static func outcome(of e: Exchange, in recording: Recording, arrived: (Int) -> Arrival?) -> Outcome? {
        guard let a = arrived(e.sequence) else {
            // A redirect target that never came is the chain start's finding.
            if (e.redirect?.hop ?? 0) > 0 { return nil }
            // A favicon is the browser's own chrome, not the page's traffic: Chromium
            // asks for one, WebKit (WKWebView, WebKitGTK) does not.
            if e.request.target?.path == "/favicon.ico" { return nil }
            // The app's native code sent it (NC1): no page asks for it.
            if e.initiator == .native { return nil }
            var missing = Outcome(sequence: e.sequence, deliveredMethod: e.request.method, deliveredURL: e.request.url, deliveredBody: .empty)
            missing.observedMissing = true
            return missing
        }
        var outcome = Outcome(sequence: e.sequence, deliveredMethod: a.method, deliveredURL: e.request.url, deliveredBody: BodyFingerprint(a.body))
        outcome.cookieDifferences = cookieDifferences(recorded: e.request.headers, arrived: a.headers)
        if let link = e.redirect, link.hop == 0, link.next != nil {
            // Follow the chain while its hops arrived: the page ends at the last one.
            var last = e
            while let next = last.redirect?.next, arrived(next) != nil { last = recording.exchanges[next] }
            outcome.pageURL = last.request.url
        }
        return outcome
    }

    static func cookiePairs(_ headers: HeaderList) -> [(String, String)] {
        headers.all("Cookie").flatMap { $0.split(separator: ";") }.compactMap { pair in
            let trimmed = pair.trimmingCharacters(in: .whitespaces)
            guard let eq = trimmed.firstIndex(of: "=") else { return trimmed.isEmpty ? nil : ("", trimmed) }
            return (String(trimmed[..<eq]), String(trimmed[trimmed.index(after: eq)...]))
        }
    }

    static func cookieDifferences(recorded: HeaderList, arrived: HeaderList) -> [CookieDifference] {
        let want = cookiePairs(recorded), got = cookiePairs(arrived)
        var names: [String] = []
        for (n, _) in want + got where !names.contains(n) { names.append(n) }
        return names.compactMap { name in
            let r = want.first { $0.0 == name }?.1
            let s = got.first { $0.0 == name }?.1
            guard r != s else { return nil }
            return CookieDifference(name: name, recordedValue: r, sentValue: s, rules: [], certain: true,
                explanation: "observed at the replay origin (`serve`)")
        }
    }
}

