import Foundation
import TrafficModel

/// The recorded responses, found by request (docs/design.md, "Replay"): method, URL and body
/// hash, with mitmproxy-like relaxations. Pure and single-threaded; the server serialises
/// access to it.
///
/// - Query parameters named in `ignoredParameters` do not count.
/// - The body counts unless `ignoreBody`; when no recorded request has the same body, the
///   one with the same method and URL still answers (a lost body is exactly what `serve`
///   is there to observe), and the arrival keeps its own body for the observed run.
/// - Repeated identical requests get the recorded responses in order; past the last, the
///   last again.
/// - The host: an absolute-form request (the server used as a forward proxy) names it; else
///   the Host header picks among recorded hosts; a Host that is the server itself matches
///   any recorded host.
/// - A recording made with a warm cache answered some requests with 304 or from the
///   browser's cache, without a body. A request with no validator (a fresh client's) gets
///   another recorded answer to the same request that holds the body, when there is one;
///   a 304 whose entry kept the cached body (Firefox writes it) is answered as a 200.
public struct ReplayOrigin: Sendable {
    public struct Options: Sendable {
        public var ignoredParameters: Set<String>
        public var ignoreBody: Bool

        public init(ignoredParameters: Set<String> = [], ignoreBody: Bool = false) {
            self.ignoredParameters = ignoredParameters
            self.ignoreBody = ignoreBody
        }
    }

    /// A recorded exchange by its place.
    public typealias Ref = ExchangeRef

    public let recordings: [Recording]
    public let options: Options
    /// Method and path+query (normalised) → candidates in recorded order.
    var byRequest: [String: [Ref]] = [:]
    /// How many times each candidate has answered.
    var served: [Ref: Int] = [:]
    /// Every recorded host (lowercased, with a non-default port).
    public let hosts: Set<String>

    public init(recordings: [Recording], options: Options = Options()) {
        self.recordings = recordings
        self.options = options
        var hosts = Set<String>()
        for (r, recording) in recordings.enumerated() {
            for e in recording.exchanges {
                guard let target = RequestTarget(e.request.url) else { continue }
                hosts.insert(Self.hostKey(target))
                byRequest[Self.key(e.request.method, target, options), default: []].append(Ref(recording: r, sequence: e.sequence))
            }
        }
        self.hosts = hosts
    }

    static func hostKey(_ t: RequestTarget) -> String {
        t.port == RequestTarget.defaultPort(t.scheme) ? t.host : "\(t.host):\(t.port)"
    }

    static func key(_ method: String, _ target: RequestTarget, _ options: Options) -> String {
        method.uppercased() + " " + normalisedPathAndQuery(target.pathAndQuery, ignoring: options.ignoredParameters)
    }

    /// Path and query with ignored parameters dropped and the rest in sorted order.
    static func normalisedPathAndQuery(_ pathAndQuery: String, ignoring: Set<String>) -> String {
        guard let q = pathAndQuery.firstIndex(of: "?") else { return pathAndQuery }
        let path = pathAndQuery[..<q]
        let params = pathAndQuery[pathAndQuery.index(after: q)...].split(separator: "&").filter { part in
            let name = part.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            return !ignoring.contains(name)
        }.sorted()
        return params.isEmpty ? String(path) : "\(path)?\(params.joined(separator: "&"))"
    }

    public func exchange(_ ref: Ref) -> Exchange { recordings[ref.recording].exchanges[ref.sequence] }

    /// A response a client without the cached copy cannot use: a 304, or a cache hit whose
    /// body the export left out.
    public static func isBodiless(_ e: Exchange) -> Bool {
        e.response.status == 304 || (e.evidenceGap == .fromCache && e.response.body.isEmpty)
    }

    /// A recorded 2xx answer with a body to the same request as `ref`, for a client that
    /// holds no cached copy; nil when none was recorded.
    public func withBody(insteadOf ref: Ref) -> Ref? {
        let e = exchange(ref)
        guard let target = e.request.target, let all = byRequest[Self.key(e.request.method, target, options)] else { return nil }
        let host = Self.hostKey(target)
        let full = all.filter { r in
            let other = exchange(r).response
            return (200..<300).contains(other.status) && !other.body.isEmpty
        }
        return full.first { RequestTarget(exchange($0).request.url).map(Self.hostKey) == host } ?? full.first
    }

    /// Finds the recorded exchange that answers a request. `host` is the Host header (an
    /// absolute-form target names its own). `conditional`: the request carries a validator
    /// (If-None-Match, If-Modified-Since), so a 304 suits it.
    public mutating func match(method: String, target: String, host: String?, body: Data, conditional: Bool = true) -> Ref? {
        let absolute = RequestTarget(target)
        let pathAndQuery = absolute?.pathAndQuery ?? (target.hasPrefix("/") ? target : "/" + target)
        let key = method.uppercased() + " " + Self.normalisedPathAndQuery(pathAndQuery, ignoring: options.ignoredParameters)
        guard let all = byRequest[key], !all.isEmpty else { return nil }
        let wantedHost = (absolute.map(Self.hostKey) ?? host?.lowercased()).flatMap { hosts.contains($0) ? $0 : nil }
        var candidates = all
        if let wantedHost {
            let sameHost = all.filter { RequestTarget(exchange($0).request.url).map(Self.hostKey) == wantedHost }
            if !sameHost.isEmpty { candidates = sameHost }
        }
        if !options.ignoreBody {
            let digest = BodyFingerprint(body)
            let sameBody = candidates.filter { exchange($0).request.bodyFingerprint == digest }
            if !sameBody.isEmpty { candidates = sameBody }
        }
        // The first not yet served, in recorded order; past the last, the last again.
        let chosen = candidates.first { served[$0, default: 0] == 0 } ?? candidates.last!
        served[chosen, default: 0] += 1
        if !conditional, Self.isBodiless(exchange(chosen)), let full = withBody(insteadOf: chosen) { return full }
        return chosen
    }
}
