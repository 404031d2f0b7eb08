import TrafficModel
import WebViewEmulation

/// Something a finding rests on that the recording does not say outright: where a cookie
/// came from when no response set it, which frame sent the request, what API sent it.
/// A person checks these first; a finding whose inference the recording contradicts is
/// less likely, and says so.
public struct FindingInference: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable {
        case cookieSource = "cookie-source"
        case frame
        case initiator
    }

    public var kind: Kind
    /// The cookie's name, or the exchange ("#12").
    public var subject: String
    /// What was inferred, as a person reads it: "written by the page's script".
    public var inferred: String
    /// What in the recording contradicts it, if anything does.
    public var contradictedBy: String?

    public init(kind: Kind, subject: String, inferred: String, contradictedBy: String? = nil) {
        self.kind = kind
        self.subject = subject
        self.inferred = inferred
        self.contradictedBy = contradictedBy
    }

    /// "cookie sid: written by the page's script (first carried by #3), though ...".
    public var sentence: String {
        let head = kind == .cookieSource ? "cookie \(subject): \(inferred)" : "\(kind.rawValue) of \(subject): \(inferred)"
        return contradictedBy.map { head + ", though " + $0 } ?? head
    }

    /// One stored line: the fields joined by a unit separator, none of which holds one.
    public var stored: String {
        [kind.rawValue, subject, inferred, contradictedBy ?? ""].joined(separator: "\u{1F}")
    }

    public init?(stored: String) {
        let parts = stored.split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 4, let kind = Kind(rawValue: parts[0]) else { return nil }
        self.init(kind: kind, subject: parts[1], inferred: parts[2], contradictedBy: parts[3].isEmpty ? nil : parts[3])
    }

    /// How much less likely a finding is when the recording contradicts what it rests on.
    public static let contradictedLikelihood = 0.5
}

extension FindingInference {
    /// What the exchange's own sender and frame rest on: nothing when the recording named
    /// the request's destination (Sec-Fetch-Dest, an exporter's resource type); otherwise
    /// the classifier read them from the other headers and the order of loads.
    static func ofExchange(_ e: Exchange) -> [FindingInference] {
        guard e.resourceType == nil, !e.request.headers.contains("Sec-Fetch-Dest"), e.evidenceGap == nil else { return [] }
        let subject = "#\(e.sequence)"
        var out = [FindingInference(kind: .initiator, subject: subject, inferred: "\(e.initiator.rawValue), read from its headers (the recording names no destination)")]
        if e.initiator.isDocument || e.frame.kind == .iframe {
            out.append(FindingInference(kind: .frame, subject: subject, inferred: "the \(e.frame.kind.rawValue) frame's, read from the Referer and the order of loads"))
        }
        return out
    }

    /// What a cookie difference's recorded side rests on, and what contradicts it: a value
    /// inferred written by script that a response of the recording set after all.
    static func ofCookie(_ difference: CookieDifference, serverSet: [String: Int]) -> FindingInference? {
        guard let source = difference.recordedSource else { return nil }
        let first = source.firstCarriedBy.map { " (first carried by #\($0))" } ?? ""
        switch source.kind {
        case "script-set":
            let setter = difference.recordedValue.flatMap { serverSet[difference.name + "=" + $0] }
            return FindingInference(kind: .cookieSource, subject: difference.name, inferred: "written by the page's script" + first,
                contradictedBy: setter.map { "#\($0)'s response set that value" })
        case "pre-existing":
            return FindingInference(kind: .cookieSource, subject: difference.name, inferred: "in the jar before the recording began" + first)
        default:
            return FindingInference(kind: .cookieSource, subject: difference.name, inferred: source.kind + first)
        }
    }
}
