import CObservedFile
import CPcap
import TrafficModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A libpcap handle: a pcap or pcapng file, or a live interface (docs/design.md, "Capture import and live capture").
///
/// Packets are handed out one at a time as pointers into libpcap's own buffer, valid only
/// during the callback, so reading never copies a packet.
public final class PcapSource {
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// libpcap's counters for a live capture.
    public struct Statistics: Sendable {
        public var received: UInt32
        /// Dropped by the kernel because the buffer was full.
        public var dropped: UInt32
        /// Dropped by the interface or driver.
        public var interfaceDropped: UInt32
    }

    let handle: OpaquePointer
    public let linkType: Int32
    public let isLive: Bool
    var dumper: OpaquePointer?

    init(handle: OpaquePointer, isLive: Bool) {
        self.handle = handle
        self.linkType = pcap_datalink(handle)
        self.isLive = isLive
    }

    deinit {
        if let dumper {
            pcap_dump_flush(dumper)
            pcap_dump_close(dumper)
        }
        pcap_close(handle)
        readBuffer?.deallocate()
    }

    /// Opens a pcap or pcapng file; libpcap tells the format by its magic number.
    ///
    /// libpcap reads it through a stream that counts what it has read (`bytesRead`) and
    /// takes no stdio lock on each `fread`; the file's SHA-256 is taken apart from it, block
    /// by block on whichever thread is free (`hashNextBlock`), from the page cache.
    ///
    /// The stream has a stdio buffer of `readBuffer` bytes: libpcap reads each record with
    /// `fread`, and through the default 4 KB buffer a 159 MB capture took 22,000 `read`
    /// calls; through 64 KB, 2,500. It stays small enough for a core's L2 cache beside what
    /// the parser works on.
    public static func open(file path: String) throws(Failure) -> PcapSource {
        var errbuf = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE) + 1)
        #if canImport(Glibc)
            let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        #else
            let fd = Darwin.open(path, O_RDONLY | O_CLOEXEC)
        #endif
        guard fd >= 0 else {
            throw Failure(description: "\(path): \(String(cString: strerror(errno)))")
        }
        let digest = FileDigest(fd: fd)
        let observe: h5replay_observer = { context, _, count in
            Unmanaged<FileDigest>.fromOpaque(context!).takeUnretainedValue().observed += count
        }
        guard let file = h5replay_fdopen_observed(fd, Unmanaged.passUnretained(digest).toOpaque(), observe) else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw Failure(description: "\(path): \(reason)")
        }
        // glibc takes a size only with the buffer itself; it must outlive the file, which
        // libpcap closes with the handle (`deinit`). A file it refuses stays ours to close.
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: readBuffer)
        setvbuf(file, buffer, _IOFBF, readBuffer)
        guard let handle = pcap_fopen_offline_with_tstamp_precision(file, UInt32(PCAP_TSTAMP_PRECISION_MICRO), &errbuf) else {
            fclose(file)
            buffer.deallocate()
            throw Failure(description: "\(path): \(Self.string(errbuf))")
        }
        let source = PcapSource(handle: handle, isLive: false)
        source.readBuffer = buffer
        source.digest = digest
        return source
    }

    static let readBuffer = 1 << 16
    /// The file's stdio buffer, freed after the handle closes the file.
    private var readBuffer: UnsafeMutablePointer<CChar>?
    /// A file's SHA-256 and how far libpcap has read it; nil for a live capture. It
    /// outlives the stream that counts for it: the handle closes the stream in `deinit`.
    private var digest: FileDigest?

    /// The file's hash, taken block by block by whichever thread has nothing else to do,
    /// at its own offset in the file: `observed` counts what libpcap has read (on the
    /// reading thread), `hashed` what has been hashed. One thread at a time hashes.
    final class FileDigest {
        let fd: Int32
        var observed = 0
        var hashed = 0
        var hasher = StreamingSHA256()
        var atEnd = false
        var failed = false
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 18, alignment: 64)
        init(fd: Int32) { self.fd = fd }
        deinit { block.deallocate() }

        func hashNext() -> Bool {
            guard !atEnd, !failed else { return false }
            let n = pread(fd, block.baseAddress, block.count, off_t(hashed))
            if n > 0 {
                hasher.update(UnsafeRawBufferPointer(rebasing: block[..<n]))
                hashed += n
            } else if n == 0 {
                atEnd = true
            } else if errno != EINTR {
                failed = true
            }
            return !atEnd && !failed
        }
    }

    /// The bytes libpcap has read from the file so far (the reading thread's to ask).
    public var bytesRead: Int { digest?.observed ?? 0 }

    /// Hashes the file's next block; false once the whole file is hashed (or could not be
    /// read). One thread at a time, any thread.
    public func hashNextBlock() -> (more: Bool, hashed: Int) {
        guard let digest else { return (false, 0) }
        let more = digest.hashNext()
        return (more, digest.hashed)
    }

    /// The SHA-256 of the whole file, once packets are no longer read: what is left of it
    /// is hashed first, past where libpcap stopped too (a corrupt record, a truncated
    /// one). Nil for a live capture, or when the file could not be read to its end.
    public func finishDigest() -> String? {
        guard let digest else { return nil }
        while digest.hashNext() {}
        return digest.failed ? nil : digest.hasher.finalizeHex()
    }

    /// Opens a live capture: snaplen 262144, immediate mode, a 100 ms read timeout so that
    /// the loop can notice Ctrl-C and the duration, and an optional BPF filter.
    public static func live(interface: String, filter: String?, promiscuous: Bool = false, bufferBytes: Int32 = 32 << 20) throws(Failure) -> PcapSource {
        var errbuf = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE) + 1)
        guard let handle = pcap_create(interface, &errbuf) else {
            throw Failure(description: "interface \(interface): \(Self.string(errbuf))")
        }
        pcap_set_snaplen(handle, 262_144)
        pcap_set_promisc(handle, promiscuous ? 1 : 0)
        pcap_set_timeout(handle, 100)
        pcap_set_immediate_mode(handle, 1)
        pcap_set_buffer_size(handle, bufferBytes)
        let status = pcap_activate(handle)
        if status < 0 {
            let message = String(cString: pcap_geterr(handle))
            pcap_close(handle)
            let hint = status == PCAP_ERROR_PERM_DENIED ? " (capturing needs root or CAP_NET_RAW and CAP_NET_ADMIN)" : ""
            throw Failure(description: "interface \(interface): \(message.isEmpty ? String(cString: pcap_statustostr(status)) : message)\(hint)")
        }
        // Non-blocking reads with a poll of at most 100 ms: a blocked read would not see
        // Ctrl-C or the end of the duration while the interface is quiet.
        guard pcap_setnonblock(handle, 1, &errbuf) == 0 else {
            pcap_close(handle)
            throw Failure(description: "interface \(interface): \(Self.string(errbuf))")
        }
        let source = PcapSource(handle: handle, isLive: true)
        if let filter, !filter.isEmpty { try source.setFilter(filter) }
        return source
    }

    public func setFilter(_ expression: String) throws(Failure) {
        var program = bpf_program()
        guard pcap_compile(handle, &program, expression, 1, PCAP_NETMASK_UNKNOWN) == 0 else {
            throw Failure(description: "filter \"\(expression)\": \(String(cString: pcap_geterr(handle)))")
        }
        defer { pcap_freecode(&program) }
        guard pcap_setfilter(handle, &program) == 0 else {
            throw Failure(description: "filter \"\(expression)\": \(String(cString: pcap_geterr(handle)))")
        }
    }

    /// Also writes every packet read to a pcap file.
    public func writeCopy(to path: String) throws(Failure) {
        guard let dumper = pcap_dump_open(handle, path) else {
            throw Failure(description: "\(path): \(String(cString: pcap_geterr(handle)))")
        }
        self.dumper = dumper
    }

    /// Finishes the copy `writeCopy` began: flushed and closed, ready to be read.
    public func closeCopy() {
        guard let dumper else { return }
        pcap_dump_flush(dumper)
        pcap_dump_close(dumper)
        self.dumper = nil
    }

    public enum Next {
        case packet
        /// A live read timed out with nothing to read.
        case timeout
        case end
    }

    /// Reads one packet and hands it to `body` with its capture time in seconds, its
    /// captured bytes, and its length on the wire. A live read with nothing to read waits
    /// up to 100 ms for a packet, or with `wait: false` returns `.timeout` at once.
    @inline(__always)
    public func next(wait: Bool = true, _ body: (Double, UnsafeRawBufferPointer, Int) -> Void) throws(Failure) -> Next {
        var header: UnsafeMutablePointer<pcap_pkthdr>?
        var data: UnsafePointer<UInt8>?
        let status = pcap_next_ex(handle, &header, &data)
        switch status {
        case 1:
            guard let header, let data else { return .timeout }
            let h = header.pointee
            if let dumper { pcap_dump(UnsafeMutableRawPointer(dumper).assumingMemoryBound(to: UInt8.self), header, data) }
            let time = Double(h.ts.tv_sec) + Double(h.ts.tv_usec) / 1_000_000
            body(time, UnsafeRawBufferPointer(start: data, count: Int(h.caplen)), Int(h.len))
            return .packet
        case 0:
            if isLive && wait {
                var fds = pollfd(fd: pcap_get_selectable_fd(handle), events: Int16(POLLIN), revents: 0)
                _ = poll(&fds, 1, 100)
            }
            return .timeout
        case PCAP_ERROR_BREAK: return .end
        case PCAP_ERROR:
            throw Failure(description: String(cString: pcap_geterr(handle)))
        default: return .end
        }
    }

    /// Makes a blocked `next` return; safe to call from a signal handler's aftermath.
    public func breakLoop() { pcap_breakloop(handle) }

    public func statistics() -> Statistics? {
        var stats = pcap_stat()
        guard pcap_stats(handle, &stats) == 0 else { return nil }
        return Statistics(received: stats.ps_recv, dropped: stats.ps_drop, interfaceDropped: stats.ps_ifdrop)
    }

    public func flush() {
        if let dumper { pcap_dump_flush(dumper) }
    }

    /// libpcap's name for the link type, e.g. `EN10MB`.
    public var linkTypeName: String {
        pcap_datalink_val_to_name(linkType).map { String(cString: $0) } ?? "\(linkType)"
    }

    static func string(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public static var libraryVersion: String { String(cString: pcap_lib_version()) }
}
