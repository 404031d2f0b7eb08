/// A framing or coding oddity the tolerant parser read past: what it was, and, where the
/// mainstream engines hand a page different things for it, which engine the parser decoded
/// like and what the other one does (measured in Chromium and WebKitGTK by
/// Tools/framing/record; the framing corpus test holds each claim to those truths).
public struct FramingOddity: Sendable, Hashable {
    public enum Engine: String, Sendable, Hashable {
        case chromium = "Chromium"
        case webkit = "WebKitGTK (libsoup)"
    }

    /// When the engines disagree: the one the parser decoded like, and what the other does.
    public struct Split: Sendable, Hashable {
        public var follows: Engine
        public var other: String
    }

    /// A stable kebab-case id, e.g. `chunk-size-junk`.
    public var id: String
    /// The oddity in words, e.g. "a chunk-size line carries text after the size".
    public var what: String
    /// Nil when both engines decode it as the parser does.
    public var split: Split?

    init(_ id: String, _ what: String, follows: Engine? = nil, other: String = "") {
        self.id = id
        self.what = what
        self.split = follows.map { Split(follows: $0, other: other) }
    }

    /// The engine the parser did not follow.
    public var otherEngine: Engine? {
        split.map { $0.follows == .chromium ? .webkit : .chromium }
    }

    public var sentence: String {
        guard let split else { return "\(what); decoded as Chromium and WebKitGTK both do" }
        return "\(what); decoded as \(split.follows.rawValue) does, while \(otherEngine!.rawValue) \(split.other)"
    }
}

/// The oddities the tolerant parser and decoder know, each with what the two engines do
/// (Tests/PacketCaptureTests/Framing/corpus.json holds the measurements).
extension FramingOddity {
    // The head.
    static let bareLF = FramingOddity("bare-lf", "head or chunk lines end in a bare LF")
    static let extraCR = FramingOddity("cr-cr-lf", "head lines end in CR CR LF")
    static let controlInReason = FramingOddity("control-in-reason", "the status line's reason holds a control character (a bare CR)")
    static let statusGlued = FramingOddity("status-glued", "the reason is glued to the status code")
    static let icyStatus = FramingOddity("icy-status", "an ICY status line (Shoutcast)", follows: .webkit, other: "hands the page the whole answer, head included, as an HTTP/0.9 body")
    static let statusLine = FramingOddity("status-line", "a status line that is not `HTTP/d.d ddd`", follows: .webkit, other: "reads a status code from it and hands the page the response")
    static let statusUnder100 = FramingOddity("status-under-100", "a status code under 100", follows: .chromium, other: "refuses the response")
    static let statusCut = FramingOddity("status-cut", "the stream ended inside the status line", follows: .webkit, other: "hands the page an empty 200 response")
    static let statusVersion = FramingOddity("status-version", "an HTTP version other than 1.0 and 1.1 in the status line", follows: .chromium, other: "refuses the response")
    static let headerLineSkipped = FramingOddity("header-line-skipped", "a header line that is not a field (no colon, an empty name or a character a name cannot hold) is skipped")
    static let obsFold = FramingOddity("obs-fold", "a header value folded onto a continuation line")
    static let framingNameSpace = FramingOddity("framing-name-space", "whitespace between Content-Length or Transfer-Encoding and its colon", follows: .chromium, other: "does not recognise the field")
    // Transfer-Encoding.
    static let teList = FramingOddity("te-list", "one Transfer-Encoding field lists codings besides a single chunked; only chunked is undone", follows: .chromium, other: "refuses the response")
    static let teRepeated = FramingOddity("te-repeated", "Transfer-Encoding sent in more than one field")
    static let teUnknown = FramingOddity("te-unknown", "Transfer-Encoding names a coding other than chunked and identity; the body is framed as if the field were absent", follows: .chromium, other: "refuses the response")
    static let teIdentity = FramingOddity("te-identity", "Transfer-Encoding: identity (or empty); the body is framed as if it were absent")
    static let teHTTP10 = FramingOddity("te-http10", "Transfer-Encoding: chunked in an HTTP/1.0 response; the chunking is kept in the body", follows: .chromium, other: "removes the chunking")
    // Content-Length.
    static let contentLengthList = FramingOddity("cl-list", "Content-Length as a list of equal values", follows: .chromium, other: "refuses the response")
    static let contentLengthPlus = FramingOddity("cl-plus", "a plus sign before the Content-Length")
    static let contentLengthInvalid = FramingOddity("cl-invalid", "a Content-Length that is not a number is ignored; the body runs to the close", follows: .chromium, other: "refuses the response or its body (an empty value: reads no body)")
    static let contentLengthConflict = FramingOddity("cl-conflict", "Content-Length fields that disagree", follows: .chromium, other: "reads the last one")
    static let bodyOn205 = FramingOddity("body-on-205", "a body on a 205 Reset Content", follows: .webkit, other: "hands the page no body")
    // Chunking.
    static let chunkSizeSpace = FramingOddity("chunk-size-space", "spaces after a chunk size")
    static let chunkSizeTab = FramingOddity("chunk-size-tab", "a tab after a chunk size", follows: .webkit, other: "refuses the body")
    static let chunkSizeInvalid = FramingOddity("chunk-size-invalid", "a chunk-size line that is not hex digits and an extension; the body stops there", follows: .chromium, other: "reads what it can of the size and goes on")
    static let chunkDataEnd = FramingOddity("chunk-data-end", "chunk data not followed by CRLF; the body stops there", follows: .chromium, other: "reads past it")
    // Content codings.
    static let codingCase = FramingOddity("coding-case", "a content coding in upper case", follows: .chromium, other: "hands the page the coded bytes")
    static let codingEmptyItem = FramingOddity("coding-empty-item", "an empty item in the Content-Encoding list", follows: .webkit, other: "hands the page the coded bytes")
    static let codingIdentityListed = FramingOddity("coding-identity-listed", "identity listed beside another content coding; the body is handed over as sent")
    static let codingZstd = FramingOddity("coding-zstd", "zstd, which h5replay does not decode; the body is kept as sent", follows: .webkit, other: "decodes zstd")
    static let codingTrailing = FramingOddity("coding-trailing-bytes", "bytes after the end of the coded stream (another gzip member, or junk) are dropped")
    static let codingCut = FramingOddity("coding-cut", "the coded stream ends early; what decoded before the end is kept")
    static let codingCheck = FramingOddity("coding-check-failed", "the coded stream is corrupt after some bytes decoded (a wrong CRC); what decoded is kept", follows: .chromium, other: "hands the page the coded bytes")
    static let codingCorrupt = FramingOddity("coding-corrupt", "a gzip or deflate body that does not decode from its start; kept as sent", follows: .chromium, other: "hands the page the bytes as they were before that coding")
}
