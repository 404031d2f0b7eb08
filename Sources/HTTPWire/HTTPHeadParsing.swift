import TrafficModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Start lines, header fields and chunk-size lines (RFC 9112 sections 3, 4, 5 and 7.1).
extension HTTPParser {
    struct Problem: Error {
        var code: HTTPParseError.Code
        var reason: String
        /// Index in the bytes the parsing function was given.
        var at: Int
        /// The oddity behind it, when engines differ on it.
        var oddity: FramingOddity?

        init(_ code: HTTPParseError.Code, _ reason: String, at: Int, oddity: FramingOddity? = nil) {
            self.code = code
            self.reason = reason
            self.at = at
            self.oddity = oddity
        }
    }

    /// Methods llhttp knows for `HTTP/x.y`; strict parsing accepts only these.
    static let httpMethods: Set<String> = [
        "DELETE", "GET", "HEAD", "POST", "PUT", "CONNECT", "OPTIONS", "TRACE", "COPY", "LOCK", "MKCOL", "MOVE",
        "PROPFIND", "PROPPATCH", "SEARCH", "UNLOCK", "BIND", "REBIND", "UNBIND", "ACL", "REPORT", "MKACTIVITY",
        "CHECKOUT", "MERGE", "M-SEARCH", "NOTIFY", "SUBSCRIBE", "UNSUBSCRIBE", "PATCH", "PURGE", "MKCALENDAR",
        "LINK", "UNLINK", "SOURCE", "QUERY", "PRI",
    ]
    static let rtspMethods: Set<String> = [
        "OPTIONS", "DESCRIBE", "ANNOUNCE", "SETUP", "PLAY", "PAUSE", "TEARDOWN", "GET_PARAMETER", "SET_PARAMETER",
        "REDIRECT", "RECORD", "FLUSH", "GET", "POST",
    ]

    /// What the header fields say about the message body (RFC 9112 section 6).
    struct Framing: Sendable, Equatable {
        var contentLength: Int?
        var transferEncoding: [String] = []
        /// Transfer-Encoding fields seen (a list in one field and repeated fields differ in
        /// engines).
        var transferEncodingFields = 0
        var close = false
        var upgrade = false
        var skip = false
        /// A Content-Length field that is not a number (tolerant responses ignore it).
        var contentLengthInvalid = false
    }

