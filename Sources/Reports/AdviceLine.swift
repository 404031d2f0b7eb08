/// One change advised for a preset, as the reports show it (`h5replay report --advise`):
/// what Pipeline's Adviser proved by replaying the run's recordings, as plain data.
public struct AdviceLine: Sendable, Hashable {
    public var preset: String
    /// `add-mitigation`, `set-option`, `version` or `preset`.
    public var kind: String
    /// The change as a person reads it.
    public var change: String
    /// What makes it in a preset file.
    public var snippet: String
    public var removes: Int
    public var adds: Int
    /// The findings removed, and those added, by code.
    public var codes: [String: Int]
    public var added: [String: Int]

    public init(preset: String, kind: String, change: String, snippet: String, removes: Int, adds: Int, codes: [String: Int], added: [String: Int]) {
        self.preset = preset
        self.kind = kind
        self.change = change
        self.snippet = snippet
        self.removes = removes
        self.adds = adds
        self.codes = codes
        self.added = added
    }

    /// "removes 1 (BODY_LOST 1), adds 0".
    public var counted: String {
        func list(_ counts: [String: Int]) -> String { counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") }
        return "removes \(removes) (\(list(codes))), adds \(adds)" + (added.isEmpty ? "" : " (\(list(added)))")
    }
}
