import Foundation
import TrafficModel

/// A prefetch config, in the format the article iOS秒开H5实战总结 (2021-05-07) shows (section 2): for each page URL, the API
/// calls native code makes before the page does (`api`, `method`, `urlParam`, `bodyParam`,
/// `body`), inside the `{"code": 200, "data": {...}}` envelope or without it. Read through
/// `Decodable` as preset files are: a problem names the file, the JSON path and the fix.
public struct PrefetchConfig: Sendable, Hashable {
    public struct Interface: Sendable, Hashable {
        public var api: String
        public var method: String
        /// P-F1: the page URL's query is merged into the API's.
        public var urlParam: Bool
        /// P-F1: the page URL's query is merged into the JSON body.
        public var bodyParam: Bool
        /// The configured JSON body, canonical (sorted keys).
        public var body: String?
    }

    public struct Entry: Sendable, Hashable {
        /// The page URL, without its query and fragment.
        public var page: String
        public var interfaces: [Interface]
    }

    public var entries: [Entry]
    public var file: String

    /// A request native code sends for a page load.
    public struct PlannedRequest: Sendable, Hashable {
        public var interface: Int
        public var method: String
        public var url: String
        /// Canonical JSON, nil without a body.
        public var body: String?
    }

    /// The entry for a page URL (its query and fragment aside), nil when none matches.
    public func entry(forPage url: String) -> Entry? {
        let page = Self.withoutQuery(url)
        return entries.first { $0.page == page }
    }

    /// The requests native code builds for a page load (PF1): GET with the page's query
    /// merged when `urlParam`; the page's query merged into the JSON body when `bodyParam`.
    public static func plan(_ entry: Entry, pageURL: String) -> [PlannedRequest] {
        let query = Self.queryItems(of: pageURL)
        return entry.interfaces.enumerated().map { i, f in
            var url = f.api
            if f.urlParam, !query.isEmpty {
                url += (url.contains("?") ? "&" : "?") + query.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
            }
            var body: String? = f.body
            if f.bodyParam {
                var object = (f.body.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }) ?? [:]
                for (k, v) in query { object[k] = v.removingPercentEncoding ?? v }
                body = Self.canonical(object)
            }
            return PlannedRequest(interface: i, method: f.method, url: url, body: f.method == "GET" ? nil : body)
        }
    }

    static func withoutQuery(_ url: String) -> String {
        var u = OfflinePackage.key(url)
        if let q = u.firstIndex(of: "?") { u = String(u[..<q]) }
        return u
    }

    static func queryItems(of url: String) -> [(String, String)] {
        let u = OfflinePackage.key(url)
        guard let q = u.firstIndex(of: "?") else { return [] }
        return u[u.index(after: q)...].split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
    }

    /// JSON with sorted keys, so that two bodies compare by content.
    static func canonical(_ object: Any) -> String? {
        guard JSONSerialization.isValidJSONObject(object), let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// A recorded body as canonical JSON, nil when it is not a JSON object.
    static func canonicalBody(_ data: Data) -> String? {
        guard !data.isEmpty, let object = try? JSONSerialization.jsonObject(with: data) else { return nil }
        return canonical(object)
    }

    /// Reads a prefetch config, naming the file and the JSON path of any problem.
    public static func load(_ data: Data, file: String) throws -> PrefetchConfig {
        PrefetchConfig(entries: try ConfigDecoding.decode(SidecarEnvelope<Entries>.self, from: data, file: file).body.entries, file: file)
    }

    /// A prefetch config's object: `{"config": [{url, interfaces}]}`.
    struct Entries: Decodable {
        var entries: [Entry] = []

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: ConfigKey.self)
            guard var list = try? c.nestedUnkeyedContainer(forKey: ConfigKey("config")) else {
                throw c.problem("config", "a prefetch config needs \"config\": [{url, interfaces}]")
            }
            while !list.isAtEnd {
                let place = list.codingPath + [IndexKey(list.currentIndex)]
                guard let o = try? list.nestedContainer(keyedBy: ConfigKey.self) else { throw ConfigProblem(place, "expected an object with url and interfaces") }
                entries.append(try Self.entry(o))
            }
        }

        static func entry(_ o: KeyedDecodingContainer<ConfigKey>) throws -> Entry {
            guard let url = o.lenient(String.self, "url"), let target = RequestTarget(url), target.scheme == "http" || target.scheme == "https" else {
                throw o.problem("url", "an http(s) page URL is required")
            }
            guard var list = try? o.nestedUnkeyedContainer(forKey: ConfigKey("interfaces")) else {
                throw o.problem("interfaces", "expected an array of {api, method, urlParam, bodyParam, body}")
            }
            var interfaces: [Interface] = []
            while !list.isAtEnd {
                let place = list.codingPath + [IndexKey(list.currentIndex)]
                guard let f = try? list.nestedContainer(keyedBy: ConfigKey.self) else { throw ConfigProblem(place, "expected an object") }
                interfaces.append(try interface(f))
            }
            return Entry(page: withoutQuery(url), interfaces: interfaces)
        }

        static func interface(_ f: KeyedDecodingContainer<ConfigKey>) throws -> Interface {
            guard let api = f.lenient(String.self, "api"), let t = RequestTarget(api), t.scheme == "http" || t.scheme == "https" else {
                throw f.problem("api", "an http(s) API URL is required")
            }
            let method = (f.lenient(String.self, "method") ?? "GET").uppercased()
            guard method == "GET" || method == "POST" else { throw f.problem("method", "GET or POST") }
            var body: String?
            if f.has("body") {
                guard let object = f.lenient(JSONObject.self, "body") else { throw f.problem("body", "the body is a JSON object") }
                body = canonical(object.value)
            }
            func flag(_ key: String) throws -> Bool {
                guard f.has(key) else { return false }
                guard let b = f.lenient(Bool.self, key) else { throw f.problem(key, "true or false") }
                return b
            }
            return Interface(api: api, method: method, urlParam: try flag("urlParam"), bodyParam: try flag("bodyParam"), body: body)
        }
    }
}

