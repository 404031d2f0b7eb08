import Foundation
import TrafficModel

/// Preset and profile files: how a team describes its own app without touching Swift, in
/// the format the built-in presets are written in (`Resources/presets/`).
///
/// A preset file is a JSON object (or an array of them):
///
///     {"name": "our-app", "summary": "what the app does",
///      "strategy": {"kind": "urlprotocol", "redirects": "silent"},
///      "mitigations": [{"kind": "body-bridge", "covers": ["xhr", "fetch"], "idParameter": "rid", "stripsId": true},
///                      {"kind": "cookie-setter-hook", "synchronous": true, "checksDomain": true}],
///      "profile": {"jarSyncDelay": 0.3}}
///
/// The strategy and mitigation kinds, and the options each takes, are those
/// `PresetRegistry` lists: each kind's options decode as its `Options` (`Decodable`) and
/// build the value in the kind's own file. A framework that serves the page from its own
/// scheme says so with `"app": {"framework": "capacitor", "scheme": "capacitor",
/// "hostname": "localhost", "handlerBodies": "kept"}` (`framework`: capacitor, cordova,
/// ionic-webview, tauri or other; `handlerBodies`: kept, formdata-file-lost, post-lost or
/// post-lost-under-dev-server, the scenario's `devServer` saying when; Cordova's `https`
/// scheme falls back to `app`, CDV1; `"cookieObserver": true` for a Capacitor app that
/// keeps the web view's cookie observer alive itself, which no release does, CAP3).
/// `"version": "7.4.2"` replays a framework preset at that release (the framework is
/// `component`, else the app's, else the one the strategy or a mitigation belongs to);
/// without it, the newest the model knows. `framework` is the group `h5replay presets`
/// lists it under. A profile object (in a preset, or a `--profile-file`) overrides any of
/// `ios`, `simulator`, `jarSyncDelay`, `jarDeletionDelay`, `scriptWriteDelay` (null:
/// never), `cookieStoreSyncDelay`, `cookieSetterHookDelay`, `itp`. docs/presets/README.md
/// lists every kind with its options.
public enum PresetFile {
    /// A preset file's problem: the file, the key path and the fix.
    public typealias Error = InputError

    public static func load(_ data: Data, file: String) throws -> [Preset] {
        var notes: [String] = []
        return try load(data, file: file, notes: &notes)
    }

    /// The presets of a file, and a note for each `version` newer than the model knows
    /// (replayed as the newest).
    public static func load(_ data: Data, file: String, notes: inout [String]) throws -> [Preset] {
        let contents = try ConfigDecoding.decode(Contents.self, from: data, file: file)
        return contents.presets.map { spec in
            if let note = spec.note { notes.append("\(file): \(note)") }
            return spec.preset(file: file)
        }
    }

    /// A preset object, or an array of them; the array's index left out of the key paths
    /// when it holds one.
    struct Contents: Decodable {
        let presets: [PresetSpec]

        init(from decoder: any Decoder) throws {
            if (try? decoder.container(keyedBy: ConfigKey.self)) != nil {
                presets = [try PresetSpec(from: decoder)]
                return
            }
            guard var list = try? decoder.unkeyedContainer() else { throw ConfigProblem([], "expected a preset object or an array of them") }
            let single = list.count == 1
            var out: [PresetSpec] = []
            do {
                while !list.isAtEnd { out.append(try list.decode(PresetSpec.self)) }
            } catch var problem as ConfigProblem where single {
                problem.path = Array(problem.path.dropFirst())
                throw problem
            } catch let error as DecodingError where single {
                var problem = ConfigProblem(error)
                problem.path = Array(problem.path.dropFirst())
                throw problem
            }
            presets = out
        }
    }

    /// The framework a preset file's preset belongs to: the one it names, else its app's,
    /// else its strategy's or a mitigation's.
    static func component(named: Component?, app: String?, strategy: any InterceptionStrategy, mitigations: [any Mitigation]) -> Component? {
        named ?? app.flatMap { AppSpec.frameworks[$0]?.component } ?? PresetRegistry.component(ofKind: strategy.kind)
            ?? mitigations.firstNonNil { PresetRegistry.component(ofKind: $0.kind) }
    }
}

/// One preset of a preset file, decoded and checked: everything a `Preset` needs.
struct PresetSpec: Decodable {
    static let keys = ["name", "summary", "strategy", "mitigations", "profile", "app", "framework", "component", "version", "comment"]
    let preset: Preset
    /// Set when the version asked for is newer than the model knows.
    let note: String?
    private let summary: String?

