import TrafficModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An incremental HTTP/1.x parser for one direction of one connection (docs/design.md, "Capture import and live capture",
/// "HTTP/1.1").
///
/// Feed it the direction's bytes in order as they arrive, in any slicing; it delivers whole
/// messages in `completed`. It handles keep-alive and pipelining, Content-Length, chunked
/// bodies with trailers, bodies read until the connection closes, HEAD/1xx/204/304 without
/// a body, and Upgrade/CONNECT, after which the stream is no longer HTTP. A gap (bytes the
/// capture lost) keeps what came before, marks the message incomplete, and resynchronises
/// at the next message start.
///
/// Two strictness levels:
/// - `.tolerant` (the default, used for captures) accepts what browsers and servers accept:
///   bare LF line endings, obs-fold, any method token, Transfer-Encoding beside
///   Content-Length (Transfer-Encoding wins, RFC 9112 section 6.3).
/// - `.strict` rejects them as llhttp's strict mode does; the conformance suite runs it.
public struct HTTPParser: Sendable {
    public enum Kind: Sendable { case request, response }
    public enum Strictness: Sendable { case strict, tolerant }

    enum State: Sendable, Equatable {
        case start
        case head
        case fixedBody(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case untilClose
        /// After Upgrade or CONNECT: the rest of the stream is another protocol.
        case tunnel
        /// After a message with `Connection: close`.
        case closed
        /// Looking for the next message start after a gap or a mid-stream start.
        case resync
        case failed
    }

    public let kind: Kind
    public var strictness: Strictness
    public var limits: HTTPLimits

    /// Messages finished since the caller last emptied this.
    public var completed: [HTTPMessage] = []
    /// Requests: the method of each request head parsed, in order, for the response
    /// parser of the same connection (`expectResponse(to:)`). The caller empties it.
    public var startedMethods: [String] = []
    /// The error that stopped parsing, if any.
    public private(set) var error: HTTPParseError?
    /// Bytes skipped while looking for a message start (after a gap or a mid-stream start).
    public private(set) var skippedBytes = 0
    /// Treats every message as having no body, whatever its head says (llhttp's `skipBody`,
    /// as a response to HEAD is read).
    var skipBodies = false
    /// The stream turned into another protocol (Upgrade, CONNECT).
    public var isTunnel: Bool { state == .tunnel }

    var state: State
    var buffer: [UInt8] = []
    /// Stream offset of the next byte `process` will see.
    var offset = 0
    var current: HTTPMessage?
    /// Bytes and lines of the current head read so far.
    var headBytes = 0
    var headLines = 0
    var headDone = false
    /// What the header fields read so far say about the body.
    var framing = Framing()
    /// Responses: the methods of the requests not yet answered, oldest first.
    var pendingMethods: [String] = []
    var pendingMethodsStart = 0
    /// What the current message's head decided about what follows it.
    var closeAfter = false
    var tunnelAfter = false
    var lastTime = 0.0
    /// The stream began mid-connection (a capture joined late): a bad first message may be
    /// the tail of one the capture missed.
    let startedMidStream: Bool
    /// Messages delivered so far.
    var delivered = 0
    /// The size of the last head's field list, for the next one's reservation: the heads of
    /// one direction of a connection are alike.
    var lastFieldBytes = 0
    var lastFieldCount = 0

    public init(kind: Kind, strictness: Strictness = .tolerant, limits: HTTPLimits = .default, midStream: Bool = false) {
        self.kind = kind
        self.strictness = strictness
        self.limits = limits
        self.state = midStream ? .resync : .start
        self.startedMidStream = midStream
    }

    /// Responses: a request with this method was sent on the connection and awaits its answer.
    public mutating func expectResponse(to method: String) {
        pendingMethods.append(method)
    }

    /// The parser is in the middle of a message.
    public var inMessage: Bool { current != nil }
    /// When the message in progress began, if one is.
    public var currentStartTime: Double? { current?.startTime }

    // MARK: - Input

    public mutating func feed(_ bytes: UnsafeRawBufferPointer, time: Double) {
        guard !bytes.isEmpty else { return }
        lastTime = time
        var rest = bytes
        if !buffer.isEmpty {
            // The bytes held end inside a line (a head's, a chunk size's): the new bytes
            // complete it, and once the parser has taken all it holds, the rest of them are
            // read in place. Copied after the held bytes whole, a segment of body behind a
            // chunk-size line cut by the segment before was copied for the line's sake.
            var held = buffer
            buffer = []
            let line = memchr(rest.baseAddress!, 0x0A, rest.count).map { rest.baseAddress!.distance(to: $0) + 1 } ?? rest.count
            held.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[..<line]))
            rest = UnsafeRawBufferPointer(rebasing: rest[line...])
            var used = held.withUnsafeBufferPointer { process($0, time: time) }
            if used < held.count {
                // Still not taken whole: the rest follows the held bytes, as it would have.
                held.removeFirst(used)
                if !rest.isEmpty {
                    held.append(contentsOf: rest)
                    used = held.withUnsafeBufferPointer { process($0, time: time) }
                    held.removeFirst(used)
                }
                buffer = held
                return
            }
        }
        guard !rest.isEmpty else { return }
        let used = rest.withMemoryRebound(to: UInt8.self) { process($0, time: time) }
        if used < rest.count { buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[used...])) }
    }

    public mutating func feed(_ bytes: [UInt8], time: Double) {
        bytes.withUnsafeBytes { feed($0, time: time) }
    }

    /// `length` bytes of the stream were lost (a gap in the capture).
    public mutating func gap(_ length: Int, time: Double) {
        guard length > 0 else { return }
        // Bytes held for an unfinished line are cut short by the gap.
        let held = buffer.count
        buffer = []
        switch state {
        case .fixedBody(let remaining) where held == 0 && length <= remaining:
            current?.complete = false
            current?.problems.append("\(length) body bytes missing (gap in the capture)")
            current?.bodyLength += length
            offset += length
            state = remaining == length ? .fixedBody(remaining: 0) : .fixedBody(remaining: remaining - length)
            if remaining == length { finishMessage(time: time) }
        case .untilClose:
            current?.complete = false
            current?.problems.append("\(length) body bytes missing (gap in the capture)")
            current?.bodyLength += length
            offset += held + length
        case .tunnel, .failed, .closed:
            offset += held + length
        case .start, .resync:
            offset += held + length
            state = .resync
        default:
            current?.problems.append("\(length) bytes missing (gap in the capture); the message is cut short there")
            abandonMessage(time: time)
            offset += held + length
            state = .resync
        }
    }

    /// The stream ended (FIN, RST, end of capture). Finishes a read-until-close body and
    /// delivers an unfinished message as incomplete.
    public mutating func finish(time: Double) {
        if kind == .response, state == .head, headLines == 0, delivered == 0, !buffer.isEmpty, error == nil, strictness == .tolerant {
            error = HTTPParseError(code: .invalidStatus, reason: "the stream ended inside the status line", offset: offset, oddity: .statusCut)
        }
        if state == .untilClose {
            finishMessage(time: time)
        } else if current != nil {
            current?.problems.append(buffer.isEmpty && state != .head ? "the stream ended before the message did" : "the stream ended in the middle of the message")
            abandonMessage(time: time)
        }
        buffer = []
        state = .closed
    }

    // MARK: - The state machine

    mutating func process(_ p: UnsafeBufferPointer<UInt8>, time: Double) -> Int {
        var i = 0
        let n = p.count
        defer { offset += i }
        while i < n {
            switch state {
            case .start:
                let c = p[i]
                if c == 0x0D || c == 0x0A {
                    i += 1
                    continue
                }
                // Made in place: a message built beside and assigned was copied.
                current = HTTPMessage(head: HTTPHead())
                current!.startOffset = offset + i
                current!.startTime = time
                headBytes = 0
                headLines = 0
                headDone = false
                framing = Framing()
                state = .head

            case .head:
                // One line at a time, each checked as soon as it is whole, as llhttp does.
                guard let lf = Self.find(0x0A, in: p, from: i) else {
                    if strictness == .strict, let bad = Self.strayCR(UnsafeBufferPointer(rebasing: p[i..<n])) {
                        fail(.lineEnding, headLines == 0 ? "expected LF after CR" : "expected LF after headers", at: i + bad)
                        continue
                    }
                    if strictness == .strict, headLines >= 1, p[i] == 0x20 || p[i] == 0x09 {
                        fail(.invalidHeaderToken, headLines == 1 ? "unexpected space after start line" : "unexpected whitespace after header value", at: i)
                        continue
                    }
                    if headLines == 0, let problem = partialStartLineProblem(UnsafeBufferPointer(rebasing: p[i..<n])) {
                        fail(problem.code, problem.reason, at: i + problem.at)
                        continue
                    }
                    if headBytes + (n - i) > limits.maxHeaderBytes {
                        fail(.headerTooLarge, "the header section is over \(limits.maxHeaderBytes) bytes (--max-header-bytes)", at: i)
                        continue
                    }
                    return i
                }
                headBytes += lf + 1 - i
                if headBytes > limits.maxHeaderBytes {
                    fail(.headerTooLarge, "the header section is over \(limits.maxHeaderBytes) bytes (--max-header-bytes)", at: i)
                    continue
                }
                let lineStart = i
                i = lf + 1
                if let problem = headLine(UnsafeBufferPointer(rebasing: p[lineStart...lf])) {
                    fail(problem.code, problem.reason, at: lineStart + problem.at, oddity: problem.oddity)
                    continue
                }
                if headDone { afterHead(time: time, endOffset: offset + i) }

            case .fixedBody(let remaining):
                let take = min(remaining, n - i)
                appendBody(UnsafeBufferPointer(rebasing: p[i..<i + take]))
                i += take
                state = .fixedBody(remaining: remaining - take)
                if remaining == take { i = completeAt(i, time: time) }

            case .chunkSize:
                guard let lf = Self.find(0x0A, in: p, from: i) else {
                    if n - i > 4096 { fail(.invalidChunk, "a chunk-size line is over 4096 bytes", at: i) ; continue }
                    return i
                }
                switch parseChunkSize(UnsafeBufferPointer(rebasing: p[i..<lf])) {
                case .failure(let problem):
                    fail(problem.code, problem.reason, at: i + problem.at, oddity: problem.oddity)
                case .success(let size):
                    i = lf + 1
                    state = size == 0 ? .trailers : .chunkData(remaining: size)
                }

            case .chunkData(let remaining):
                let take = min(remaining, n - i)
                appendBody(UnsafeBufferPointer(rebasing: p[i..<i + take]))
                i += take
                state = remaining == take ? .chunkDataEnd : .chunkData(remaining: remaining - take)

            case .chunkDataEnd:
                let odd: FramingOddity? = strictness == .tolerant ? .chunkDataEnd : nil
                if p[i] == 0x0A, strictness == .tolerant {
                    i += 1
                    state = .chunkSize
                    note(.bareLF)
                } else if p[i] == 0x0D {
                    guard i + 1 < n else { return i }
                    guard p[i + 1] == 0x0A else { fail(.invalidChunk, "expected LF after chunk data", at: i + 1, oddity: odd); continue }
                    i += 2
                    state = .chunkSize
                } else {
                    fail(.invalidChunk, "expected CRLF after chunk data", at: i, oddity: odd)
                }

            case .trailers:
                guard let lf = Self.find(0x0A, in: p, from: i) else {
                    if n - i > limits.maxHeaderBytes { fail(.headerTooLarge, "a trailer line is over \(limits.maxHeaderBytes) bytes", at: i); continue }
                    return i
                }
                var line = UnsafeBufferPointer(rebasing: p[i..<lf])
                if line.last == 0x0D {
                    line = UnsafeBufferPointer(rebasing: line.dropLast())
                } else if strictness == .strict {
                    fail(.lineEnding, "missing CR before LF in a trailer", at: lf)
                    continue
                }
                i = lf + 1
                if line.isEmpty {
                    i = completeAt(i, time: time)
                } else if line.first == 0x20 || line.first == 0x09, current?.trailers.isEmpty == false {
                    Self.withText(Self.trimmed(line)) { current!.trailers.extendLastValue(separator: 0x20, $0) }
                } else {
                    switch parseField(line, at: 0) {
                    case .failure(let problem): fail(problem.code, problem.reason, at: i)
                    case .success(let field):
                        if (current?.trailers.count ?? 0) >= limits.maxHeaderCount {
                            fail(.tooManyHeaders, "more than \(limits.maxHeaderCount) trailer fields (--max-header-count)", at: i)
                        } else if current != nil {
                            Self.append(field, of: line, to: &current!.trailers)
                        }
                    }
                }

            case .untilClose:
                appendBody(UnsafeBufferPointer(rebasing: p[i..<n]))
                i = n

            case .tunnel, .failed:
                i = n

            case .closed:
                if strictness == .strict {
                    fail(.dataAfterClose, "data after `Connection: close`", at: i)
                } else {
                    state = .start
                }

            case .resync:
                if let start = Self.findMessageStart(p, from: i, kind: kind) {
                    skippedBytes += start - i
                    i = start
                    state = .start
                } else {
                    let keep = min(n - i, 24)
                    skippedBytes += n - i - keep
                    return n - keep
                }
            }
        }
        return i
    }

    /// Finishes the current message once its body is read, and moves to what follows it.
    mutating func completeAt(_ i: Int, time: Double) -> Int {
        finishMessage(time: time, endOffset: offset + i)
        return i
    }

    mutating func finishMessage(time: Double, endOffset: Int? = nil) {
        // Taken out, not copied: a message is a dozen references.
        guard var message = current.take() else { return }
        message.endOffset = endOffset ?? offset
        message.endTime = time
        completed.append(consume message)
        delivered += 1
        if tunnelAfter {
            state = .tunnel
        } else if closeAfter {
            state = .closed
        } else {
            state = .start
        }
        tunnelAfter = false
        closeAfter = false
    }

    /// Delivers the current message as incomplete (its problems say why).
    mutating func abandonMessage(time: Double, endOffset: Int? = nil) {
        guard var message = current.take() else { return }
        message.complete = false
        message.endOffset = endOffset ?? offset
        message.endTime = time
        // A message cut short inside its head has no usable head: keep it only when the
        // start line was read.
        if !(message.head.method.isEmpty && message.head.status == 0) { completed.append(message) }
        tunnelAfter = false
        closeAfter = false
    }

    mutating func fail(_ code: HTTPParseError.Code, _ reason: String, at index: Int, oddity: FramingOddity? = nil) {
        let error = HTTPParseError(code: code, reason: reason, offset: offset + index, oddity: oddity)
        if self.error == nil { self.error = error }
        current?.problems.append("parse error at stream offset \(error.offset): \(reason)")
        if let oddity { note(oddity) }
        // A first response that is not HTTP/1.x from its first line (HTTP/0.9-style, or junk
        // before the status line) is refused whole, as browsers refuse it; anywhere else a
        // capture keeps going, since the next message start may still be found.
        let refusedWhole = kind == .response && !startedMidStream && delivered == 0 && current?.head.status == 0
        // Cut short where the problem is: `offset` is where the bytes being read began,
        // which depends on how the stream was cut into segments.
        abandonMessage(time: lastTime, endOffset: error.offset)
        state = strictness == .strict || refusedWhole ? .failed : .resync
    }

    /// Records an oddity the tolerant parser read past, once per message.
    mutating func note(_ oddity: FramingOddity) {
        guard current != nil, !current!.oddities.contains(oddity) else { return }
        current!.oddities.append(oddity)
    }

    /// Room for a body of `length` bytes, as its Content-Length says, up to 256 KB: grown
    /// from nothing, a 70 KB upload was copied twice on the way. Past that, the body grows
    /// as it comes, so a Content-Length the stream never delivers holds at most 256 KB.
    mutating func reserveBody(_ length: Int) {
        guard length > 0 else { return }
        current!.body.reserveCapacity(min(length, limits.maxBodyBytes, 256 << 10))
    }

    @inline(__always)
    mutating func appendBody(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard !bytes.isEmpty else { return }
        current!.bodyLength += bytes.count
        let room = limits.maxBodyBytes - current!.body.count
        if room >= bytes.count {
            current!.body.append(bytes)
        } else {
            if room > 0 { current!.body.append(UnsafeBufferPointer(rebasing: bytes.prefix(room))) }
            current!.bodyTruncated = true
        }
    }

    // MARK: - After the head

    mutating func afterHead(time: Double, endOffset: Int) {
        // Read through the optional in place: `current?.head` copied the whole message.
        guard current != nil else { return }
        // The head's parts read where they are: a copy of the head was a retain and a
        // release of its strings and its list, for every message.
        let status = current!.head.status
        let isHTTP10 = current!.head.version == "HTTP/1.0"
        let at = current!.startOffset - offset
        let transferEncoding = framing.transferEncoding
        let contentLength = framing.contentLength
        let sawContentLength = contentLength != nil
        let connectionClose = framing.close
        let connectionUpgrade = framing.upgrade
        if kind == .request, skipBodies, contentLength != nil || !transferEncoding.isEmpty {
            framing.skip = true
        }
        let chunked = transferEncoding.last == "chunked"
        if !transferEncoding.isEmpty, !framing.skip {
            if kind == .request, transferEncoding.dropLast().contains("chunked"), strictness == .strict {
                fail(.invalidTransferEncoding, "invalid `Transfer-Encoding` header value: chunked is not the last coding", at: at)
                return
            }
            if !chunked, kind == .request {
                fail(.invalidTransferEncoding, "request has invalid `Transfer-Encoding`: chunked is not the last coding", at: at)
                return
            }
            if sawContentLength { current?.problems.append("Transfer-Encoding and Content-Length both present; Transfer-Encoding wins") }
        }
        lastFieldBytes = current!.head.headers.byteCount
        lastFieldCount = current!.head.headers.count
        closeAfter = connectionClose || isHTTP10 && !Self.keepsAlive(current!.head.headers)

        var noBody = false
        switch kind {
        case .request:
            let method = current!.head.method
            startedMethods.append(method)
            if method == "CONNECT" {
                tunnelAfter = true
                noBody = true
            } else if connectionUpgrade, current!.head.first("Upgrade") != nil {
                tunnelAfter = true
            } else if method == "PRI" {
                // The HTTP/2 connection preface (RFC 9113 section 3.4): not an HTTP/1 message.
                current = nil
                state = .tunnel
                return
            }
        case .response:
            if status >= 100, status < 200 {
                noBody = true
                if status == 101 {
                    tunnelAfter = true
                    _ = takePendingMethod()
                }
                closeAfter = false
            } else {
                let method = takePendingMethod()
                if method == "HEAD" || skipBodies || status == 204 || status == 304 { noBody = true }
                if method == "CONNECT", status >= 200, status < 300 {
                    tunnelAfter = true
                    noBody = true
                }
            }
        }
        if noBody || framing.skip {
            state = .fixedBody(remaining: 0)
            finishMessage(time: time, endOffset: endOffset)
            return
        }
        if kind == .response, strictness == .tolerant {
            frameResponseBody(status: status, isHTTP10: isHTTP10, time: time, endOffset: endOffset)
            return
        }
        if chunked {
            state = .chunkSize
        } else if !transferEncoding.isEmpty {
            state = .untilClose
        } else if let length = contentLength {
            state = .fixedBody(remaining: length)
            reserveBody(length)
            if length == 0 { finishMessage(time: time, endOffset: endOffset) }
        } else if kind == .request {
            state = .fixedBody(remaining: 0)
            finishMessage(time: time, endOffset: endOffset)
        } else {
            state = .untilClose
        }
    }

    /// A tolerant response's body framing, as Chromium frames it (the framing corpus):
    /// chunked when any Transfer-Encoding item is chunked and the response is HTTP/1.1;
    /// otherwise a valid Content-Length; otherwise to the close. Oddities on the way are noted.
    mutating func frameResponseBody(status: Int, isHTTP10: Bool, time: Double, endOffset: Int) {
        let codings = framing.transferEncoding
        let listsChunked = codings.contains("chunked")
        if framing.transferEncodingFields > 1 {
            note(.teRepeated)
        } else if listsChunked, codings.count > 1 {
            note(.teList)
        }
        if !codings.isEmpty, !listsChunked {
            note(codings.allSatisfy { $0 == "identity" || $0.isEmpty } ? .teIdentity : .teUnknown)
        }
        if status == 205 { note(.bodyOn205) }
        if listsChunked, isHTTP10 { note(.teHTTP10) }
        if listsChunked, !isHTTP10 {
            state = .chunkSize
        } else if let length = framing.contentLength {
            state = .fixedBody(remaining: length)
            reserveBody(length)
            if length == 0 { finishMessage(time: time, endOffset: endOffset) }
        } else {
            state = .untilClose
        }
    }

    mutating func takePendingMethod() -> String {
        guard pendingMethodsStart < pendingMethods.count else { return "GET" }
        let method = pendingMethods[pendingMethodsStart]
        pendingMethodsStart += 1
        if pendingMethodsStart > 64, pendingMethodsStart * 2 > pendingMethods.count {
            pendingMethods.removeFirst(pendingMethodsStart)
            pendingMethodsStart = 0
        }
        return method
    }

    // MARK: - Byte helpers

    @inline(__always)
    static func find(_ byte: UInt8, in p: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard start < p.count, let base = p.baseAddress else { return nil }
        guard let hit = memchr(base + start, Int32(byte), p.count - start) else { return nil }
        return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
    }

    /// Where the next message seems to start: a line beginning with `HTTP/1.` (responses)
    /// or a method token followed by a target and ` HTTP/1.` (requests).
    static func findMessageStart(_ p: UnsafeBufferPointer<UInt8>, from start: Int, kind: Kind) -> Int? {
        var lineStart = start
        // A message starts at the first byte only when the caller got there at a line start;
        // after a gap that is unknown, so the first line is checked like any other.
        while lineStart < p.count {
            let lf = find(0x0A, in: p, from: lineStart)
            let lineEnd = lf ?? p.count
            if lineLooksLikeStart(UnsafeBufferPointer(rebasing: p[lineStart..<lineEnd]), kind: kind, complete: lf != nil) {
                return lineStart
            }
            guard let lf else { return nil }
            lineStart = lf + 1
        }
        return nil
    }

    static func lineLooksLikeStart(_ line: UnsafeBufferPointer<UInt8>, kind: Kind, complete: Bool) -> Bool {
        let http1: [UInt8] = Array("HTTP/1.".utf8)
        switch kind {
        case .response:
            guard line.count >= 12 else { return false }
            return line.prefix(7).elementsEqual(http1) && line[8] == 0x20
        case .request:
            guard complete, line.count >= 14 else { return false }
            var end = line.count
            if line[end - 1] == 0x0D { end -= 1 }
            guard end >= 14, line[end - 9] == 0x20, line[(end - 8)..<(end - 1)].elementsEqual(http1) else { return false }
            var k = 0
            while k < end, (line[k] >= 0x41 && line[k] <= 0x5A) || line[k] == 0x2D || line[k] == 0x5F { k += 1 }
            return k > 0 && k < end && line[k] == 0x20
        }
    }

    /// A start line's method, version or reason phrase: the usual ones (GET, POST,
    /// HTTP/1.1, HTTP/1.0, OK) as literals, which are neither validated nor copied; any other
    /// as `text` makes it. Four of a message's five start-line strings are one of these.
    static func word(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        // The bytes compared as one little-endian number each.
        guard let base = UnsafeRawPointer(bytes.baseAddress) else { return "" }
        switch bytes.count {
        case 2 where UInt16(littleEndian: base.loadUnaligned(as: UInt16.self)) == 0x4B4F: return "OK"
        case 3 where UInt16(littleEndian: base.loadUnaligned(as: UInt16.self)) == 0x4547 && bytes[2] == 0x54: return "GET"
        case 4 where UInt32(littleEndian: base.loadUnaligned(as: UInt32.self)) == 0x5453_4F50: return "POST"
        case 8:
            switch UInt64(littleEndian: base.loadUnaligned(as: UInt64.self)) {
            case 0x312E_312F_5054_5448: return "HTTP/1.1"
            case 0x302E_312F_5054_5448: return "HTTP/1.0"
            default: return text(bytes)
            }
        default: return text(bytes)
        }
    }

    static func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        // Header text is almost always ASCII: check that first, it is the cheap path.
        if isASCII(bytes) { return String(decoding: bytes, as: UTF8.self) }
        if let s = String(validating: bytes, as: UTF8.self) { return s }
        // Not UTF-8: ISO-8859-1, byte for byte, as HTTP/1.1 historically allowed.
        return String(bytes.map { Character(Unicode.Scalar($0)) })
    }

    /// `bytes` as `text` reads them, as UTF-8: the bytes themselves when they are ASCII or
    /// UTF-8 already (almost always), else their ISO-8859-1 reading.
    static func withText<R>(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if isASCII(bytes) || String(validating: bytes, as: UTF8.self) != nil { return body(bytes) }
        var latin1 = text(bytes)
        return latin1.withUTF8(body)
    }

    /// Appends the field `parseField` found in `line` to `list`, its value as `text` reads it.
    static func append(_ field: (name: Range<Int>, value: Range<Int>), of line: UnsafeBufferPointer<UInt8>, to list: inout HeaderList) {
        let name = UnsafeBufferPointer(rebasing: line[field.name])
        withText(UnsafeBufferPointer(rebasing: line[field.value])) { list.append(name: name, value: $0) }
    }

    /// Whether a Connection field lists keep-alive (an HTTP/1.0 message then stays open).
    static func keepsAlive(_ headers: HeaderList) -> Bool {
        var keeps = false
        headers.forEachValue("Connection") { if $0.containsCaseInsensitive("keep-alive") { keeps = true } }
        return keeps
    }

    /// Whether every byte is below 0x80, read eight at a time.
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = UnsafeRawPointer(bytes.baseAddress) else { return true }
        let n = bytes.count
        var high: UInt64 = 0
        var k = 0
        while k + 8 <= n {
            high |= base.loadUnaligned(fromByteOffset: k, as: UInt64.self)
            k += 8
        }
        while k < n {
            high |= UInt64(bytes[k])
            k += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// Where the first control character of a field value is, at or after `start`: a byte
    /// below 0x20 other than HTAB, or DEL (RFC 9110 section 5.5). Eight bytes at a time: a
    /// word with no byte below 0x20 and none equal to 0x7F is passed over whole (the two
    /// tests of "Bit Twiddling Hacks", exact for these bounds); a word with one is read byte
    /// by byte, a tab being the usual one.
    static func firstControl(in value: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let base = UnsafeRawPointer(value.baseAddress) else { return nil }
        let n = value.count
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var k = start
        while k < n {
            if k + 8 <= n {
                let w = base.loadUnaligned(fromByteOffset: k, as: UInt64.self)
                let below = (w &- ones &* 0x20) & ~w & highs
                let x = w ^ (ones &* 0x7F)
                let del = (x &- ones) & ~x & highs
                if below | del == 0 {
                    k += 8
                    continue
                }
            }
            let end = min(k + 8, n)
            while k < end {
                let c = value[k]
                if (c < 0x20 && c != 0x09) || c == 0x7F { return k }
                k += 1
            }
        }
        return nil
    }

    static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var lo = 0
        var hi = bytes.count
        while lo < hi, bytes[lo] == 0x20 || bytes[lo] == 0x09 { lo += 1 }
        while hi > lo, bytes[hi - 1] == 0x20 || bytes[hi - 1] == 0x09 { hi -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[lo..<hi])
    }

    /// The items of a comma-separated field value (RFC 9110 section 5.6.1), each without
    /// leading and trailing SP and HTAB, empty items kept: split on the bytes, since a
    /// split by Characters cost thousands of instructions a field.
    static func listItems(_ value: String) -> [String] {
        var items: [String] = []
        forEachListItem(value) { items.append(String(decoding: $0, as: UTF8.self)) }
        return items
    }

    /// Each comma-separated item of a list value, trimmed, as bytes: no string or array
    /// made. The framing reads every message's Content-Length and Connection.
    static func forEachListItem(_ value: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var value = value
        value.withUTF8 { forEachListItem($0, body) }
    }

    static func forEachListItem(_ b: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var start = 0
        for i in 0...b.count where i == b.count || b[i] == UInt8(ascii: ",") {
            body(trimmed(UnsafeBufferPointer(rebasing: b[start..<i])))
            start = i + 1
        }
    }

    /// Whether `bytes` spell `word`, given in lower case, in any ASCII case.
    static func spells(_ bytes: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
        bytes.equalsCaseInsensitive(word)
    }


    static func decimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var value = 0
        var any = false
        for c in bytes {
            guard c >= 0x30, c <= 0x39 else { return nil }
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(Int(c - 0x30))
            guard !o1, !o2 else { return nil }
            value = a
            any = true
        }
        return any ? value : nil
    }

    /// RFC 9110 tchar: ALPHA, DIGIT and `!#$%&'*+-.^_`|~`. Two 64-bit masks, one bit a
    /// byte below 128: a table in a global was reached through a lazy-initialisation check
    /// at every byte of every field name.
    @inline(__always)
    public static func isTokenChar(_ c: UInt8) -> Bool {
        c < 64 ? (tokenMaskLow >> UInt64(c)) & 1 == 1 : c < 128 && (tokenMaskHigh >> UInt64(c - 64)) & 1 == 1
    }

    static let tokenMaskLow: UInt64 = 0x03FF_6CFA_0000_0000
    static let tokenMaskHigh: UInt64 = 0x57FF_FFFF_C7FF_FFFE
}