/// The config at the moment a page load starts: the calls native code makes for the page,
/// as the replay input matched them against the recording once (`ReplayInput.prefetchPages`).
extension PrefetchConfig: SessionPart {
    var citedRules: [RuleID] { ["PF1", "PF2", "PF3"] }

    var hooks: MitigationHooks {
        MitigationHooks(pageLoadStarts: { load in load.input.prefetchPages.first { $0.page == load.sequence } })
    }
}

/// A JSON object as `JSONSerialization` gives it, for a value kept as written (a prefetch
/// body, made canonical).
struct JSONObject: Decodable {
    let value: [String: Any]

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: ConfigKey.self)
        var out: [String: Any] = [:]
        for key in c.allKeys { out[key.stringValue] = try c.decode(JSONAny.self, forKey: key).value }
        value = out
    }
}

/// Any JSON value, as `JSONSerialization` gives it.
struct JSONAny: Decodable {
    let value: Any

    init(from decoder: any Decoder) throws {
        if let object = try? JSONObject(from: decoder) {
            value = object.value
        } else if var list = try? decoder.unkeyedContainer() {
            var out: [Any] = []
            while !list.isAtEnd { out.append(try list.decode(JSONAny.self).value) }
            value = out
        } else {
            value = try Self.scalar(decoder.singleValueContainer())
        }
    }

    static func scalar(_ c: any SingleValueDecodingContainer) throws -> Any {
        if c.decodeNil() { return NSNull() }
        if let b = try? c.decode(Bool.self) { return b }
        if let i = try? c.decode(Int.self) { return i }
        if let d = try? c.decode(Double.self) { return d }
        return try c.decode(String.self)
    }
}

/// What became of one prefetched API call of a page load.
public enum PrefetchVerdict: String, Sendable, Hashable, Codable, CaseIterable {
    /// The page asked for exactly what was prefetched: answered from the prefetch.
    case hit
    /// The page asked the same API with another query or body: the prefetch is wasted.
    case mismatch
    /// The page's request matched, but it carried other cookies than NativeJar gave the
    /// prefetch: the prefetched response may not be the one the page got.
    case stale
    /// Prefetched, never asked for.
    case unused
}
