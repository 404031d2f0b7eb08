import CookieJar
import Foundation
import TrafficModel

/// What a recording cannot say about the app and page (docs/model.md, "Request and body kinds" and "Where a cookie came from").
///
/// A scenario file (`--scenario FILE`, or `NAME.scenario.json` beside a recording) is a
/// JSON object:
///
///     {"preexistingCookies": "native" | "web" | "both",
///      "binaryBodies": "blob" | "arraybuffer",
///      "firstPartySites": ["example.com", ...],
///      "thirdPartyWebView": "same" | "plain",
///      "exchanges": [{"method": "POST", "url": "*/api/upload*",
///                     "initiator": "xhr", "bodyKind": "stream", "uploadListener": true}],
///      "newProcessPool": [{"url": "*/wallet*"}],
///      "importantCookies": ["session*", "*token*"],
///      "firstLaunch": true,
///      "devServer": true,
///      "httpdns": {"hosts": {"m.example.com": "203.0.113.7"}, "certificateHostCheck": true, "sni": true},
///      "reusedWebView": [{"url": "*/orders*"}]}
///
/// It is read through `Decodable` as preset files are: a problem is an `InputError` naming
/// the file, the JSON path and the fix, and `httpdns` takes the options, checks and words
/// of the preset files' `httpdns` mitigation.
public struct Scenario: Sendable, Hashable {
    /// Per-exchange facts the wire does not show, matched by method and URL pattern.
    public struct Override: Sendable, Hashable {
        /// nil matches any method.
        public var method: String?
        /// A URL pattern where `*` matches any run of characters.
        public var urlPattern: String
        public var initiator: Initiator?
        public var bodyKind: BodyKind?
        /// S3: the XHR's `upload` object was touched (a progress listener).
        public var uploadListener: Bool?

        public init(method: String? = nil, urlPattern: String, initiator: Initiator? = nil, bodyKind: BodyKind? = nil, uploadListener: Bool? = nil) {
            self.method = method
            self.urlPattern = urlPattern
            self.initiator = initiator
            self.bodyKind = bodyKind
            self.uploadListener = uploadListener
        }

        public func matches(_ e: Exchange) -> Bool {
            (method == nil || method!.caseInsensitiveEquals(e.request.method)) && Self.glob(urlPattern, e.request.url)
        }

        /// `*` matches any run of characters; everything else matches itself.
        public static func glob(_ pattern: String, _ text: String) -> Bool {
            let parts = pattern.split(separator: "*", omittingEmptySubsequences: false).map(String.init)
            guard parts.count > 1 else { return pattern == text }
            guard text.hasPrefix(parts.first!) else { return false }
            var rest = text.dropFirst(parts.first!.count)
            for part in parts.dropFirst().dropLast() where !part.isEmpty {
                guard let r = rest.range(of: part) else { return false }
                rest = rest[r.upperBound...]
            }
            return parts.last!.isEmpty || rest.hasSuffix(parts.last!)
        }
    }
    /// Where cookies that were there from the start lived.
    public enum PreexistingJar: String, Sendable, Hashable, Codable, CaseIterable { case native, web, both }

    public var preexisting: PreexistingJar
    /// Binary bodies count as Blob (the conservative default) or ArrayBuffer.
    public var binaryAsBlob: Bool
    /// NativeJar at session start (a native login), from a cookies.txt.
    public var nativeCookies: [Cookie]
    /// WebJar at session start, from a cookies.txt.
    public var webCookies: [Cookie]
    /// Whether the scenario said Blob or ArrayBuffer; when it did not, the model evaluates
    /// both and reports the worse.
    public var binaryKindGiven: Bool = false
    /// The first-party sites; default: the top-level document's site.
    public var firstPartySites: [String] = []
    /// S8: third-party pages run in the configured web view (`same`) or in a plain one.
    public var thirdPartyInPlainWebView: Bool = false
    public var overrides: [Override] = []
    /// J4: requests that a new web view with its own WKProcessPool issues first (its
    /// WebJar has none of the session cookies).
    public var newProcessPool: [Override] = []
    /// Cookie names (`*` globs: `session*`, `*token*`) that matter most: findings about
    /// them rank `important`, above every request.
    public var importantCookies: [String] = []
    /// The recording is the app's first launch after install (ION3).
    public var firstLaunch: Bool = false
    /// The app ran against its dev server (`tauri ios dev`), which proxies the app origin
    /// (TAU2), not as a release build serving it from the bundle.
    public var devServer: Bool = false
    /// An offline package whose resources an intercepting preset serves (O1-O4):
    /// `--offline-package`, or `NAME.resourcemap.json` beside a recording.
    public var offlinePackage: OfflinePackage?
    /// A prefetch config whose API calls native code makes before the page (PF1-PF3):
    /// `--prefetch-config`, or `NAME.prefetch.json` beside a recording.
    public var prefetch: PrefetchConfig?
    /// HTTPDNS IP-direct for every preset whose strategy sends natively (D1-D5).
    public var httpdns: HTTPDNS?
    /// Document loads in a pooled web view reused from an earlier page (W1).
    public var reusedWebView: [Override] = []

    public init(preexisting: PreexistingJar = .both, binaryAsBlob: Bool = true, nativeCookies: [Cookie] = [], webCookies: [Cookie] = []) {
        self.preexisting = preexisting
        self.binaryAsBlob = binaryAsBlob
        self.nativeCookies = nativeCookies
        self.webCookies = webCookies
    }

