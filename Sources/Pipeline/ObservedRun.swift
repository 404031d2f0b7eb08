import Findings
import Foundation
import TrafficModel
import WebViewEmulation

/// Turns what reached `serve` into a run with preset `observed` (docs/design.md, "Replay"), so
/// that the same detectors compare the real client with the recording: bodies lost or
/// changed, Cookie headers that differ, requests that never arrived, redirect hops not
/// followed. Observed findings cite no model rule: they are what happened.
public enum ObservedRun {
    public static let preset = "observed"

    public struct Result: Sendable {
        public var recording: Recording
        public var outcomes: [Outcome]
        public var findings: [Finding]
    }

    /// One result per recording that at least one arrival matched.
    public static func build(recordings: [Recording], arrivals: [Arrival], detector: FindingDetector = FindingDetector()) -> [Result] {
        var byExchange: [ReplayOrigin.Ref: Arrival] = [:]
        for a in arrivals {
            guard let ref = a.matched, byExchange[ref] == nil else { continue }
            byExchange[ref] = a
        }
        var results: [Result] = []
        for (r, recording) in recordings.enumerated() {
            let arrived = { (sequence: Int) in byExchange[ReplayOrigin.Ref(recording: r, sequence: sequence)] }
            guard recording.exchanges.contains(where: { arrived($0.sequence) != nil }) else { continue }
            var outcomes: [Outcome] = []
            for e in recording.exchanges {
                guard let a = arrived(e.sequence) else {
                    // A redirect target that never came is the chain start's finding.
                    if (e.redirect?.hop ?? 0) > 0 { continue }
                    // A favicon is the browser's own chrome, not the page's traffic: Chromium
                    // asks for one, WebKit (WKWebView, WebKitGTK) does not.
                    if e.request.target?.path == "/favicon.ico" { continue }
                    // The app's native code sent it (NC1): no page asks for it.
                    if e.initiator == .native { continue }
                    var missing = Outcome(sequence: e.sequence, deliveredMethod: e.request.method, deliveredURL: e.request.url, deliveredBody: .empty)
                    missing.observedMissing = true
                    outcomes.append(missing)
                    continue
                }
                var outcome = Outcome(sequence: e.sequence, deliveredMethod: a.method, deliveredURL: e.request.url, deliveredBody: BodyFingerprint(a.body))
                outcome.cookieDifferences = cookieDifferences(recorded: e.request.headers, arrived: a.headers)
                if let link = e.redirect, link.hop == 0, link.next != nil {
                    // Follow the chain while its hops arrived: the page ends at the last one.
                    var last = e
                    while let next = last.redirect?.next, arrived(next) != nil { last = recording.exchanges[next] }
                    outcome.pageURL = last.request.url
                }
                outcomes.append(outcome)
            }
            let result = EmulationResult(preset: preset, outcomes: outcomes, divergences: [], jarEvents: [])
            results.append(Result(recording: recording, outcomes: outcomes, findings: detector.findings(for: recording, result: result)))
        }
        return results
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