    /// One line of the head, with its LF. Fills `current.head` and `framing`; sets
    /// `headDone` at the empty line that ends the head.
    mutating func headLine(_ raw: UnsafeBufferPointer<UInt8>) -> Problem? {
        // The first CR not followed by LF, wherever it is in the line, as a line still
        // arriving is checked (`process`): the same error however the stream was cut.
        if strictness == .strict, let bad = Self.strayCR(raw) {
            return Problem(.lineEnding, headLines == 0 ? "expected LF after CR" : "expected LF after headers", at: bad)
        }
        var lineEnd = raw.count - 1
        if lineEnd > 0, raw[lineEnd - 1] == 0x0D {
            lineEnd -= 1
            if strictness == .tolerant, lineEnd > 0, raw[lineEnd - 1] == 0x0D {
                while lineEnd > 0, raw[lineEnd - 1] == 0x0D { lineEnd -= 1 }
                note(.extraCR)
            }
        } else if strictness == .strict {
            return Problem(.lineEnding, headLines == 0 ? "missing expected CR after the start line" : "missing expected CR after header value", at: lineEnd)
        } else {
            note(.bareLF)
        }
        let line = UnsafeBufferPointer(rebasing: raw[..<lineEnd])
        defer { headLines += 1 }
        if headLines == 0 {
            var head = HTTPHead()
            // Room for a head like the last one on this connection: one allocation per list
            // rather than growths (a first head: the size most heads fit).
            head.headers.reserveCapacity(fields: max(lastFieldCount, 16), bytes: lastFieldBytes > 0 ? lastFieldBytes + 64 : 512)
            let problem = kind == .request ? parseRequestLine(line, into: &head) : parseStatusLine(line, into: &head)
            current?.head = head
            return problem
        }
        if line.isEmpty {
            headDone = true
            return nil
        }
        if line[0] == 0x20 || line[0] == 0x09 {
            // obs-fold: a continuation of the previous field's value (RFC 9112 section 5.2).
            // Strict parsing rejects it, as RFC 9112 lets a server do.
            if strictness == .strict {
                return Problem(.invalidHeaderToken, headLines == 1 ? "unexpected space after start line" : "unexpected whitespace after header value", at: 0)
            }
            guard let last = current?.head.headers.indices.last else { return nil }
            let valueWasEmpty = current!.head.headers.withField(last) { $1.isEmpty }
            Self.withText(Self.trimmed(line)) { current!.head.headers.extendLastValue(separator: valueWasEmpty ? nil : 0x20, $0) }
            note(.obsFold)
            let refolds = current!.head.headers.withField(last) { name, _ in Self.spells(name, "content-length") || Self.spells(name, "transfer-encoding") }
            if refolds {
                // The fold changed a field the framing was read from: read it again.
                framing = Framing()
                let headers = current!.head.headers
                for k in headers.indices {
                    if let problem = headers.withField(k, { frame(name: $0, value: $1) }) { return problem }
                }
            }
            return nil
        }
        switch parseField(line, at: 0) {
        case .failure(let problem):
            if strictness == .tolerant, kind == .response, problem.code == .invalidHeaderToken {
                // Both engines skip a line that is not a field.
                note(.headerLineSkipped)
                return nil
            }
            return problem
        case .success(let field):
            guard current!.head.headers.count < limits.maxHeaderCount else {
                return Problem(.tooManyHeaders, "more than \(limits.maxHeaderCount) header fields (--max-header-count)", at: 0)
            }
            let name = UnsafeBufferPointer(rebasing: line[field.name])
            return Self.withText(UnsafeBufferPointer(rebasing: line[field.value])) { value in
                current!.head.headers.append(name: name, value: value)
                return frame(name: name, value: value)
            }
        }
    }

    /// Checks a field that decides the framing as soon as it is read: its name and its
    /// value as the list holds it.
    mutating func frame(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) -> Problem? {
        // Only Connection (10 bytes), Content-Length (14) and Transfer-Encoding (17) decide
        // it: most fields are ruled out by their name's length, not three comparisons.
        switch name.count {
        case 10, 14, 17: break
        default: return nil
        }
        if strictness == .tolerant, kind == .response {
            if let problem = frameResponseTolerantly(name: name, value: value) { return problem }
        } else if Self.spells(name, "content-length") {
            let value = Self.trimmed(value)
            guard !value.isEmpty else { return Problem(.invalidContentLength, "empty Content-Length", at: 0) }
            guard let length = Self.decimal(value) else {
                let allDigits = value.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
                return Problem(.invalidContentLength, allDigits ? "Content-Length overflow" : "invalid character in Content-Length", at: 0)
            }
            if let previous = framing.contentLength, strictness == .strict || previous != length {
                return Problem(.invalidContentLength, "duplicate Content-Length", at: 0)
            }
            if !framing.transferEncoding.isEmpty, strictness == .strict {
                return Problem(.invalidContentLength, "Content-Length can't be present with Transfer-Encoding", at: 0)
            }
            framing.contentLength = length
        } else if Self.spells(name, "transfer-encoding") {
            if framing.contentLength != nil, strictness == .strict {
                return Problem(.invalidTransferEncoding, "Transfer-Encoding can't be present with Content-Length", at: 0)
            }
            readTransferCodings(value)
        }
        if Self.spells(name, "connection") {
            Self.forEachListItem(value) { t in
                if Self.spells(t, "close") { framing.close = true }
                if Self.spells(t, "upgrade") { framing.upgrade = true }
            }
        }
        return nil
    }

