import Foundation
import TrafficModel

/// A HAR file written one entry at a time as exchanges complete (the recording proxy's):
/// each entry is one line, written whole, so a process killed mid-session leaves every
/// completed exchange readable; `recover` closes such a file into a HAR.
///
/// An exchange that is still going (a streamed response, a WebSocket) is noted in a side
/// file, `PATH.inflight`, when it begins (`begin`): a line holding its entry as it would be
/// if cut there, with the reason. Its end adds a line saying so. A process killed mid-way
/// leaves the begun but unended exchanges there, and `recover` adds them to the HAR, each
/// marked in `response._error`; `finish` removes the side file.
public final class HARJournal: @unchecked Sendable {
    public let path: String
    let handle: FileHandle
    let inflight: FileHandle
    let exporter: HARExporter
    var entries = 0

    /// The side file of exchanges begun and not yet ended.
    public static func inflightPath(_ path: String) -> String { path + ".inflight" }

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
        let side = Self.inflightPath(path)
        guard FileManager.default.createFile(atPath: side, contents: nil, attributes: [.posixPermissions: 0o600]),
              let inflight = FileHandle(forWritingAtPath: side) else {
            throw InputError(file: side, problem: "cannot create the recording journal's side file")
        }
        self.inflight = inflight
        let head = #"{"log": {"version": "1.2", "creator": {"name": "h5replay", "version": "\#(toolVersion)"}, "pages": [], "entries": ["#
        try handle.write(contentsOf: Data(head.utf8))
    }

    /// Appends one exchange as one line (`HARExporter.entryLine` says what the notes become):
    /// one write, or for a response body of a megabyte or more, the body streamed into the
    /// line a slice at a time (`StreamedBody`). A line cut short by a kill is dropped by
    /// `recover`.
    ///
    /// `bodyFile` reads the response body's bytes from where they are kept (the recording
    /// proxy's spool file) when that is not memory: `exchange.response.body` then has the
    /// same bytes but is not read, so a large body never comes into memory whole.
    /// `ending` is the number `begin` was given for this exchange, if it was begun.
    public func append(_ exchange: Exchange, failure: String? = nil, incomplete: String? = nil, receivedBodyBytes: Int? = nil,
                       bodyFile: (count: Int, read: (Range<Int>) throws -> Data)? = nil, ending: Int? = nil) throws {
        let separator = Data(entries == 0 ? "\n".utf8 : ",\n".utf8)
        if exchange.response.body.count >= StreamedBody.threshold, !exchange.response.bodyMissing {
            var source = StreamedBody.Source(exchange.response.body)
            if let bodyFile, bodyFile.count == exchange.response.body.count { source = StreamedBody.Source(count: bodyFile.count, read: bodyFile.read) }
            let streamed = try StreamedBody(exchange, body: source, exporter: exporter, failure: failure, incomplete: incomplete, receivedBodyBytes: receivedBodyBytes)
            try handle.write(contentsOf: separator + streamed.before)
            try streamed.write(source) { try handle.write(contentsOf: $0) }
            try handle.write(contentsOf: streamed.after)
        } else {
            try handle.write(contentsOf: separator + (try exporter.entryLine(exchange, failure: failure, incomplete: incomplete, receivedBodyBytes: receivedBodyBytes)))
        }
        entries += 1
        // Ended once it is whole in the journal: a kill before this line leaves it noted
        // twice (whole, and as begun), never lost.
        if let ending { try inflight.write(contentsOf: Data("{\"ended\":\(ending)}\n".utf8)) }
    }

    public var count: Int { entries }

    /// Notes an exchange that has begun and goes on (its response streams, or it became a
    /// WebSocket), as the entry `recover` adds, marked with `incomplete`, if the process
    /// dies before `append` ends it with the same `id`.
    public func begin(_ id: Int, _ exchange: Exchange, incomplete: String) throws {
        let entry = try exporter.entryLine(exchange, incomplete: incomplete)
        try inflight.write(contentsOf: Data("{\"begun\":\(id),\"entry\":".utf8) + entry + Data("}\n".utf8))
    }

    /// Notes a message of a WebSocket begun as `id`, for `recover` to add to its entry.
    public func message(_ id: Int, _ message: WebSocketMessage) throws {
        let object: [String: Any] = ["message": id, "data": HARExporter.webSocketMessages([message])[0]]
        try inflight.write(contentsOf: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) + Data("\n".utf8))
    }

    /// Closes the HAR; the side file goes.
    public func finish() throws {
        try handle.write(contentsOf: Self.tail)
        try handle.close()
        try? inflight.close()
        try? FileManager.default.removeItem(atPath: Self.inflightPath(path))
    }

    /// The entries of the side file begun and never ended, in the order they began, each
    /// with the WebSocket messages noted for it.
    static func unended(_ side: String) -> [Data] {
        guard let data = FileManager.default.contents(atPath: side) else { return [] }
        var begun: [(id: Int, entry: [String: Any])] = []
        var messages: [Int: [Any]] = [:]
        var ended = Set<Int>()
        for line in data.split(separator: UInt8(ascii: "\n")) {
            guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] else { continue }
            if let id = object["ended"] as? Int { ended.insert(id) }
            if let id = object["begun"] as? Int, let entry = object["entry"] as? [String: Any] { begun.append((id, entry)) }
            if let id = object["message"] as? Int, let message = object["data"] { messages[id, default: []].append(message) }
        }
        return begun.filter { !ended.contains($0.id) }.compactMap { id, entry in
            var entry = entry
            if let list = messages[id] { entry["_webSocketMessages"] = list }
            return try? JSONSerialization.data(withJSONObject: entry, options: [.sortedKeys, .withoutEscapingSlashes])
        }
    }

    /// Makes a journal a killed process left into a complete HAR: a last line written only
    /// in part is dropped. Returns the number of entries kept; a file already complete is
    /// left as it is.
    @discardableResult
    public static func recover(path: String) throws -> Int {
        let side = inflightPath(path)
        defer { try? FileManager.default.removeItem(atPath: side) }
        guard let input = FileHandle(forReadingAtPath: path) else { throw InputError(file: path, problem: "cannot be opened") }
        defer { try? input.close() }
        // Read and written a line at a time: a journal of large bodies (a 1 GB download
        // keeps 64 MB) is not held whole, once read and once written (1.6 GB of memory for
        // an 805 MB journal).
        var lines = LineReader(input)
        guard let head = try lines.next(), head.starts(with: Data(#"{"log""#.utf8)) else {
            throw InputError(file: path, problem: "not a recording journal")
        }
        let temporary = path + ".recovering"
        guard FileManager.default.createFile(atPath: temporary, contents: head, attributes: [.posixPermissions: 0o600]),
              let output = FileHandle(forWritingAtPath: temporary) else {
            throw InputError(file: temporary, problem: "cannot be written")
        }
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        try output.seekToEnd()
        var kept = 0
        func keep(_ entry: Data) throws {
            try output.write(contentsOf: Data((kept == 0 ? "\n" : ",\n").utf8) + entry)
            kept += 1
        }
        while let line = try lines.next() {
            // The tail's line: the journal was finished; it is left as it is.
            if line == Data("]}}".utf8) {
                try? output.close()
                return kept
            }
            // Entries are joined by ",\n": the comma ends the line before.
            var entry = line
            if entry.last == UInt8(ascii: ",") { entry = entry.dropLast() }
            guard !entry.isEmpty, (try? JSONSerialization.jsonObject(with: entry)) is [String: Any] else { continue }
            try keep(entry)
        }
        // Exchanges the process was in the middle of, marked as such.
        for entry in unended(side) { try keep(entry) }
        try output.write(contentsOf: tail)
        try output.close()
        guard rename(temporary, path) == 0 else { throw InputError(file: path, problem: "cannot be replaced: \(String(cString: strerror(errno)))") }
        return kept
    }
}

/// A file's lines, read a megabyte at a time; a line is held whole, the file is not.
struct LineReader {
    let handle: FileHandle
    var buffer = Data()
    var atEnd = false

    init(_ handle: FileHandle) { self.handle = handle }

    /// The next line without its newline; nil after the last.
    mutating func next() throws -> Data? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[buffer.startIndex..<newline]
                buffer = buffer[(newline + 1)...]
                return Data(line)
            }
            if atEnd {
                guard !buffer.isEmpty else { return nil }
                defer { buffer = Data() }
                return Data(buffer)
            }
            let chunk = try handle.read(upToCount: 1 << 20) ?? Data()
            if chunk.isEmpty { atEnd = true } else { buffer.append(chunk) }
        }
    }
}
