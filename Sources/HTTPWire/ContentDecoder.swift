import CBrotli
import CZlib

/// Undoes `Content-Encoding` (RFC 9110 section 8.4): gzip, deflate (zlib-wrapped or raw, as
/// servers send both), br and identity, applied in reverse order of the header's list.
///
/// A decoded-size limit and a ratio limit guard against decompression bombs: decoding
/// stops at the limit and says so.
///
/// Tolerant decoding (the default) hands over what browsers hand the page (the framing
/// corpus, measured in Chromium and WebKitGTK): a stream that ends early or turns corrupt
/// after some output keeps that output, bytes after the end of the first gzip member are
/// dropped, identity listed beside another coding leaves the body as sent. Strict decoding
/// throws on each of those instead, and reads every gzip member.
public struct ContentDecoder: Sendable {
    public var maxDecodedBytes: Int
    /// Decoded bytes allowed per encoded byte.
    public var maxRatio: Int
    public var tolerant: Bool

    public init(maxDecodedBytes: Int = 64 << 20, maxRatio: Int = 1000, tolerant: Bool = true) {
        self.maxDecodedBytes = maxDecodedBytes
        self.maxRatio = maxRatio
        self.tolerant = tolerant
    }

    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String
        /// What the engines make of it, when they differ.
        public var oddity: FramingOddity?