    /// A Transfer-Encoding field's codings, lowercased, added to the framing's.
    mutating func readTransferCodings(_ value: UnsafeBufferPointer<UInt8>) {
        framing.transferEncodingFields += 1
        Self.forEachListItem(value) { coding in
            framing.transferEncoding.append(String(decoding: coding, as: UTF8.self).lowercased())
        }
    }

    /// A response's Content-Length and Transfer-Encoding read as Chromium reads them (the
    /// framing corpus): a Content-Length that is not a number is ignored, a list of equal
    /// values is one value, values that disagree refuse the response.
    mutating func frameResponseTolerantly(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) -> Problem? {
        let isContentLength = Self.spells(name, "content-length")
        let isTransferEncoding = Self.spells(name, "transfer-encoding")
        guard isContentLength || isTransferEncoding else { return nil }
        if isTransferEncoding {
            readTransferCodings(value)
            return nil
        }
        // The items read in place: the first value, the first that differs from it, how
        // many; an item that is not a number drops the field (and what came before it).
        var first: Int?
        var differing: Int?
        var count = 0
        var invalid = false
        Self.forEachListItem(value) { item in
            guard !invalid else { return }
            var digits = item
            if digits.first == UInt8(ascii: "+") {
                digits = UnsafeBufferPointer(rebasing: digits.dropFirst())
                note(.contentLengthPlus)
            }
            guard let value = Self.decimal(digits) else {
                note(.contentLengthInvalid)
                framing.contentLengthInvalid = true
                invalid = true
                return
            }
            count += 1
            if let first { if differing == nil, value != first { differing = value } } else { first = value }
        }
        guard !invalid, let first else { return nil }
        if count > 1 { note(.contentLengthList) }
        // Each value against the one before it, the field's first against an earlier field's.
        if let previous = framing.contentLength, previous != first {
            return Problem(.invalidContentLength, "Content-Length fields disagree (\(previous) and \(first))", at: 0, oddity: .contentLengthConflict)
        }
        framing.contentLength = first
        if let differing {
            return Problem(.invalidContentLength, "Content-Length fields disagree (\(first) and \(differing))", at: 0, oddity: .contentLengthConflict)
        }
        return nil
    }

    /// Index of a CR followed by something other than LF.
    static func strayCR(_ p: UnsafeBufferPointer<UInt8>) -> Int? {
        var k = 0
        while let cr = find(0x0D, in: p, from: k) {
            if cr + 1 < p.count, p[cr + 1] != 0x0A { return cr + 1 }
            k = cr + 1
        }
        return nil
    }

    /// A start line still arriving that is already wrong (a bad version, a bad method).
    func partialStartLineProblem(_ partial: UnsafeBufferPointer<UInt8>) -> Problem? {
        guard strictness == .strict else { return nil }
        let line = partial.last == 0x0D ? UnsafeBufferPointer(rebasing: partial.dropLast()) : partial
        switch kind {
        case .request:
            guard let sp1 = Self.find(0x20, in: line, from: 0), let sp2 = Self.find(0x20, in: line, from: sp1 + 1) else { return nil }
            let version = UnsafeBufferPointer(rebasing: line[(sp2 + 1)...])
            for name in ["HTTP/", "RTSP/", "ICE/"] where version.starts(with: name.utf8) {
                let digits = UnsafeBufferPointer(rebasing: version[name.utf8.count...])
                guard digits.count >= 3 else { return nil }
                if let problem = checkVersion(digits, atEnd: true) { return Problem(problem.code, problem.reason, at: sp2 + 1 + name.utf8.count + problem.at) }
                return nil
            }
            let prefixes = ["HTTP/", "RTSP/", "ICE/"].map { Array($0.utf8) }
            if !prefixes.contains(where: { $0.starts(with: version.prefix($0.count)) }) {
                return Problem(.invalidVersion, "expected HTTP/, RTSP/ or ICE/", at: sp2 + 1)
            }
            return nil
        case .response:
            return nil
        }
    }

