import Foundation
import TrafficModel

/// An offline package's resource map, in the format the article iOS秒开H5实战总结 (2021-05-07) shows (section 1): each
/// resource URL with its `version`, `md5`, `download` URL and `ctype`, inside the
/// `{"code": 200, "data": {...}}` envelope or without it. With the package's files (a
/// folder of them, named by their download URL as the app keys its cache), what a hit
/// serves is the file itself. Read through `Decodable` as preset files are: a problem names
/// the file, the JSON path and the fix.
public struct OfflinePackage: Sendable, Hashable {
    public struct Resource: Sendable, Hashable {
        public var url: String
        public var version: String?
        public var md5: String
        public var download: String?
        public var contentType: String?
    }

    /// By URL key (O1: the fragment dropped, the query kept).
    public var resources: [String: Resource]
    /// The package's files by download URL, when a folder was given.
    public var files: [String: BodyFingerprint]?
    /// Where it was read from, for reports.
    public var file: String

    public init(resources: [Resource], files: [String: BodyFingerprint]? = nil, file: String = "") {
        self.resources = Dictionary(resources.map { (Self.key($0.url), $0) }, uniquingKeysWith: { a, _ in a })
        self.files = files
        self.file = file
    }

    /// O1: the URL a resource map matches: the fragment dropped, the query kept.
    public static func key(_ url: String) -> String {
        url.firstIndex(of: "#").map { String(url[..<$0]) } ?? url
    }

    /// What the package does for a recorded request, before asking whether the preset can
    /// serve it: a hit (its bytes are the server's), stale (other bytes), or a miss.
    public func verdict(for e: Exchange) -> OfflineVerdict {
        guard e.request.method == "GET" || e.request.method == "HEAD", let resource = resources[Self.key(e.request.url)] else { return .miss }
        if let files, let download = resource.download, let file = files[download] {
            // The package's own file against what the server sent.
            return file.sha256 == e.response.body.sha256Hex ? .hit : .stale
        }
        // O2: the resource map's md5 against the md5 of what the server really sent.
        return resource.md5.lowercased() == e.response.body.md5Hex ? .hit : .stale
    }

    /// Reads a resource map, naming the file and the JSON path of any problem; `files`
    /// are the package's files by download URL.
    public static func load(_ data: Data, file: String, files: [String: BodyFingerprint]? = nil) throws -> OfflinePackage {
        let map = try ConfigDecoding.decode(SidecarEnvelope<ResourceMap>.self, from: data, file: file).body
        return OfflinePackage(resources: map.resources, files: files, file: file)
    }

    /// A resource map's object: `{"resourcemap": {URL: {md5, download, version, ctype}}}`.
    struct ResourceMap: Decodable {
        var resources: [Resource] = []

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: ConfigKey.self)
            guard c.has("resourcemap") else { throw c.problem("resourcemap", "a resource map needs \"resourcemap\": {URL: {md5, download, ...}}") }
            guard let entries = try? c.nestedContainer(keyedBy: ConfigKey.self, forKey: ConfigKey("resourcemap")) else {
                throw c.problem("resourcemap", "expected an object keyed by resource URL")
            }
            for key in entries.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                resources.append(try Self.resource(key.stringValue, in: entries))
            }
        }

        static func resource(_ url: String, in entries: KeyedDecodingContainer<ConfigKey>) throws -> Resource {
            guard let target = RequestTarget(url), target.scheme == "http" || target.scheme == "https" else { throw entries.problem(url, "the key is not an http(s) URL") }
            guard let o = try? entries.nestedContainer(keyedBy: ConfigKey.self, forKey: ConfigKey(url)) else {
                throw entries.problem(url, "expected an object with md5, download, version, ctype")
            }
            guard let md5 = o.lenient(String.self, "md5"), md5.count == 32, md5.allSatisfy(\.isHexDigit) else { throw o.problem("md5", "an md5 is 32 hex digits") }
            let version = o.lenient(String.self, "version") ?? o.lenient(Int.self, "version").map(String.init) ?? o.lenient(Double.self, "version").map { NSNumber(value: $0).stringValue }
            return Resource(url: url, version: version, md5: md5, download: o.lenient(String.self, "download"), contentType: o.lenient(String.self, "ctype"))
        }
    }
}

/// The package at the moments of a load: its interceptor serves what the package holds
/// (O1-O3), and the later hops of a redirect it served never go (O4). Its verdict for each
/// exchange is worked out once, with the replay input (`ExchangeFacts.offline`).
extension OfflinePackage: SessionPart {
    var citedRules: [RuleID] { ["O1", "O2", "O3", "O4"] }

    var hooks: MitigationHooks {
        MitigationHooks(
            loadAboutToGo: { outcome, load in
                guard load.chainAnsweredBy == "O4" else { return nil }
                // O4: the package answered the chain's first request; this hop never goes.
                outcome.note(Change(rule: "O4", what: "never requested: the offline package answered the redirect's first request"))
                return LoadAnswer(dropsSetCookies: "O4")
            },
            loadAtInterceptor: { outcome, load, plan in Self.serve(load, plan: plan, &outcome) })
    }

    /// O1-O4: what the package does for the request once its transport is planned: an
    /// answer when the interceptor served the package's file, so no server sees it.
    static func serve(_ load: PendingLoad, plan: TransportPlan, _ outcome: inout Outcome) -> LoadAnswer? {
        guard let verdict = load.facts.offline else { return nil }
        if verdict == .miss {
            outcome.offline = .miss
            return nil
        }
        guard plan.intercepted, load.hop == 0 else {
            outcome.offline = .notInterceptable
            return nil
        }
        outcome.offline = verdict
        outcome.note(Change(rule: "O1", what: "served from the offline package"))
        if verdict == .stale {
            outcome[.responseChanged] = ["O2"]
            outcome.note(Change(rule: "O2", what: "the package's file is not what the server sent"))
        }
        var answer = LoadAnswer()
        if !load.facts.setCookies.isEmpty {
            answer.dropsSetCookies = "O3"
            outcome.note(Change(rule: "O3", what: "the served file carries no Set-Cookie"))
        }
        if load.exchange.response.isRedirect {
            answer.chainRule = "O4"
            outcome.pageURL = load.exchange.request.url
            outcome[.redirectHidden] = ["O4"]
            outcome.note(Change(rule: "O4", what: "the served file carries no redirect; the page stays at the first URL"))
        }
        return answer
    }
}

/// What an offline package does for one request under one preset.
public enum OfflineVerdict: String, Sendable, Hashable, Codable, CaseIterable {
    /// Served from the package, the server's own bytes.
    case hit
    /// Served from the package, but the package's bytes are not the server's (O2).
    case stale
    /// Not in the package: the request goes to the server.
    case miss
    /// In the package, but the preset has no interceptor to serve it from.
    case notInterceptable = "not-interceptable"
}

/// A resource map or a prefetch config, inside the `{"code": 200, "data": {...}}`
/// envelope of the app's config API or without it; a path into the envelope starts `data.`.
struct SidecarEnvelope<Body: Decodable>: Decodable {
    let body: Body

    init(from decoder: any Decoder) throws {
        guard let c = try? decoder.container(keyedBy: ConfigKey.self) else { throw ConfigProblem([], "expected a JSON object") }
        if c.has("code"), (try? c.nestedContainer(keyedBy: ConfigKey.self, forKey: ConfigKey("data"))) != nil {
            body = try c.decode(Body.self, forKey: ConfigKey("data"))
        } else {
            body = try Body(from: decoder)
        }
    }
}
