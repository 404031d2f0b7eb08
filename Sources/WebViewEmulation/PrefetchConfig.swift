import Foundation
import TrafficModel

/// A prefetch config, in the format the article iOS秒开H5实战总结 (2021-05-07) shows (section 2): for each page URL, the API
/// calls native code makes before the page does (`api`, `method`, `urlParam`, `bodyParam`,
/// `body`), inside the `{"code": 200, "data": {...}}` envelope or without it.
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
        let root = try SidecarJSON.object(data, file: file)
        let (body, base) = SidecarJSON.unwrapped(root)
        guard let list = body["config"] as? [Any] else { throw InputError(file: file, place: base + "config", problem: "a prefetch config needs \"config\": [{url, interfaces}]") }
        var entries: [Entry] = []
        for (i, item) in list.enumerated() {
            let place = base + "config[\(i)]"
            guard let o = item as? [String: Any] else { throw InputError(file: file, place: place, problem: "expected an object with url and interfaces") }
            guard let url = o["url"] as? String, let target = RequestTarget(url), target.scheme == "http" || target.scheme == "https" else {
                throw InputError(file: file, place: place + ".url", problem: "an http(s) page URL is required")
            }
            guard let interfaces = o["interfaces"] as? [Any] else { throw InputError(file: file, place: place + ".interfaces", problem: "expected an array of {api, method, urlParam, bodyParam, body}") }
            var parsed: [Interface] = []
            for (k, f) in interfaces.enumerated() {
                let at = place + ".interfaces[\(k)]"
                guard let fo = f as? [String: Any] else { throw InputError(file: file, place: at, problem: "expected an object") }
                guard let api = fo["api"] as? String, let t = RequestTarget(api), t.scheme == "http" || t.scheme == "https" else {
                    throw InputError(file: file, place: at + ".api", problem: "an http(s) API URL is required")
                }
                let method = ((fo["method"] as? String) ?? "GET").uppercased()
                guard method == "GET" || method == "POST" else { throw InputError(file: file, place: at + ".method", problem: "GET or POST") }
                var bodyText: String?
                if let b = fo["body"] {
                    guard let bo = b as? [String: Any] else { throw InputError(file: file, place: at + ".body", problem: "the body is a JSON object") }
                    bodyText = canonical(bo)
                }
                func flag(_ key: String) throws -> Bool {
                    guard let v = fo[key] else { return false }
                    guard let b = v as? Bool else { throw InputError(file: file, place: at + "." + key, problem: "true or false") }
                    return b
                }
                parsed.append(Interface(api: api, method: method, urlParam: try flag("urlParam"), bodyParam: try flag("bodyParam"), body: bodyText))
            }
            entries.append(Entry(page: withoutQuery(url), interfaces: parsed))
        }
        return PrefetchConfig(entries: entries, file: file)
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