    /// `name: value`, with the name a token and the value without control characters.
    /// The name's and the value's ranges in `line`; the value without the white space
    /// around it.
    mutating func parseField(_ line: UnsafeBufferPointer<UInt8>, at base: Int) -> Result<(name: Range<Int>, value: Range<Int>), Problem> {
        guard let colon = Self.find(0x3A, in: line, from: 0) else {
            return .failure(Problem(.invalidHeaderToken, "invalid header token: a header line without a colon", at: base))
        }
        var nameEnd = colon
        if strictness == .tolerant {
            while nameEnd > 0, line[nameEnd - 1] == 0x20 || line[nameEnd - 1] == 0x09 { nameEnd -= 1 }
        }
        guard nameEnd > 0 else { return .failure(Problem(.invalidHeaderToken, "invalid header token: an empty field name", at: base)) }
        for k in 0..<nameEnd where !Self.isTokenChar(line[k]) {
            return .failure(Problem(.invalidHeaderToken, "invalid header token", at: base + k))
        }
        if nameEnd < colon, kind == .response {
            let name = UnsafeBufferPointer(rebasing: line[..<nameEnd])
            if Self.spells(name, "content-length") || Self.spells(name, "transfer-encoding") {
                note(.framingNameSpace)
            }
        }
        let rest = UnsafeBufferPointer(rebasing: line[(colon + 1)...])
        let value = Self.trimmed(rest)
        // Where the value starts in the line, past the spaces the trim left out.
        let valueStart = colon + 1 + (rest.baseAddress.flatMap { r in value.baseAddress.map { r.distance(to: $0) } } ?? 0)
        var from = 0
        while let k = Self.firstControl(in: value, from: from) {
            if strictness == .strict || value[k] == 0 {
                return .failure(Problem(.invalidHeaderValue, "invalid header value char", at: base + valueStart + k))
            }
            from = k + 1
        }
        return .success((0..<nameEnd, valueStart..<valueStart + value.count))
    }

    /// `METHOD SP request-target SP HTTP-version`.
    func parseRequestLine(_ line: UnsafeBufferPointer<UInt8>, into head: inout HTTPHead) -> Problem? {
        var k = 0
        while k < line.count, Self.isTokenChar(line[k]) { k += 1 }
        guard k > 0 else { return Problem(.invalidMethod, "invalid method", at: 0) }
        let method = Self.word(UnsafeBufferPointer(rebasing: line[..<k]))
        guard k < line.count, line[k] == 0x20 else {
            return Problem(.invalidMethod, k < line.count ? "invalid method" : "expected space after method", at: k)
        }
        k += 1
        if strictness == .tolerant { while k < line.count, line[k] == 0x20 { k += 1 } }
        let targetStart = k
        while k < line.count, line[k] != 0x20 { k += 1 }
        let target = UnsafeBufferPointer(rebasing: line[targetStart..<k])
        guard !target.isEmpty else { return Problem(.invalidURL, "an empty request-target", at: targetStart) }
        if let problem = checkTarget(target, method: method) { return Problem(problem.code, problem.reason, at: targetStart + problem.at) }
        guard k < line.count else {
            // HTTP/0.9: a request line without a version.
            head.method = method
            head.target = Self.text(target)
            head.version = "HTTP/0.9"
            return nil
        }
        k += 1
        if strictness == .tolerant { while k < line.count, line[k] == 0x20 { k += 1 } }
        let versionBytes = UnsafeBufferPointer(rebasing: line[k...])
        let protocolName: String
        if versionBytes.starts(with: "HTTP/".utf8) {
            protocolName = "HTTP"
        } else if versionBytes.starts(with: "RTSP/".utf8) {
            protocolName = "RTSP"
        } else if versionBytes.starts(with: "ICE/".utf8) {
            protocolName = "ICE"
        } else {
            return Problem(.invalidVersion, "expected HTTP/, RTSP/ or ICE/", at: k)
        }
        let digits = UnsafeBufferPointer(rebasing: versionBytes[(protocolName.utf8.count + 1)...])
        if let problem = checkVersion(digits, atEnd: true) { return Problem(problem.code, problem.reason, at: k + protocolName.utf8.count + 1 + problem.at) }
        if strictness == .strict {
            switch protocolName {
            case "HTTP" where !Self.httpMethods.contains(method):
                return Problem(.invalidMethod, "invalid method for HTTP/x.x request", at: 0)
            case "RTSP" where !Self.rtspMethods.contains(method):
                return Problem(.invalidMethod, "invalid method for RTSP/x.x request", at: 0)
            case "ICE" where method != "SOURCE":
                return Problem(.invalidMethod, "expected SOURCE method for ICE/x.x request", at: 0)
            default: break
            }
        }
        head.method = method
        head.target = Self.text(target)
        head.version = Self.word(versionBytes)
        return nil
    }

