import Foundation
import TrafficModel

/// A HAR file written one entry at a time as exchanges complete (the recording proxy's):
/// each entry is one line, written whole, so a process killed mid-session leaves every
/// completed exchange readable; `recover` closes such a file into a HAR.
public final class HARJournal: @unchecked Sendable {
    public let path: String
    let handle: FileHandle
    let exporter: HARExporter
    var entries = 0

    static let tail = Data("\n]}}\n".utf8)

    /// Creates the file (readable by its owner alone: it holds cookies and bodies) and
    /// writes the HAR's head.
    public init(path: String, toolVersion: String) throws {
        self.path = path
        self.exporter = HARExporter(toolVersion: toolVersion)
        guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]),
              let handle = FileHandle(forWritingAtPath: path) else {
            throw InputError(file: path, problem: "cannot create the recording journal")
        }
        self.handle = handle
        let head = #"{"log": {"version": "1.2", "creator": {"name": "h5replay", "version": "\#(toolVersion)"}, "pages": [], "entries": ["#
        try handle.write(contentsOf: Data(head.utf8))
    }

    /// Appends one exchange as one line (`HARExporter.entryLine` says what the notes become):
    /// one write, or for a response body of a megabyte or more, the body streamed into the
    /// line a slice at a time (`StreamedBody`). A line cut short by a kill is dropped by
    /// `recover`.
    public func append(_ exchange: Exchange, failure: String? = nil, incomplete: String? = nil, receivedBodyBytes: Int? = nil) throws {
        let separator = Data(entries == 0 ? "\n".utf8 : ",\n".utf8)
        if exchange.response.body.count >= StreamedBody.threshold, !exchange.response.bodyMissing {
            let streamed = try StreamedBody(exchange, exporter: exporter, failure: failure, incomplete: incomplete, receivedBodyBytes: receivedBodyBytes)
            try handle.write(contentsOf: separator + streamed.before)
            try streamed.write(exchange.response.body) { try handle.write(contentsOf: $0) }
            try handle.write(contentsOf: streamed.after)
        } else {
            try handle.write(contentsOf: separator + (try exporter.entryLine(exchange, failure: failure, incomplete: incomplete, receivedBodyBytes: receivedBodyBytes)))
        }
        entries += 1
    }

    public var count: Int { entries }

    /// Closes the HAR.
    public func finish() throws {
        try handle.write(contentsOf: Self.tail)
        try handle.close()
    }

    /// Makes a journal a killed process left into a complete HAR: a last line written only
    /// in part is dropped. Returns the number of entries kept; a file already complete is
    /// left as it is.
    @discardableResult
    public static func recover(path: String) throws -> Int {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        if let whole = try? JSONSerialization.jsonObject(with: data) {
            return ((whole as? [String: Any])?["log"] as? [String: Any]).flatMap { $0["entries"] as? [Any] }?.count ?? 0
        }
        var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        guard let head = lines.first, head.starts(with: Data(#"{"log""#.utf8)) else {
            throw InputError(file: path, problem: "not a recording journal")
        }
        lines.removeFirst()
        var out = Data(head)
        var kept = 0
        for line in lines {
            // Entries are joined by ",\n": the comma ends the line before.
            var entry = line
            if entry.last == UInt8(ascii: ",") { entry = entry.dropLast() }
            guard !entry.isEmpty, (try? JSONSerialization.jsonObject(with: entry)) is [String: Any] else { continue }
            out.append(contentsOf: kept == 0 ? Data("\n".utf8) : Data(",\n".utf8))
            out.append(entry)
            kept += 1
        }
        out.append(tail)
        try out.write(to: URL(fileURLWithPath: path), options: .atomic)
        return kept
    }
}
