import CZlib
import Foundation

/// A recording file compressed whole: a HAR mitmproxy saved as `.zhar` (zlib), or a
/// `.har.gz` or `.pcap.gz` (gzip) as people attach them to bug reports and as Wireshark
/// opens them. Inflated as a stream, a block at a time, so memory does not grow with the
/// file.
public enum CompressedFile {
    public enum Wrapper: String, Sendable {
        /// RFC 1952; several members one after another are one file, as `gzip -d` reads them.
        case gzip
        /// RFC 1950, what Python's `zlib.compress` writes (mitmproxy's `.zhar`).
        case zlib
    }

    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// The wrapper `head` (a file's first bytes) starts with, if any: gzip's magic number
    /// with its deflate method, or a zlib header (deflate, a window zlib allows, the check
    /// bits right, no preset dictionary). JSON, pcap and pcapng start with none of these.
    public static func wrapper(of head: Data) -> Wrapper? {
        guard head.count >= 2 else { return nil }
        let b0 = head[head.startIndex], b1 = head[head.startIndex + 1]
        if b0 == 0x1F, b1 == 0x8B, head.count >= 3, head[head.startIndex + 2] == 8 { return .gzip }
        if b0 & 0x0F == 8, b0 >> 4 <= 7, (UInt16(b0) << 8 | UInt16(b1)) % 31 == 0, b1 & 0x20 == 0 { return .zlib }
        return nil
    }