    /// `HTTP-version SP status-code [SP reason-phrase]`.
    mutating func parseStatusLine(_ line: UnsafeBufferPointer<UInt8>, into head: inout HTTPHead) -> Problem? {
        // Chromium reads a status line out of anything that starts with "http" in any case;
        // libsoup wants `HTTP/d.d SP ddd`. The tolerant parser refuses what libsoup refuses.
        let odd: FramingOddity? = strictness == .tolerant && Self.spells(UnsafeBufferPointer(rebasing: line.prefix(4)), "http")
            || strictness == .tolerant && line.first == 0x20 ? .statusLine : nil
        let prefix: Int
        if line.starts(with: "HTTP/".utf8) {
            prefix = 5
        } else if line.starts(with: "RTSP/".utf8) {
            prefix = 5
        } else if line.starts(with: "ICE/".utf8) {
            prefix = 4
        } else if strictness == .tolerant, line.starts(with: "ICY ".utf8) {
            head.version = "ICY"
            note(.icyStatus)
            return parseStatusCode(line, from: 4, into: &head)
        } else {
            return Problem(.invalidVersion, "expected HTTP/, RTSP/ or ICE/", at: 0, oddity: odd)
        }
        var k = prefix
        while k < line.count, line[k] != 0x20 { k += 1 }
        if let problem = checkVersion(UnsafeBufferPointer(rebasing: line[prefix..<k]), atEnd: false) {
            return Problem(problem.code, problem.reason, at: prefix + problem.at, oddity: odd)
        }
        head.version = Self.word(UnsafeBufferPointer(rebasing: line[..<k]))
        if strictness == .tolerant, head.version != "HTTP/1.1", head.version != "HTTP/1.0", prefix == 5, line.first == 0x48 {
            note(.statusVersion)
        }
        guard k < line.count else { return Problem(.invalidVersion, "expected space after version", at: k, oddity: odd) }
        return parseStatusCode(line, from: k + 1, into: &head)
    }

