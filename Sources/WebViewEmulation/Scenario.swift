/// What a recording cannot say about the app and page (BEHAVIOUR.md sections 2 and 8).
public struct Scenario: Sendable, Hashable, Codable {
    /// Where cookies that were there from the start lived.
    public enum PreexistingJar: String, Sendable, Hashable, Codable, CaseIterable { case native, web, both }

    public var preexisting: PreexistingJar
    /// Binary bodies count as Blob (the conservative default) or ArrayBuffer.
    public var binaryAsBlob: Bool

    public init(preexisting: PreexistingJar = .both, binaryAsBlob: Bool = true) {
        self.preexisting = preexisting
        self.binaryAsBlob = binaryAsBlob
    }
}
