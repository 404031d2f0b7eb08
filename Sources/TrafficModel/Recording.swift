import Foundation

/// An ordered flow of exchanges: the truth a replay is compared with.
public struct Recording: Sendable, Hashable, Codable {
    public var name: String
    /// `har`, `pcap`...
    public var sourceFormat: String
    public var sourcePath: String?
    /// SHA-256 of the source file, to tell a re-import of the same file from a new one.
    public var sourceSHA256: String?
    /// Exchanges in time order; `exchanges[i].sequence == i`.
    public var exchanges: [Exchange]
    public var diagnostics: [Diagnostic]

    public init(name: String, sourceFormat: String, sourcePath: String? = nil, sourceSHA256: String? = nil, exchanges: [Exchange], diagnostics: [Diagnostic] = []) {
        self.name = name
        self.sourceFormat = sourceFormat
        self.sourcePath = sourcePath
        self.sourceSHA256 = sourceSHA256
        self.exchanges = exchanges
        self.diagnostics = diagnostics
    }

    /// The first top-level document's site, the default first party (docs/model.md, "Mitigations").
    public var topLevelSite: String? {
        if let document = exchanges.first(where: { $0.initiator.isDocument && $0.frame.kind == .main }) {
            return document.request.target.map { Site.of(host: $0.host) }
        }
        // No page load recorded: the page the first request from the web view names.
        guard let first = exchanges.first(where: { $0.initiator != .native }) else { return nil }
        return (first.request.issuingPage ?? first.request.target).map { Site.of(host: $0.host) }
    }
}

/// Something found while importing that did not stop the import.
public struct Diagnostic: Sendable, Hashable, Codable {
    public enum Severity: String, Sendable, Hashable, Codable { case note, warning, error }
    public var severity: Severity
    /// A stable kebab-case code, e.g. `response-body-missing`.
    public var code: String
    /// The exchange it concerns, when it concerns one.
    public var sequence: Int?
    public var message: String

    public init(_ severity: Severity, code: String, sequence: Int? = nil, message: String) {
        self.severity = severity
        self.code = code
        self.sequence = sequence
        self.message = message
    }
}