    /// Applies the per-exchange overrides and the first-party sites to a recording.
    public func applied(to recording: Recording) -> Recording {
        // Without first-party sites or overrides the importer's classification stands.
        guard !firstPartySites.isEmpty || !overrides.isEmpty else { return recording }
        var r = recording
        // Without first-party sites the classifier's marks stand: they follow the main frame.
        let sites = firstPartySites.map { Site.of(host: $0) }
        for i in r.exchanges.indices {
            if let site = r.exchanges[i].request.target?.site, !sites.isEmpty {
                r.exchanges[i].frame.thirdParty = !sites.contains(site)
            }
            for o in overrides where o.matches(r.exchanges[i]) {
                if let v = o.initiator { r.exchanges[i].initiator = v }
                if let v = o.bodyKind { r.exchanges[i].bodyKind = v }
            }
        }
        return r
    }

    /// Whether an override marks the exchange's XHR upload listener (S3).
    public func uploadListener(_ e: Exchange) -> Bool {
        overrides.contains { $0.matches(e) && $0.uploadListener == true }
    }

    /// A scenario file's problem: the file, the key path and the fix.
    public typealias FileError = InputError

    /// Reads a scenario file; unknown keys are errors, so a typo does not pass silently.
    public static func load(_ data: Data, file: String) throws -> Scenario {
        try ConfigDecoding.decode(FileContents.self, from: data, file: file).scenario
    }

    /// A scenario file's object, decoded and checked.
    struct FileContents: Decodable {
        static let keys = ["preexistingCookies", "binaryBodies", "firstPartySites", "thirdPartyWebView", "exchanges", "newProcessPool", "importantCookies",
            "firstLaunch", "devServer", "httpdns", "reusedWebView", "comment", "description"]
        var scenario = Scenario()

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: ConfigKey.self)
            try ConfigDecoding.only(Self.keys, in: c)
            if let jar = try c.optional(String.self, "preexistingCookies") {
                guard let jar = PreexistingJar(rawValue: jar) else { throw c.problem("preexistingCookies", "expected \"native\", \"web\" or \"both\"") }
                scenario.preexisting = jar
            }
            try readPages(c)
            scenario.overrides = try c.optional([OverrideSpec].self, "exchanges")?.map(\.value) ?? []
            scenario.newProcessPool = try c.optional([LoadSpec].self, "newProcessPool")?.map(\.value) ?? []
            scenario.reusedWebView = try c.optional([LoadSpec].self, "reusedWebView")?.map(\.value) ?? []
            if let names = try c.optional([String].self, "importantCookies") {
                guard !names.contains(where: \.isEmpty) else { throw c.problem("importantCookies", "expected an array of cookie names or patterns (\"session*\")") }
                scenario.importantCookies = names
            }
            // The same options, checks and words as the `httpdns` mitigation of a preset file.
            scenario.httpdns = try c.optional(PartSpec<HTTPDNS>.self, "httpdns")?.value
            scenario.firstLaunch = try c.optional(Bool.self, "firstLaunch") ?? false
            scenario.devServer = try c.optional(Bool.self, "devServer") ?? false
        }

        /// What the file says of the page: its binary bodies, its first-party sites, where
        /// third-party pages run.
        mutating func readPages(_ c: KeyedDecodingContainer<ConfigKey>) throws {
            if let text = try c.optional(String.self, "binaryBodies") {
                guard text == "blob" || text == "arraybuffer" else { throw c.problem("binaryBodies", "expected \"blob\" or \"arraybuffer\"") }
                scenario.binaryAsBlob = text == "blob"
                scenario.binaryKindGiven = true
            }
            scenario.firstPartySites = try c.optional([String].self, "firstPartySites")?.map { $0.lowercased() } ?? []
            if let text = try c.optional(String.self, "thirdPartyWebView") {
                guard text == "same" || text == "plain" else { throw c.problem("thirdPartyWebView", "expected \"same\" or \"plain\"") }
                scenario.thirdPartyInPlainWebView = text == "plain"
            }
        }
    }

    /// An `exchanges` entry: facts pinned on the exchanges a method and URL pattern match.
    struct OverrideSpec: Decodable {
        let value: Override

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: ConfigKey.self)
            try ConfigDecoding.only(["method", "url", "initiator", "bodyKind", "uploadListener"], in: c)
            var o = try LoadSpec(c).value
            if let text = try c.optional(String.self, "initiator") {
                guard let v = Initiator(rawValue: text) else { throw c.problem("initiator", "one of \(Initiator.allCases.map(\.rawValue).joined(separator: ", "))") }
                o.initiator = v
            }
            if let text = try c.optional(String.self, "bodyKind") {
                guard let v = BodyKind(rawValue: text) else { throw c.problem("bodyKind", "one of \(BodyKind.allCases.map(\.rawValue).joined(separator: ", "))") }
                o.bodyKind = v
            }
            o.uploadListener = try c.optional(Bool.self, "uploadListener")
            value = o
        }
    }

    /// A `newProcessPool` or `reusedWebView` entry: the loads a method and URL pattern match.
    struct LoadSpec: Decodable {
        let value: Override

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: ConfigKey.self)
            try ConfigDecoding.only(["method", "url"], in: c)
            try self.init(c)
        }

        init(_ c: KeyedDecodingContainer<ConfigKey>) throws {
            guard let url = (try? c.optional(String.self, "url")) ?? nil else { throw c.problem("url", "a URL pattern is required") }
            value = Override(method: try c.optional(String.self, "method"), urlPattern: url)
        }
    }

    /// An IPv4 dotted quad or an IPv6 address (hex groups and colons).
    public static func isIP(_ text: String) -> Bool {
        let quads = text.split(separator: ".", omittingEmptySubsequences: false)
        if quads.count == 4, quads.allSatisfy({ Int($0).map { (0...255).contains($0) } == true && !$0.isEmpty }) { return true }
        return text.contains(":") && text.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
    }
}
