import Foundation
import HARFormat
import TrafficModel

/// A recording written back out as HAR 1.2 (`export`), its secrets replaced by stand-ins
/// unless the caller keeps them.
public enum RecordingExport {
    /// The HAR of `recording`; with `redacting`, cookie values, the secret headers and
    /// query values, and body secrets are replaced first (`SecretNames`).
    public static func har(_ recording: Recording, redacting names: SecretNames?, toolVersion: String) throws -> Data {
        var recording = recording
        if let names {
            names.redactAtRest(&recording)
            for k in recording.exchanges.indices {
                names.redactBodySecrets(&recording.exchanges[k].request)
                names.redactMessageSecrets(&recording.exchanges[k])
            }
        }
        return try HARExporter(toolVersion: toolVersion).data(for: recording)
    }
}

/// `record --proxy`'s journal: each exchange appended to a HAR file as it completes
/// (`HARJournal`), so that a session killed outright leaves a file to store.
public final class RecordingJournal: Sendable {
    let journal: HARJournal

    public init(path: String, toolVersion: String) throws {
        journal = try HARJournal(path: path, toolVersion: toolVersion)
    }

    /// Appends one exchange, with what went wrong with it; `bodyFile` reads a kept body
    /// from the proxy's spool file, `ending` ends what `begin` noted (`HARJournal.append`).
    public func append(_ exchange: Exchange, failure: String?, incomplete: String?, receivedBodyBytes: Int?,
                       bodyFile: (count: Int, read: (Range<Int>) throws -> Data)? = nil, ending: Int? = nil) throws {
        try journal.append(exchange, failure: failure, incomplete: incomplete, receivedBodyBytes: receivedBodyBytes, bodyFile: bodyFile, ending: ending)
    }

    /// Notes an exchange that goes on (a streamed response, a WebSocket), for a killed
    /// session's journal to keep, marked with `incomplete`.
    public func begin(_ id: Int, _ exchange: Exchange, incomplete: String) throws { try journal.begin(id, exchange, incomplete: incomplete) }

    /// Notes a message of a WebSocket begun as `id`.
    public func message(_ id: Int, _ message: WebSocketMessage) throws { try journal.message(id, message) }

    /// The exchanges appended so far.
    public var count: Int { journal.count }

    /// Closes the HAR's entries and file.
    public func finish() throws { try journal.finish() }

    /// Closes the journal a killed session left at `path`; returns the exchanges it holds.
    public static func recover(path: String) throws -> Int { try HARJournal.recover(path: path) }
}
