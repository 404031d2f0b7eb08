import Foundation
import TrafficModel

// Header lines are the model's `HeaderList`s as read off the wire (original casing, wire
// order): an exchange built from a parsed message takes its lists as they are, rather
// than a copy of every name and value.

/// A request line or a status line, and the header section after it.
public struct HTTPHead: Sendable, Hashable {
    /// Requests: the method token. Empty for responses.
    public var method: String = ""
    /// Requests: the request-target as sent (origin, absolute, authority or asterisk form).
    public var target: String = ""
    /// `HTTP/1.1`, `HTTP/1.0`...
    public var version: String = ""
    /// Responses: the status code. 0 for requests.
    public var status: Int = 0
    public var reason: String = ""
    public var headers = HeaderList()

    public init() {}

    /// The first value of the named header, compared ASCII case-insensitively.
    public func first(_ name: String) -> String? { headers.first(name) }

    /// The values of the fields named `name` as one comma-separated list, as RFC 9110
    /// section 5.3 reads repeated fields: the value itself when one field has the name,
    /// empty when none does.
    public func combined(_ name: String) -> String {
        var combined: String?
        headers.forEachValue(name) { value in
            let text = String(decoding: value, as: UTF8.self)
            combined = combined.map { $0 + ", " + text } ?? text
        }
        return combined ?? ""
    }
}

/// A whole message as the parser delivered it.
public struct HTTPMessage: Sendable {
    public var head: HTTPHead
    /// The body after transfer decoding (chunked removed), before content decoding.
    /// Holds at most the body-bytes limit; `bodyTruncated` says when more was sent.
    /// `Data`, as the model's bodies are: an exchange built from the message takes it as
    /// it is, not a copy.
    public var body = Data()
    /// Body bytes on the wire after transfer decoding, including any not kept.
    public var bodyLength: Int = 0
    public var trailers = HeaderList()
    /// False when the message ended early: a gap in the capture, the end of the stream, a
    /// parse error. `problems` says why.
    public var complete: Bool = true
    public var bodyTruncated: Bool = false
    /// Offsets of the first and one past the last byte in the direction's stream.
    public var startOffset: Int = 0
    public var endOffset: Int = 0
    /// Capture times (seconds since 1970) of the first and last byte.
    public var startTime: Double = 0
    public var endTime: Double = 0
    /// What went wrong while reading it, in words.
    public var problems: [String] = []
    /// Framing oddities the tolerant parser read past (none in strict mode, which refuses them).
    public var oddities: [FramingOddity] = []

    public init(head: HTTPHead) { self.head = head }
}

/// Size limits for one message (docs/design.md, "Reliability and security"). A message over a head limit is a
/// parse error; a body over the body limit is kept up to the limit and marked truncated.
public struct HTTPLimits: Sendable, Hashable {
    /// Bytes of the start line and header section together.
    public var maxHeaderBytes: Int
    public var maxHeaderCount: Int
    /// Body bytes kept per message.
    public var maxBodyBytes: Int

    public init(maxHeaderBytes: Int = 256 * 1024, maxHeaderCount: Int = 512, maxBodyBytes: Int = 64 << 20) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderCount = maxHeaderCount
        self.maxBodyBytes = maxBodyBytes
    }

    public static let `default` = HTTPLimits()
}

/// Why a stream stopped parsing.
public struct HTTPParseError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case invalidMethod = "invalid-method"
        case invalidURL = "invalid-url"
        case invalidVersion = "invalid-version"
        case invalidStatus = "invalid-status"
        case invalidHeaderToken = "invalid-header-token"
        case invalidHeaderValue = "invalid-header-value"
        case invalidContentLength = "invalid-content-length"
        case invalidTransferEncoding = "invalid-transfer-encoding"
        case invalidChunk = "invalid-chunk"
        case lineEnding = "invalid-line-ending"
        case headerTooLarge = "header-too-large"
        case tooManyHeaders = "too-many-headers"
        case dataAfterClose = "data-after-close"
    }

    public var code: Code
    public var reason: String
    /// Offset in the direction's stream where the problem was seen.
    public var offset: Int
    /// The framing oddity behind the error, when the tolerant parser knows one.
    public var oddity: FramingOddity?

    public init(code: Code, reason: String, offset: Int, oddity: FramingOddity? = nil) {
        self.code = code
        self.reason = reason
        self.offset = offset
        self.oddity = oddity
    }

    public var description: String { "offset \(offset): \(reason)" }
}