        init(description: String, oddity: FramingOddity? = nil) {
            self.description = description
            self.oddity = oddity
        }
    }

    public struct Decoded: Sendable {
        public var bytes: [UInt8]
        /// Codings applied, outermost first, lowercased.
        public var codings: [String]
        /// Decoding stopped at a limit; `bytes` holds what came before it.
        public var limited: String?
        /// Oddities read past (tolerant decoding only).
        public var oddities: [FramingOddity] = []
    }

    /// How one stage ended.
    enum StageEnd {
        case complete
        case hitLimit
        /// Tolerant decoding kept what came before this oddity.
        case tolerated(FramingOddity)
    }

    /// The codings named by a Content-Encoding value, in the order they were applied.
    public static func codings(_ header: String) -> [String] {
        HTTPParser.listItems(header).map { $0.lowercased() }.filter { !$0.isEmpty && $0 != "identity" }
    }

    /// Decodes `body`; throws when a coding is unknown or the data is corrupt.
    public func decode(_ body: [UInt8], contentEncoding: String) throws(Failure) -> Decoded {
        let codings = Self.codings(contentEncoding)
        var oddities: [FramingOddity] = []
        if tolerant {
            let items = HTTPParser.listItems(contentEncoding)
            if items.count > 1, items.contains(where: \.isEmpty) { oddities.append(.codingEmptyItem) }
            if items.contains(where: { $0 != $0.lowercased() }) { oddities.append(.codingCase) }
            let named = items.map { $0.lowercased() }.filter { !$0.isEmpty }
            if named.contains("identity"), named.contains(where: { $0 != "identity" }) {
                return Decoded(bytes: body, codings: [], limited: nil, oddities: oddities + [.codingIdentityListed])
            }
            if named.contains("zstd") { return Decoded(bytes: body, codings: [], limited: nil, oddities: oddities + [.codingZstd]) }
        }
        var bytes = body
        var limited: String?
        for coding in codings.reversed() {
            guard !bytes.isEmpty else { break }
            let limit = min(maxDecodedBytes, max(bytes.count, 1).multipliedReportingOverflow(by: maxRatio).overflow ? Int.max : bytes.count * maxRatio)
            let result: (bytes: [UInt8], end: StageEnd)
            switch coding {
            case "gzip", "x-gzip": result = try inflate(bytes, windowBits: 15 + 16, limit: limit, name: "gzip")
            case "deflate":
                // RFC 9110 says zlib-wrapped; some servers send raw deflate. The zlib header's
                // check bits tell them apart.
                let zlibWrapped = bytes.count >= 2 && bytes[0] & 0x0F == 8 && (UInt16(bytes[0]) << 8 | UInt16(bytes[1])) % 31 == 0
                result = try inflate(bytes, windowBits: zlibWrapped ? 15 : -15, limit: limit, name: "deflate")
            case "br": result = try brotli(bytes, limit: limit)
            default: throw Failure(description: "unknown content coding \"\(coding)\"")
            }
            bytes = result.bytes
            switch result.end {
            case .complete: continue
            case .tolerated(let oddity):
                if !oddities.contains(oddity) { oddities.append(oddity) }
                continue
            case .hitLimit:
                limited = bytes.count >= maxDecodedBytes
                    ? "decoding stopped at \(maxDecodedBytes) bytes (--max-decoded-bytes)"
                    : "decoding stopped at a ratio of \(maxRatio) decoded bytes per encoded byte (--max-decode-ratio)"
            }
            break
        }
        return Decoded(bytes: bytes, codings: codings, limited: limited, oddities: oddities)
    }

    /// A stage that failed: tolerant decoding keeps what decoded before the failure, as
    /// browsers do, unless nothing did.
    func failed(_ description: String, output: [UInt8], cut: Bool, gzipOrDeflate: Bool) throws(Failure) -> (bytes: [UInt8], end: StageEnd) {
        if tolerant, cut { return (output, .tolerated(.codingCut)) }
        if tolerant, !output.isEmpty { return (output, .tolerated(.codingCheck)) }
        throw Failure(description: description, oddity: tolerant && gzipOrDeflate ? .codingCorrupt : nil)
    }

    func inflate(_ input: [UInt8], windowBits: Int32, limit: Int, name: String) throws(Failure) -> (bytes: [UInt8], end: StageEnd) {
        var stream = z_stream()
        guard h5r_inflate_init2(&stream, windowBits) == Z_OK else { throw Failure(description: "\(name): zlib would not start") }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        output.reserveCapacity(min(limit, input.count * 4))
        var status: Int32 = Z_OK
        var trailing = false
        var cut = false
        let tolerant = self.tolerant
        let outcome: Result<Bool, Failure> = input.withUnsafeBufferPointer { inBuffer in
            // zlib reads the input and never writes it; its pointer is not const.
            stream.next_in = inBuffer.baseAddress.map { UnsafeMutablePointer(mutating: $0) }
            stream.avail_in = UInt32(inBuffer.count)
            return Self.withChunk { out in
                while true {
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(out.count)
                    status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    let produced = out.count - Int(stream.avail_out)
                    if produced > 0 {
                        let room = limit - output.count
                        output.append(contentsOf: out.prefix(min(produced, room)))
                        if produced > room { return .success(true) }
                    }
                    switch status {
                    case Z_STREAM_END:
                        // gzip allows several members one after another (RFC 1952 section 2.2);
                        // browsers stop after the first, and tolerant decoding does too.
                        if stream.avail_in > 0, tolerant {
                            trailing = true
                        } else if windowBits > 15, stream.avail_in > 0, inflateReset(&stream) == Z_OK {
                            continue
                        }
                        return .success(false)
                    case Z_OK: continue
                    case Z_BUF_ERROR:
                        if stream.avail_in == 0 {
                            cut = true
                            return .failure(Failure(description: "\(name): the data ends early (\(output.count) bytes decoded)"))
                        }
                        continue
                    default:
                        let message = stream.msg.map { String(cString: $0) } ?? "error \(status)"
                        return .failure(Failure(description: "\(name): \(message) after \(output.count) decoded bytes"))
                    }
                }
            }
        }
        switch outcome {
        case .success(let hitLimit): return (output, hitLimit ? .hitLimit : trailing ? .tolerated(.codingTrailing) : .complete)
        case .failure(let failure): return try failed(failure.description, output: output, cut: cut, gzipOrDeflate: true)
        }
    }

    /// A buffer a decoder writes into before its output is copied on: left uninitialised,
    /// since only what the decoder wrote is read (zeroing 64 KB per body cost more than
    /// inflating most bodies).
    static func withChunk<R>(_ body: (UnsafeMutableBufferPointer<UInt8>) -> R) -> R {
        let chunk = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 64 * 1024)
        defer { chunk.deallocate() }
        return body(chunk)
    }

    func brotli(_ input: [UInt8], limit: Int) throws(Failure) -> (bytes: [UInt8], end: StageEnd) {
        guard let state = BrotliDecoderCreateInstance(nil, nil, nil) else { throw Failure(description: "br: the decoder would not start") }
        defer { BrotliDecoderDestroyInstance(state) }
        var output: [UInt8] = []
        var cut = false
        let outcome: Result<Bool, Failure> = input.withUnsafeBufferPointer { inBuffer in
            var nextIn = inBuffer.baseAddress
            var availIn = inBuffer.count
            return Self.withChunk { out in
                while true {
                    var nextOut = out.baseAddress
                    var availOut = out.count
                    let result = BrotliDecoderDecompressStream(state, &availIn, &nextIn, &availOut, &nextOut, nil)
                    let produced = out.count - availOut
                    if produced > 0 {
                        let room = limit - output.count
                        output.append(contentsOf: out.prefix(min(produced, room)))
                        if produced > room { return .success(true) }
                    }
                    switch result {
                    case BROTLI_DECODER_RESULT_SUCCESS: return .success(false)
                    case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT: continue
                    case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
                        cut = true
                        return .failure(Failure(description: "br: the data ends early (\(output.count) bytes decoded)"))
                    default:
                        let code = BrotliDecoderGetErrorCode(state)
                        let text = BrotliDecoderErrorString(code).map { String(cString: $0) } ?? "error"
                        return .failure(Failure(description: "br: \(text) after \(output.count) decoded bytes"))
                    }
                }
            }
        }
        switch outcome {
        case .success(let hitLimit): return (output, hitLimit ? .hitLimit : .complete)
        case .failure(let failure): return try failed(failure.description, output: output, cut: cut, gzipOrDeflate: false)
        }
    }
}