    /// The first `count` bytes (or fewer) that `compressed`, the start of a compressed
    /// file, inflates to: enough to tell what the file holds without inflating it all.
    /// `problem` says why there are fewer: the data is corrupt there, or ends (`whole`: the
    /// file is no longer than `compressed`).
    public static func head(of compressed: Data, wrapper: Wrapper, count: Int, whole: Bool) -> (bytes: Data, problem: String?) {
        var stream = z_stream()
        guard count > 0, !compressed.isEmpty, h5r_inflate_init2(&stream, wrapper == .gzip ? 31 : 15) == Z_OK else { return (Data(), nil) }
        defer { inflateEnd(&stream) }
        var out = [UInt8](repeating: 0, count: count)
        var problem: String?
        let produced = compressed.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Int in
            out.withUnsafeMutableBufferPointer { buffer in
                stream.next_in = UnsafeMutablePointer(mutating: raw.baseAddress!.assumingMemoryBound(to: UInt8.self))
                stream.avail_in = UInt32(raw.count)
                stream.next_out = buffer.baseAddress
                stream.avail_out = UInt32(count)
                while stream.avail_out > 0 {
                    let status = CZlib.inflate(&stream, Z_SYNC_FLUSH)
                    if status == Z_OK { continue }
                    if status == Z_BUF_ERROR, whole {
                        problem = Inflated(bytes: count - Int(stream.avail_out), compressedBytes: raw.count, endedEarly: true).endedEarlyText(wrapper)
                    } else if status != Z_STREAM_END, status != Z_BUF_ERROR {
                        let message = stream.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                        problem = corruptText(wrapper, at: raw.count - Int(stream.avail_in), message)
                    }
                    break
                }
                return count - Int(stream.avail_out)
            }
        }
        return (Data(out[..<produced]), problem)
    }

    /// The words for a stream zlib refused at compressed byte `at`.
    static func corruptText(_ wrapper: Wrapper, at: Int, _ message: String) -> String {
        "the \(wrapper.rawValue) data is corrupt at compressed byte \(at): \(message)"
    }

    /// What an inflation wrote.
    public struct Inflated: Sendable, Equatable {
        public var bytes: Int
        public var compressedBytes: Int
        /// The compressed data stopped before its stream's end (a download cut short):
        /// `bytes` is what inflated before the cut. Whether that is of use is the
        /// reader's call (a capture's records before the cut are; half a JSON is not).
        public var endedEarly: Bool

        /// The words for a stream that ended early.
        public func endedEarlyText(_ wrapper: Wrapper) -> String {
            "the \(wrapper.rawValue) data ends early, after \(compressedBytes) compressed bytes (\(bytes) inflated)"
        }
    }

    /// Inflates the file at `input` into `output` (created, or truncated), refusing to
    /// write more than `limit` bytes. Errors name the compressed byte where the stream
    /// went wrong; `output` is left for the caller to remove.
    @discardableResult
    public static func inflate(_ input: String, wrapper: Wrapper, into output: String, limit: Int) throws(Failure) -> Inflated {
        do {
            return try inflating(input, wrapper: wrapper, into: output, limit: limit)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(description: "\(error)")
        }
    }

    private static func inflating(_ input: String, wrapper: Wrapper, into output: String, limit: Int) throws -> Inflated {
        guard let source = FileHandle(forReadingAtPath: input) else { throw Failure(description: "cannot open the file to inflate it") }
        defer { try? source.close() }
        guard FileManager.default.createFile(atPath: output, contents: nil, attributes: [.posixPermissions: 0o600]),
            let sink = FileHandle(forWritingAtPath: output)
        else { throw Failure(description: "cannot create a file to inflate it into at \(output)") }
        defer { try? sink.close() }

        var stream = z_stream()
        // 15 + 16: gzip; 15: zlib. Each checks its own trailer (CRC-32, Adler-32).
        guard h5r_inflate_init2(&stream, wrapper == .gzip ? 31 : 15) == Z_OK else { throw Failure(description: "zlib would not start") }
        defer { inflateEnd(&stream) }
        let out = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1 << 20)
        defer { out.deallocate() }
        var written = 0
        var consumed = 0
        var ended = false
        var padded = false
        while true {
            let block: Data
            do {
                block = try source.read(upToCount: 1 << 20) ?? Data()
            } catch {
                throw Failure(description: "cannot read the file at compressed byte \(consumed): \((error as NSError).localizedDescription)")
            }
            if block.isEmpty { break }
            try block.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws in
                var offset = 0
                // What follows a complete stream: another gzip member, or nothing. A zlib
                // stream is one; bytes after it are not part of the recording.
                while offset < raw.count {
                    if ended {
                        // Zero bytes after the end (a tape's or a transfer's padding) are
                        // nothing, as `gzip -d` takes them.
                        if raw[offset] == 0 || padded {
                            guard let other = raw[offset...].firstIndex(where: { $0 != 0 }) else {
                                padded = true
                                offset = raw.count
                                continue
                            }
                            throw Failure(description: "bytes follow the end of the \(wrapper.rawValue) stream at compressed byte \(consumed + other)")
                        }
                        guard wrapper == .gzip, inflateReset(&stream) == Z_OK else {
                            throw Failure(description: "\(raw.count - offset) bytes follow the end of the \(wrapper.rawValue) stream at compressed byte \(consumed + offset)")
                        }
                        ended = false
                    }
                    stream.next_in = UnsafeMutablePointer(mutating: raw.baseAddress!.assumingMemoryBound(to: UInt8.self) + offset)
                    stream.avail_in = UInt32(raw.count - offset)
                    repeat {
                        stream.next_out = out.baseAddress
                        stream.avail_out = UInt32(out.count)
                        let status = CZlib.inflate(&stream, Z_NO_FLUSH)
                        let produced = out.count - Int(stream.avail_out)
                        if produced > 0 {
                            guard written + produced <= limit else {
                                throw Failure(description: "it inflates to more than \(limit) bytes")
                            }
                            do {
                                try sink.write(contentsOf: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(out)[..<produced]))
                            } catch {
                                throw Failure(description: "cannot write the inflated file \(output): \((error as NSError).localizedDescription)")
                            }
                            written += produced
                        }
                        switch status {
                        case Z_STREAM_END:
                            ended = true
                        case Z_OK, Z_BUF_ERROR:
                            break
                        default:
                            let at = consumed + raw.count - Int(stream.avail_in)
                            let message = stream.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                            throw Failure(description: corruptText(wrapper, at: at, message))
                        }
                    } while !ended && (stream.avail_in > 0 || stream.avail_out == 0)
                    offset = raw.count - Int(stream.avail_in)
                }
            }
            consumed += block.count
        }
        return Inflated(bytes: written, compressedBytes: consumed, endedEarly: !ended)
    }
}
