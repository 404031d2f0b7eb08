import Foundation
import TrafficModel

/// An offline package's resource map, in the format the article iOS秒开H5实战总结 (2021-05-07) shows (section 1): each
/// resource URL with its `version`, `md5`, `download` URL and `ctype`, inside the
/// `{"code": 200, "data": {...}}` envelope or without it. With the package's files (a
/// folder of them, named by their download URL as the app keys its cache), what a hit
/// serves is the file itself.
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
        let root = try SidecarJSON.object(data, file: file)
        let (body, base) = SidecarJSON.unwrapped(root)
        guard let map = body["resourcemap"] else { throw InputError(file: file, place: base + "resourcemap", problem: "a resource map needs \"resourcemap\": {URL: {md5, download, ...}}") }
        guard let entries = map as? [String: Any] else { throw InputError(file: file, place: base + "resourcemap", problem: "expected an object keyed by resource URL") }
        var resources: [Resource] = []
        for (url, value) in entries.sorted(by: { $0.key < $1.key }) {
            let place = base + "resourcemap[\"\(url)\"]"
            guard let target = RequestTarget(url), target.scheme == "http" || target.scheme == "https" else {
                throw InputError(file: file, place: place, problem: "the key is not an http(s) URL")
            }
            guard let o = value as? [String: Any] else { throw InputError(file: file, place: place, problem: "expected an object with md5, download, version, ctype") }
            guard let md5 = o["md5"] as? String, md5.count == 32, md5.allSatisfy(\.isHexDigit) else {
                throw InputError(file: file, place: place + ".md5", problem: "an md5 is 32 hex digits")
            }
            let version = (o["version"] as? String) ?? (o["version"] as? NSNumber)?.stringValue
            resources.append(Resource(url: url, version: version, md5: md5, download: o["download"] as? String, contentType: o["ctype"] as? String))
        }
        return OfflinePackage(resources: resources, files: files, file: file)
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

/// Reading the JSON of a resource map or a prefetch config, which come with the
/// `{"code": 200, "data": {...}}` envelope of the app's config API or without it.
enum SidecarJSON {
    static func object(_ data: Data, file: String) throws -> [String: Any] {
        guard let json = try? JSONSerialization.jsonObject(with: data) else { throw InputError(file: file, place: "(file)", problem: "not valid JSON") }
        guard let object = json as? [String: Any] else { throw InputError(file: file, place: "(file)", problem: "expected a JSON object") }
        return object
    }

    /// The object inside the envelope, and the path prefix that names it.
    static func unwrapped(_ object: [String: Any]) -> ([String: Any], String) {
        if let data = object["data"] as? [String: Any], object["code"] != nil { return (data, "data.") }
        return (object, "")
    }
}