    /// `status-code [SP reason-phrase]` from `start`.
    mutating func parseStatusCode(_ line: UnsafeBufferPointer<UInt8>, from start: Int, into head: inout HTTPHead) -> Problem? {
        var k = start
        let odd: FramingOddity? = strictness == .tolerant ? .statusLine : nil
        if strictness == .tolerant { while k < line.count, line[k] == 0x20 { k += 1 } }
        let statusStart = k
        var status = 0
        while k < line.count, line[k] >= 0x30, line[k] <= 0x39, k - statusStart < 3 {
            status = status * 10 + Int(line[k] - 0x30)
            k += 1
        }
        guard k - statusStart == 3 else { return Problem(.invalidStatus, "invalid status code", at: k, oddity: odd) }
        if status < 100, strictness == .tolerant { note(.statusUnder100) }
        if k < line.count {
            var reasonStart = k + 1
            if line[k] == 0x20 || (strictness == .tolerant && line[k] == 0x09) {
                // The usual separator.
            } else if strictness == .tolerant, !(line[k] >= 0x30 && line[k] <= 0x39) {
                reasonStart = k
                note(.statusGlued)
            } else {
                return Problem(.invalidStatus, "invalid status code", at: k, oddity: odd)
            }
            let reason = UnsafeBufferPointer(rebasing: line[reasonStart...])
            if let bad = reason.firstIndex(where: { $0 < 0x20 && $0 != 0x09 || $0 == 0x7F }) {
                if strictness == .strict || reason[bad] == 0 {
                    return Problem(.invalidStatus, "invalid character in the reason phrase", at: reasonStart + bad)
                }
                note(.controlInReason)
            }
            head.reason = Self.word(reason)
        }
        head.status = status
        return nil
    }

    /// `DIGIT "." DIGIT`; strict parsing accepts 0.9, 1.0, 1.1, 2.0 and 3.0 only.
    func checkVersion(_ v: UnsafeBufferPointer<UInt8>, atEnd: Bool) -> Problem? {
        guard v.count >= 1, v[0] >= 0x30, v[0] <= 0x39 else { return Problem(.invalidVersion, "invalid HTTP version", at: 0) }
        guard v.count >= 2, v[1] == 0x2E else { return Problem(.invalidVersion, v.count >= 2 ? "expected dot" : "invalid HTTP version", at: 1) }
        guard v.count >= 3, v[2] >= 0x30, v[2] <= 0x39 else { return Problem(.invalidVersion, "invalid HTTP version", at: 2) }
        if v.count > 3 { return Problem(.invalidVersion, atEnd ? "expected CRLF after version" : "expected space after version", at: 3) }
        if strictness == .strict {
            let known: [(UInt8, UInt8)] = [(0, 9), (1, 0), (1, 1), (2, 0), (3, 0)]
            if !known.contains(where: { $0.0 == v[0] - 0x30 && $0.1 == v[2] - 0x30 }) {
                return Problem(.invalidVersion, "invalid HTTP version", at: 0)
            }
        }
        return nil
    }

    /// The request-target may hold no space or control character (RFC 9112 section 3.2).
    func checkTarget(_ t: UnsafeBufferPointer<UInt8>, method: String) -> Problem? {
        for (k, c) in t.enumerated() where c < 0x21 || c == 0x7F {
            return Problem(.invalidURL, "invalid characters in url", at: k)
        }
        guard strictness == .strict else { return nil }
        if let k = t.firstIndex(where: { $0 >= 0x80 }) { return Problem(.invalidURL, "invalid char in url path", at: k) }
        // Absolute form: the scheme must be letters, digits, "+", "-" or "."; one "@" at most
        // in the authority (llhttp's URL checks).
        if t[0] != 0x2F, t[0] != 0x2A, method != "CONNECT" {
            var k = 0
            while k < t.count, t[k] != 0x3A {
                let c = t[k] | 0x20
                guard c >= 0x61 && c <= 0x7A || (k > 0 && (t[k] >= 0x30 && t[k] <= 0x39 || t[k] == 0x2B || t[k] == 0x2D || t[k] == 0x2E)) else {
                    return Problem(.invalidURL, "unexpected char in url schema", at: k)
                }
                k += 1
            }
            guard k + 2 < t.count, t[k + 1] == 0x2F, t[k + 2] == 0x2F else { return Problem(.invalidURL, "unexpected char in url schema", at: k) }
            var j = k + 3
            var ats = 0
            while j < t.count, t[j] != 0x2F, t[j] != 0x3F, t[j] != 0x23 {
                if t[j] == 0x40 { ats += 1 }
                if ats > 1 { return Problem(.invalidURL, "double @ in url", at: j) }
                j += 1
            }
        }
        return nil
    }