    func preset(file: String) -> Preset {
        guard summary == nil else { return preset }
        var out = preset
        out.summary = "from \((file as NSString).lastPathComponent)"
        return out
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: ConfigKey.self)
        try ConfigDecoding.only(Self.keys, in: c)
        let name = try Self.name(c)
        guard c.has("strategy"), (try? c.nestedContainer(keyedBy: ConfigKey.self, forKey: ConfigKey("strategy"))) != nil else {
            throw c.problem("strategy", "an object with a kind is required")
        }
        let strategy = try c.decode(StrategySpec.self, forKey: ConfigKey("strategy")).value
        let mitigations = try c.optional([MitigationSpec].self, "mitigations")?.map(\.value) ?? []
        let app = try c.optional(AppSpec.self, "app")
        if app == nil, let i = mitigations.firstIndex(where: { $0.kind == ScriptCookiesLost.kindName }) {
            // CDV2, ION2 are about a page on the app's own scheme: without one they never apply.
            throw ConfigProblem(c.codingPath + [ConfigKey("mitigations"), IndexKey(i)], "script-cookies-lost applies to the app's own page; add an \"app\" (for Cordova: {\"framework\": \"cordova\", \"scheme\": \"app\"})")
        }
        summary = try c.optional(String.self, "summary")
        var preset = Preset(name: name, summary: summary ?? "", framework: try c.optional(String.self, "framework"), app: app?.shell, strategy: strategy, mitigations: mitigations)
        preset.written = WrittenParts(strategy: try c.decode(WrittenValue.self, forKey: ConfigKey("strategy")), mitigations: try c.optional([WrittenValue].self, "mitigations") ?? [])
        preset.profileOverride = try c.optional(ProfileOverride.self, "profile")
        if let component = PresetFile.component(named: try Self.component(c), app: app?.framework, strategy: strategy, mitigations: mitigations) {
            preset.release = Preset.Release(component: component, baseName: name)
        }
        (self.preset, note) = try Self.versioned(preset, c)
    }

    static func name(_ c: KeyedDecodingContainer<ConfigKey>) throws -> String {
        let name = try c.requiredString("name")
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." }) else {
            throw c.problem("name", "a preset name is letters, digits, '-', '_' or '.'")
        }
        return name
    }

    /// `component`: the framework whose releases the preset replays, when neither its app
    /// nor its kinds say (KKJSBridge).
    static func component(_ c: KeyedDecodingContainer<ConfigKey>) throws -> Component? {
        guard let text = try c.optional(String.self, "component") else { return nil }
        guard let component = Component(rawValue: text), component != .ios else {
            throw c.problem("component", "one of \(Component.allCases.filter { $0 != .ios }.map(\.rawValue).joined(separator: ", "))")
        }
        return component
    }

    /// The preset at the `version` asked for, if any.
    static func versioned(_ preset: Preset, _ c: KeyedDecodingContainer<ConfigKey>) throws -> (Preset, String?) {
        guard let text = try c.optional(String.self, "version") else { return (preset, nil) }
        guard preset.release != nil else {
            throw c.problem("version", "a version picks a framework's release; this preset names no framework (an app, or a framework's strategy or mitigation)")
        }
        guard let version = SemanticVersion(text) else { throw c.problem("version", "a release such as 7.4.2") }
        do {
            return try preset.at(version, typed: preset.name)
        } catch let error as Preset.VersionRequest {
            throw c.problem("version", error.description)
        }
    }
}

/// The `app` object of a preset file: the custom scheme a framework serves the page from.
struct AppSpec: Decodable {
    static let keys = ["framework", "scheme", "hostname", "handlerBodies", "cookieObserver", "comment"]
    /// The framework's origin rule, default scheme and release component, by the name a
    /// preset file gives it.
    static let frameworks: [String: (rule: RuleID, scheme: String, component: Component?)] = [
        "capacitor": ("CAP1", "capacitor", .capacitor), "cordova": ("CDV1", "app", .cordovaIOS), "ionic-webview": ("ION1", "ionic", .ionicWebView),
        "tauri": ("TAU1", "tauri", .tauri), "other": ("A1", "", nil),
    ]
    let framework: String
    let shell: AppShell

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: ConfigKey.self)
        try ConfigDecoding.only(Self.keys, in: c)
        framework = try c.optional(String.self, "framework") ?? "other"
        guard let (rule, defaultScheme, _) = Self.frameworks[framework] else {
            throw c.problem("framework", "one of \(Self.frameworks.keys.sorted().joined(separator: ", "))")
        }
        // CAP3: Capacitor registers a cookie observer (PR #6086) that nothing retains, so it
        // never fires; an app that keeps one alive itself says `"cookieObserver": true`.
        let observer = try c.optional(Bool.self, "cookieObserver")
        if observer != nil && framework != "capacitor" {
            throw c.problem("cookieObserver", "only Capacitor's web view has a cookie observer (CAP3); leave it out for \(framework)")
        }
        let scheme = try Self.scheme(c, framework: framework, default: defaultScheme)
        let bodiesText = try c.optional(String.self, "handlerBodies") ?? "kept"
        guard let bodies = AppShell.HandlerBodies(rawValue: bodiesText) else {
            throw c.problem("handlerBodies", "kept, formdata-file-lost, post-lost or post-lost-under-dev-server")
        }
        let bodiesRule: RuleID? = bodies == .formDataWithFileLost ? "CDV3" : bodies == .postLost || bodies == .postLostUnderDevServer ? "TAU2" : nil
        shell = AppShell(scheme: scheme, host: try c.optional(String.self, "hostname") ?? "localhost", originRule: rule, handlerBodies: bodies, handlerBodiesRule: bodiesRule,
            jarLink: framework == "capacitor" && observer == true ? AppShell.capacitorCookieObserver : nil)
    }

    static func scheme(_ c: KeyedDecodingContainer<ConfigKey>, framework: String, default defaultScheme: String) throws -> String {
        var scheme = try c.optional(String.self, "scheme") ?? defaultScheme
        guard !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }) else {
            throw c.problem("scheme", "a URL scheme such as capacitor or app")
        }
        // CDV1: cordova-ios falls back to app:// when the scheme is set to https.
        if framework == "cordova" && (scheme == "https" || scheme == "http") { scheme = "app" }
        guard scheme != "http" && scheme != "https" else {
            throw c.problem("scheme", "a page on http(s) is not on an app scheme; leave app out")
        }
        return scheme
    }
}

