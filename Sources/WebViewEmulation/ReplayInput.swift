import CookieJar
import Foundation
import TrafficModel

/// A recording made ready for replay, once, before any preset runs: the scenario applied,
/// its cookie provenance, and per exchange what every preset asks and no preset changes
/// (the document it was issued under, its parsed Set-Cookie headers, the bridges'
/// re-encodings of its body). Presets of a run share it.
public final class ReplayInput: Sendable {
    /// The recording with the scenario's pins and first-party sites applied.
    public let recording: Recording
    public let provenance: CookieProvenance
    public let scenario: Scenario
    /// Per exchange, in sequence order.
    public let facts: [ExchangeFacts]
    /// The main frame's first document load (hop 0), when there is one.
    public let firstDocument: Int?

    /// `provenance` is the one stored with the recording when there is one; otherwise it is
    /// computed here.
    public init(recording original: Recording, provenance: CookieProvenance? = nil, scenario: Scenario = Scenario()) {
        let recording = scenario.applied(to: original)
        self.recording = recording
        self.provenance = provenance ?? CookieProvenance(recording: original)
        self.scenario = scenario
        let exchanges = recording.exchanges
        var facts: [ExchangeFacts] = []
        facts.reserveCapacity(exchanges.count)
        var previousHop: [Int: Int] = [:]
        for e in exchanges { if let next = e.redirect?.next { previousHop[next] = e.sequence } }
        var documentURL: String?
        var documentTarget: RequestTarget?
        for e in exchanges {
            let hop = e.redirect?.hop ?? 0
            // The request is issued under the document before it; a document load then
            // becomes the document of what follows.
            let issuedUnder = documentURL, issuedUnderTarget = documentTarget
            // Each hop of a main-frame document load moves the page on: it ends at the last.
            if e.initiator.isDocument && e.frame.kind == .main {
                documentURL = e.request.url
                documentTarget = e.request.target
            }
            // The frame's document: an iframe's is its Referer, the main frame's the last document.
            let frameDocument: RequestTarget?
            if e.frame.kind == .iframe, let referer = e.request.headers.first("Referer") {
                frameDocument = RequestTarget(referer)
            } else {
                frameDocument = documentTarget
            }
            var crossOrigin = false
            if let document = issuedUnderTarget, let target = e.request.target { crossOrigin = document.origin != target.origin }
            var f = ExchangeFacts(
                documentURL: issuedUnder, crossOrigin: crossOrigin, frameDocument: frameDocument,
                setCookies: e.evidenceGap == .fromCache ? [] : e.response.headers.all("Set-Cookie").compactMap(SetCookie.parse),
                previousHop: previousHop[e.sequence],
                opensProcessPool: hop == 0 && scenario.newProcessPool.contains { $0.matches(e) },
                uploadListener: scenario.uploadListener(e))
            if !e.request.body.isEmpty {
                switch e.bodyKind {
                case .formData, .formDataWithFile:
                    f.formDataRebuilt = BodyBridge.rebuildMultipart(e.request.body, contentType: e.request.headers.first("Content-Type")).map(BodyFingerprint.init)
                case .urlEncoded:
                    f.urlSearchParamsRejoined = BodyFingerprint(BodyBridge.rejoinWithoutEncoding(e.request.body))
                default:
                    break
                }
            }
            facts.append(f)
        }
        self.facts = facts
        firstDocument = exchanges.first { $0.initiator.isDocument && $0.frame.kind == .main && ($0.redirect?.hop ?? 0) == 0 }?.sequence
    }

    /// Replays under one preset.
    public func replay(_ preset: Preset, profile: Profile = Profile()) -> EmulationResult {
        WebViewEmulator(preset: preset, profile: preset.profile(over: profile), scenario: scenario).run(self)
    }
}

/// What the replay input knows of one exchange before any preset runs.
public struct ExchangeFacts: Sendable, Hashable {
    /// The main frame's document URL when the request was issued.
    public var documentURL: String?
    /// The request goes to another origin than that document's.
    public var crossOrigin: Bool
    /// The document of the frame that issued it.
    public var frameDocument: RequestTarget?
    /// The response's Set-Cookie headers, parsed (unparsable ones left out).
    public var setCookies: [SetCookie]
    /// The exchange whose redirect led here, for a hop after the first.
    public var previousHop: Int?
    /// The first request of a web view with its own process pool (J4).
    public var opensProcessPool: Bool
    /// The scenario marks the XHR's upload listener (S3).
    public var uploadListener: Bool
    /// B5: the multipart body rebuilt through a dictionary, as KKJSBridge does.
    public var formDataRebuilt: BodyFingerprint?
    /// B6: the URL-encoded body re-joined without percent-encoding, as the NetEase snippet does.
    public var urlSearchParamsRejoined: BodyFingerprint?
}