    /// `chunk-size [ chunk-ext ] CRLF`; the line given excludes the LF.
    mutating func parseChunkSize(_ line: UnsafeBufferPointer<UInt8>) -> Result<Int, Problem> {
        var k = 0
        var size = 0
        while k < line.count, let digit = Self.hexValue(line[k]) {
            guard size < (1 << 56) else { return .failure(Problem(.invalidChunk, "chunk size overflow", at: k, oddity: strictness == .tolerant ? .chunkSizeInvalid : nil)) }
            size = size << 4 | digit
            k += 1
        }
        guard k > 0 else { return .failure(Problem(.invalidChunk, "invalid character in chunk size", at: 0, oddity: strictness == .tolerant ? .chunkSizeInvalid : nil)) }
        var end = line.count
        if end > k, line[end - 1] == 0x0D {
            end -= 1
        } else if strictness == .strict {
            return .failure(Problem(.invalidChunk, "missing CR before LF after chunk size", at: end))
        }
        if strictness == .tolerant {
            // Tolerated: spaces and tabs after the size, and any extension text.
            let afterSize = k
            while k < end, line[k] == 0x20 || line[k] == 0x09 { k += 1 }
            guard k == end || line[k] == 0x3B else {
                return .failure(Problem(.invalidChunk, "invalid character in chunk size", at: k, oddity: .chunkSizeInvalid))
            }
            if k > afterSize { note(line[afterSize..<k].contains(0x09) ? .chunkSizeTab : .chunkSizeSpace) }
            if line.count == end { note(.bareLF) }
            return .success(size)
        }
        if let cr = Self.find(0x0D, in: UnsafeBufferPointer(rebasing: line[..<end]), from: k) {
            return .failure(Problem(.invalidChunk, "expected LF after chunk size", at: cr + 1))
        }
        // chunk-ext = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] ), strictly without BWS.
        while k < end {
            guard line[k] == 0x3B else { return .failure(Problem(.invalidChunk, "invalid character in chunk size", at: k)) }
            k += 1
            let nameStart = k
            while k < end, Self.isTokenChar(line[k]) { k += 1 }
            guard k > nameStart else { return .failure(Problem(.invalidChunk, "invalid character in chunk extensions", at: k)) }
            guard k < end else { break }
            if line[k] == 0x3B { continue }
            guard line[k] == 0x3D else { return .failure(Problem(.invalidChunk, "invalid character in chunk extensions", at: k)) }
            k += 1
            if k < end, line[k] == 0x22 {
                k += 1
                var closed = false
                while k < end {
                    let c = line[k]
                    if c == 0x22 { closed = true; k += 1; break }
                    if c == 0x5C {
                        k += 1
                        guard k < end, line[k] == 0x09 || line[k] >= 0x20 && line[k] != 0x7F else {
                            return .failure(Problem(.invalidChunk, "invalid character in chunk extensions quoted value", at: k))
                        }
                    } else if c < 0x20 && c != 0x09 || c == 0x7F {
                        return .failure(Problem(.invalidChunk, "invalid character in chunk extensions quoted value", at: k))
                    }
                    k += 1
                }
                guard closed else { return .failure(Problem(.invalidChunk, "invalid character in chunk extensions quoted value", at: k)) }
            } else {
                let valueStart = k
                while k < end, Self.isTokenChar(line[k]) { k += 1 }
                guard k > valueStart else { return .failure(Problem(.invalidChunk, "invalid character in chunk extensions", at: k)) }
            }
        }
        return .success(size)
    }

    @inline(__always)
    static func hexValue(_ c: UInt8) -> Int? {
        switch c {
        case 0x30...0x39: return Int(c - 0x30)
        case 0x41...0x46: return Int(c - 0x41 + 10)
        case 0x61...0x66: return Int(c - 0x61 + 10)
        default: return nil
        }
    }
}
