import Foundation

/// A strategy or mitigation as a preset file writes it: the kind it is named by, its options
/// as a `Decodable` value, and how it is built from them. Each one declares this beside its
/// behaviour, in its own file, and `PresetRegistry` lists it once.
public protocol PresetPart: Sendable {
    associatedtype Options: PartOptions
    /// The kind a preset file names it by: `urlprotocol`, `body-bridge`.
    static var kindName: String { get }
    /// The framework whose releases it replays (a preset using it takes a `version`), nil
    /// for an app's own interception.
    static var component: Component? { get }
    /// One of it, for the tests that walk every kind: by default, built from no options.
    static var example: Self { get }
    /// Builds it from its options; a problem names the option at fault and the fix.
    init(options: Options) throws
    /// The options a change may set to counter a rule it cites (advice, issue 70): each a
    /// key of `Options`, the values that counter, and the rules. None by default.
    static var choices: [OptionChoice] { get }
}

/// The options of a kind: the keys a preset file may write beside `kind`.
public protocol PartOptions: Decodable, Sendable {
    static var keys: [String] { get }
}

/// The options of a kind that takes none.
public struct NoOptions: PartOptions {
    public static let keys: [String] = []
    public init(from decoder: any Decoder) throws {}
}

extension PresetPart {
    public static var component: Component? { nil }
    public static var choices: [OptionChoice] { [] }
    public var kind: String { Self.kindName }
    public static var example: Self {
        // Every registered kind but those with a required option builds from `{}`.
        try! Self(options: JSONDecoder().decode(Options.self, from: Data("{}".utf8)))
    }
}

/// Every strategy and mitigation kind a preset file can name, registered once: the
/// preset-file decoder, its errors, `h5replay presets --kinds`, the tests that walk every
/// kind and docs/presets/README.md derive from these lists.
public enum PresetRegistry {
    /// One registered kind.
    public struct Kind<Value>: Sendable {
        public let name: String
        /// The option keys it takes beside `kind`.
        public let keys: [String]
        public let component: Component?
        /// The options a change may set to counter a rule (`PresetPart.choices`).
        public let choices: [OptionChoice]
        let build: @Sendable (any Decoder) throws -> Value
        let example: @Sendable () -> Value
    }

    public static let strategies: [Kind<any InterceptionStrategy>] = [
        strategy(NativeStrategy.self), strategy(URLProtocolStrategy.self), strategy(SchemeHandlerStrategy.self), strategy(JSProxyStrategy.self),
        strategy(CapacitorHttpStrategy.self), strategy(TauriHTTPPluginStrategy.self),
    ]

    public static let mitigations: [Kind<any Mitigation>] = [
        mitigation(BodyBridge.self), mitigation(BodyInHeader.self), mitigation(CookieHeaderOnLoad.self), mitigation(CookieScriptInject.self),
        mitigation(CookieStoreSync.self), mitigation(CookieSetterHook.self), mitigation(CapacitorCookies.self), mitigation(ScriptCookiesLost.self),
        mitigation(SharedCookies.self), mitigation(FirstLaunchCookiesIgnored.self), mitigation(AjaxInterception.self), mitigation(HTTPDNS.self),
    ]

    /// The framework a strategy or mitigation kind belongs to, nil for none.
    public static func component(ofKind kind: String) -> Component? {
        strategies.first { $0.name == kind }?.component ?? mitigations.first { $0.name == kind }?.component
    }

    static func strategy<T: PresetPart & InterceptionStrategy>(_ type: T.Type) -> Kind<any InterceptionStrategy> {
        Kind(name: T.kindName, keys: T.Options.keys, component: T.component, choices: T.choices, build: { try built(T.self, $0) }, example: { T.example })
    }

    static func mitigation<T: PresetPart & Mitigation>(_ type: T.Type) -> Kind<any Mitigation> {
        Kind(name: T.kindName, keys: T.Options.keys, component: T.component, choices: T.choices, build: { try built(T.self, $0) }, example: { T.example })
    }

    /// Decodes the options, then builds: a problem the builder names is placed under the
    /// value's own path.
    static func built<T: PresetPart>(_ type: T.Type, _ decoder: any Decoder) throws -> T {
        let options = try T.Options(from: decoder)
        do {
            return try T(options: options)
        } catch var problem as ConfigProblem {
            problem.path = decoder.codingPath + problem.path
            throw problem
        }
    }

    /// The value an object with a `kind` describes: the kind looked up, its keys checked,
    /// then built.
    static func decode<Value>(_ decoder: any Decoder, among kinds: [Kind<Value>], role: String) throws -> Value {
        let container = try decoder.container(keyedBy: ConfigKey.self)
        let name = try container.requiredString("kind")
        guard let kind = kinds.first(where: { $0.name == name }) else {
            throw container.problem("kind", ConfigDecoding.unknown(role, name, known: kinds.map(\.name)))
        }
        try ConfigDecoding.only(["kind"] + kind.keys, in: container)
        return try kind.build(decoder)
    }

    /// Every registered mitigation, built from its example options.
    public static var exampleMitigations: [any Mitigation] { mitigations.map { $0.example() } }
    /// Every registered strategy, built from its example options.
    public static var exampleStrategies: [any InterceptionStrategy] { strategies.map { $0.example() } }
}

/// A strategy object of a preset file (`{"kind": "urlprotocol", "redirects": "silent"}`).
public struct StrategySpec: Decodable, Sendable {
    public let value: any InterceptionStrategy
    public init(from decoder: any Decoder) throws {
        value = try PresetRegistry.decode(decoder, among: PresetRegistry.strategies, role: "strategy")
    }
}

/// A mitigation object of a preset file (`{"kind": "cookie-store-sync"}`).
public struct MitigationSpec: Decodable, Sendable {
    public let value: any Mitigation
    public init(from decoder: any Decoder) throws {
        value = try PresetRegistry.decode(decoder, among: PresetRegistry.mitigations, role: "mitigation")
    }
}

/// One registered kind's options where a file other than a preset file takes them (a
/// scenario's `httpdns`), with the same checks and words.
struct PartSpec<Part: PresetPart>: Decodable {
    let value: Part

    init(from decoder: any Decoder) throws {
        try ConfigDecoding.only(Part.Options.keys, in: decoder.container(keyedBy: ConfigKey.self))
        value = try PresetRegistry.built(Part.self, decoder)
    }
}
