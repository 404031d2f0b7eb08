import Foundation
import TrafficModel

/// How `show` lists a WebSocket handshake's messages: which way each went, when after the
/// handshake began, its opcode and size, and the start of its payload, with secrets hidden
/// unless the user asks for them.
struct WebSocketMessageView {
    var redactor: Redactor
    /// Characters of a text payload shown; bytes of a binary one.
    static let previewCharacters = 60
    static let previewBytes = 16

    static func opcodeName(_ opcode: Int) -> String {
        switch opcode {
        case 1: return "text"
        case 2: return "binary"
        default: return "opcode \(opcode)"
        }
    }

    /// The payload's start: text on one line (a JSON message with its secret members'
    /// values replaced, URLs with their secret query values hidden), binary as hex.
    func preview(_ m: WebSocketMessage) -> String {
        guard m.opcode == 1, let text = String(data: m.data, encoding: .utf8) else {
            let hex = m.data.prefix(Self.previewBytes).map { String(format: "%02x", $0) }.joined(separator: " ")
            return m.data.count > Self.previewBytes ? hex + " …" : hex
        }
        var shown = text
        if !redactor.showSecrets {
            if let redacted = redactor.names.redactJSON(m.data) { shown = String(decoding: redacted, as: UTF8.self) }
            shown = redactor.text(shown)
        }
        let oneLine = String(shown.map { $0.isNewline || $0 == "\t" ? " " : $0 })
        guard oneLine.count > Self.previewCharacters else { return oneLine }
        return String(oneLine.prefix(Self.previewCharacters)) + "…"
    }

    /// The table's line for one message, `start` being the handshake's start.
    func line(_ m: WebSocketMessage, start: Double) -> String {
        let direction = m.direction.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)
        let opcode = Self.opcodeName(m.opcode).padding(toLength: 6, withPad: " ", startingAt: 0)
        let offset = String(format: "%+8.3fs", m.time - start), size = String(format: "%6d B", m.data.count)
        return "       ws \(direction) \(offset)  \(opcode) \(size)  \(preview(m))"
    }

    /// The JSON of one message: no payload beyond its preview, as `show` prints no body.
    func object(_ m: WebSocketMessage, start: Double) -> [String: Any] {
        [
            "direction": m.direction.rawValue, "time": RecordingReport.iso(m.time), "offset": m.time - start,
            "opcode": m.opcode, "length": m.data.count, "sha256": m.data.sha256Hex, "preview": preview(m),
        ]
    }
}
