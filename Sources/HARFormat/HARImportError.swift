/// A HAR that cannot be imported: names the file, the entry and the field.
public struct HARImportError: Error, Sendable, CustomStringConvertible {
    public let file: String
    /// 0-based index in `log.entries`, when the problem is inside an entry.
    public let entryIndex: Int?
    /// JSON path of the field, e.g. `log.entries[3].request.headers[2]`.
    public let field: String
    public let problem: String

    public var description: String {
        var place = file
        if let entryIndex { place += ": entry \(entryIndex)" }
        return "\(place): \(field): \(problem)"
    }
}
