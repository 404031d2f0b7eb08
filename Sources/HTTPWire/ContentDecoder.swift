import CBrotli
import CDeflate
import CZlib
import Synchronization

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
    /// Whole bodies go to libdeflate first (`wholeInflate`); false sends every body through
    /// zlib's stream, which the tests compare it with.
    var wholeBodies = true

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

    /// A Content-Encoding value read once, item by item in place: its codings and what a
    /// tolerant reading notices about the list.
    struct CodingList {
        /// Lower-cased, in the order applied, without `identity` and empty items.
        var codings: [String] = []
        var items = 0
        var emptyItem = false
        /// An item not in lower case (`GZIP`).
        var caseDiffers = false
        var identity = false

        init(_ header: String) {
            HTTPParser.forEachListItem(header) { item in
                items += 1
                guard !item.isEmpty else { emptyItem = true; return }
                var name = String(decoding: item, as: UTF8.self)
                // Lower-cased as `String` does (any script), when anything may change.
                if item.contains(where: { $0 >= 0x80 || ($0 >= 0x41 && $0 <= 0x5A) }) {
                    let lower = name.lowercased()
                    if lower != name { caseDiffers = true }
                    name = lower
                }
                if name == "identity" { identity = true } else { codings.append(name) }
            }
        }
    }

    /// Decodes `body`; throws when a coding is unknown or the data is corrupt.
    public func decode(_ body: [UInt8], contentEncoding: String) throws(Failure) -> Decoded {
        try decode(body, CodingList(contentEncoding))
    }

    /// Decodes `body` when `contentEncoding` names a coding other than `identity`; nil
    /// when it names none, the value read once either way.
    public func decodeIfEncoded(_ body: [UInt8], contentEncoding: String) throws(Failure) -> Decoded? {
        let list = CodingList(contentEncoding)
        return list.codings.isEmpty ? nil : try decode(body, list)
    }

    private func decode(_ body: [UInt8], _ list: CodingList) throws(Failure) -> Decoded {
        let codings = list.codings
        var oddities: [FramingOddity] = []
        if tolerant {
            if list.items > 1, list.emptyItem { oddities.append(.codingEmptyItem) }
            if list.caseDiffers { oddities.append(.codingCase) }
            if list.identity, !codings.isEmpty {
                return Decoded(bytes: body, codings: [], limited: nil, oddities: oddities + [.codingIdentityListed])
            }
            if codings.contains("zstd") { return Decoded(bytes: body, codings: [], limited: nil, oddities: oddities + [.codingZstd]) }
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
        if wholeBodies, let whole = wholeInflate(input, windowBits: windowBits, limit: limit) { return whole }
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

    /// The body decoded by libdeflate in one call, or nil to leave it to zlib's stream.
    ///
    /// libdeflate decodes a whole buffer in one call, and its checksums (gzip's CRC-32,
    /// zlib's Adler-32) use the CPU's vector units. On the bench's capture zlib's stream was
    /// a fifth of the exchange builder's time, 0.24 s of CPU; libdeflate takes 0.18 s. It
    /// answers only where its answer is zlib's: a stream that decodes cleanly within the
    /// limit, behind a header zlib reads the same way. So a gzip header with a header CRC (zlib checks it,
    /// libdeflate skips it) and a zlib header naming a window under 32 KiB (zlib refuses
    /// distances past it) go to zlib, as does every failure, a body past the limit, and in
    /// strict decoding a second gzip member: zlib's stream says what each of those yields.
    func wholeInflate(_ input: [UInt8], windowBits: Int32, limit: Int) -> (bytes: [UInt8], end: StageEnd)? {
        let gzip = windowBits > 15
        if gzip {
            guard input.count >= 18, input[3] & 0x02 == 0 else { return nil }
        } else if windowBits > 0 {
            guard input.first == 0x78 else { return nil }
        }
        guard let decompressor = Self.decompressors.take() else { return nil }
        defer { Self.decompressors.give(decompressor) }
        // gzip's trailer gives the size (modulo 4 GiB) when the member is the whole body;
        // otherwise a guess, grown fourfold while too small.
        var capacity = input.count * 8
        if gzip {
            capacity = input.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: $0.count - 4, as: UInt32.self))) }
        }
        capacity = min(limit, max(capacity, 256))
        while true {
            var result = LIBDEFLATE_BAD_DATA
            var consumed = 0
            let output = [UInt8](unsafeUninitializedCapacity: capacity) { out, count in
                var produced = 0
                result = input.withUnsafeBytes { source in
                    switch windowBits {
                    case ...0: libdeflate_deflate_decompress_ex(decompressor, source.baseAddress, source.count, out.baseAddress, out.count, &consumed, &produced)
                    case 16...: libdeflate_gzip_decompress_ex(decompressor, source.baseAddress, source.count, out.baseAddress, out.count, &consumed, &produced)
                    default: libdeflate_zlib_decompress_ex(decompressor, source.baseAddress, source.count, out.baseAddress, out.count, &consumed, &produced)
                    }
                }
                count = result == LIBDEFLATE_SUCCESS ? produced : 0
            }
            switch result {
            case LIBDEFLATE_SUCCESS:
                // A guess far too large is not kept as the body's capacity.
                let bytes = capacity - output.count > 1 << 20 ? output.withUnsafeBufferPointer { Array($0) } : output
                guard consumed < input.count else { return (bytes, .complete) }
                // Bytes after the end: tolerant decoding drops them, as browsers do; strict
                // decoding reads them as further gzip members (zlib does that) and ignores
                // them after a zlib or raw stream, as zlib's stream does.
                if tolerant { return (bytes, .tolerated(.codingTrailing)) }
                return gzip ? nil : (bytes, .complete)
            case LIBDEFLATE_INSUFFICIENT_SPACE:
                guard capacity < limit else { return nil }
                capacity = capacity > limit / 4 ? limit : capacity * 4
            default:
                return nil
            }
        }
    }

    /// libdeflate's decompressors, kept for the next body: a new one is cleared (11 KB) and
    /// builds the fixed Huffman tables again, which cost a small body more than decoding it.
    static let decompressors = DecompressorPool()

    final class DecompressorPool: Sendable {
        /// Their addresses: a pointer is not `Sendable`, its bits are.
        private let idle = Mutex<[UInt]>([])

        func take() -> OpaquePointer? { idle.withLock { $0.popLast() }.flatMap { OpaquePointer(bitPattern: $0) } ?? libdeflate_alloc_decompressor() }

        /// Keeps a few, one per thread that decodes at once; frees the rest.
        func give(_ decompressor: OpaquePointer) {
            let kept = idle.withLock { idle in
                guard idle.count < 8 else { return false }
                idle.append(UInt(bitPattern: decompressor))
                return true
            }
            if !kept { libdeflate_free_decompressor(decompressor) }
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