/// Profile numbers a preset file or a profile file overrides; nil leaves the number alone.
public struct ProfileOverride: Sendable, Hashable {
    public var ios: IOSVersion?
    public var simulator: Bool?
    public var jarSyncDelay: Double?
    public var jarDeletionDelay: Double?
    /// `.some(nil)`: a document.cookie write never reaches NativeJar.
    public var scriptWriteDelay: Double??
    public var cookieStoreSyncDelay: Double?
    public var cookieSetterHookDelay: Double?
    public var itp: Bool?

    public init() {}

    /// Reads a profile object, naming the key of any error.
    public static func parse(_ o: [String: Any], file: String, place: String = "") throws -> ProfileOverride {
        let data = try JSONSerialization.data(withJSONObject: o)
        do {
            return try ConfigDecoding.decode(ProfileOverride.self, from: data, file: file)
        } catch var error as InputError where !place.isEmpty {
            error.place = error.place.map { "\(place).\($0)" } ?? place
            throw error
        }
    }

    /// Reads a profile file.
    public static func load(_ data: Data, file: String) throws -> ProfileOverride {
        try ConfigDecoding.decode(ProfileOverride.self, from: data, file: file)
    }
}

extension ProfileOverride: Decodable {
    static let keys = ["ios", "simulator", "jarSyncDelay", "jarDeletionDelay", "scriptWriteDelay", "cookieStoreSyncDelay", "cookieSetterHookDelay", "itp", "comment"]

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: ConfigKey.self)
        try ConfigDecoding.only(Self.keys, in: c)
        if let text = try c.optional(String.self, "ios") {
            guard let v = IOSVersion(text), v.isKnown else { throw c.problem("ios", "one of \(IOSVersion.supported.map(\.description).joined(separator: ", "))") }
            ios = v
        }
        simulator = try c.optional(Bool.self, "simulator")
        func seconds(_ key: String) throws -> Double? {
            guard let v = try c.optional(Double.self, key) else { return nil }
            guard v >= 0 else { throw c.problem(key, "a delay in seconds, not negative") }
            return v
        }
        jarSyncDelay = try seconds("jarSyncDelay")
        jarDeletionDelay = try seconds("jarDeletionDelay")
        if c.has("scriptWriteDelay") { scriptWriteDelay = .some(try seconds("scriptWriteDelay")) }
        cookieStoreSyncDelay = try seconds("cookieStoreSyncDelay")
        cookieSetterHookDelay = try seconds("cookieSetterHookDelay")
        itp = try c.optional(Bool.self, "itp")
    }
}

extension Profile {
    /// This profile with an override's numbers; a new iOS version or device kind first
    /// resets the numbers that depend on it.
    public func applying(_ o: ProfileOverride) -> Profile {
        var p = self
        if o.ios != nil || o.simulator != nil { p = Profile(ios: o.ios ?? ios, simulator: o.simulator ?? simulator) }
        if let v = o.jarSyncDelay { p.jarSyncDelay = v }
        if let v = o.jarDeletionDelay { p.jarDeletionDelay = v }
        if let v = o.scriptWriteDelay { p.scriptWriteDelay = v }
        if let v = o.cookieStoreSyncDelay { p.cookieStoreSyncDelay = v }
        if let v = o.cookieSetterHookDelay { p.cookieSetterHookDelay = v }
        if let v = o.itp { p.itp = v }
        return p
    }
}
