/// A named strategy with its mitigations: one column of the side-by-side matrix
/// (BEHAVIOUR.md section 5).
public struct Preset: Sendable {
    public var name: String
    public var summary: String
    public var strategy: any InterceptionStrategy

    public init(name: String, summary: String, strategy: any InterceptionStrategy) {
        self.name = name
        self.summary = summary
        self.strategy = strategy
    }

    /// The built-in presets, in matrix order.
    public static let builtIn: [Preset] = [
        Preset(name: "plain", summary: "WKWebView without interception", strategy: NativeStrategy()),
        Preset(name: "urlprotocol-naive", summary: "NSURLProtocol through the private registerSchemeForCustomProtocol:, redirects followed silently (seed 003 sample)", strategy: URLProtocolStrategy(redirects: .silent)),
        Preset(name: "urlprotocol-forwarded", summary: "NSURLProtocol that forwards redirects with wasRedirectedToRequest:", strategy: URLProtocolStrategy(redirects: .forwarded)),
        Preset(name: "schemehandler-naive", summary: "WKURLSchemeHandler for http/https, redirects followed silently", strategy: SchemeHandlerStrategy(redirects: .silent)),
    ]

    public static func named(_ name: String) -> Preset? { builtIn.first { $0.name == name } }
}
