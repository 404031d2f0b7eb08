import Dispatch
import Foundation
import HTTPTypes
import HTTPWire
import TrafficModel

/// Reads HAR 1.2 as Safari, Chrome, Firefox, Charles, Proxyman, mitmproxy, Playwright and
/// Polly.js write it, into a `Recording`.
///
/// Exporter quirks handled here (docs/design.md, "HAR import"):
/// - a UTF-8 byte-order mark before the JSON (Windows tools);
/// - headers as `{"name", "value"}` objects or as `[name, value]` arrays;
/// - `content.encoding: "base64"` response bodies, and `postData` bodies marked
///   `"_encoding": "base64"` (h5replay's own export of binary request bodies);
/// - `postData.params` without `postData.text`: the body is rebuilt from the params;
/// - `_resourceType` (Chrome, Edge, mitmproxy) feeding the initiator inference;
/// - `redirectURL` when the Location header is missing;
/// - sizes and timings that are missing or -1;
/// - `startedDateTime` in any ISO 8601 form;
/// - response bodies left out (Firefox drops image bodies): kept empty, with a diagnostic;
/// - an empty `httpVersion` (Safari).
public struct HARImporter: Sendable {
    /// Schemes of the browser itself, never a page's traffic.
    static let internalSchemes: Set<String> = ["file", "chrome", "chrome-extension", "moz-extension", "safari-web-extension", "devtools", "edge", "about"]

    /// Largest HAR file accepted, in bytes (limit `har-bytes`).
    public var maxFileBytes: Int

    public static let defaultMaxFileBytes = 1 << 30

    /// Starts `hash`, the hash of a file of `byteCount` bytes, on another core while the
    /// file's entries are read, or does it here and now for a file under a megabyte: its
    /// hash takes a few milliseconds at most, less than waking a thread for it can on a busy
    /// machine, and an import that starts no thread leaves the heap as it found it, which
    /// the fuzzer's leak check counts on.
    public static func hash(byteCount: Int, _ hash: @escaping @Sendable () -> String) -> Beside<String> {
        byteCount >= 1 << 20 ? Beside(hash) : Beside(done: hash())
    }

    public init(maxFileBytes: Int = HARImporter.defaultMaxFileBytes) {
        self.maxFileBytes = maxFileBytes
    }

    /// Whether `data` looks like a HAR (a JSON object), for content detection.
    public static func looksLikeHAR(_ data: Data) -> Bool {
        for byte in data.prefix(64) {
            switch byte {
            case 0xEF, 0xBB, 0xBF, 0x20, 0x09, 0x0A, 0x0D: continue
            case UInt8(ascii: "{"): return true
            default: return false
            }
        }
        return false
    }

    /// Parses a HAR file's bytes into one recording, whatever sessions it holds. `file`
    /// names the file in errors.
    public func recording(from data: Data, file: String, name: String) throws -> Recording {
        try read(data, file: file, name: name, splittingSessions: false)[0]
    }

    /// Parses a HAR file's bytes into one recording per browser session: a page-test
    /// tool's runs, each in a fresh browser, are recordings of their own, named
    /// `NAME-run-N` (`BrowserSessions`); any other file is one recording named `name`.
    public func recordings(from data: Data, file: String, name: String) throws -> [Recording] {
        try read(data, file: file, name: name, splittingSessions: true)
    }

    /// `walk` with every entry built as it is first read, collected: each session's
    /// exchanges numbered and classified as they come in time order, into one recording
    /// (or one per browser session when `splittingSessions`), with the diagnostics a
    /// streamed import stores, in its order. A streamed import and a whole read so give the
    /// same exchanges and diagnostics by construction.
    func read(_ data: Data, file: String, name: String, splittingSessions: Bool) throws -> [Recording] {
        guard data.count <= maxFileBytes else {
            throw HARImportError(file: file, entryIndex: nil, field: "(file)", problem: "the file is \(data.count) bytes, over the HAR size limit of \(maxFileBytes) (raise it with --max-har-bytes)")
        }
        // The file's hash on another core meanwhile; a small file's here, where handing it
        // over would cost more than it saves.
        let hashing = Self.hash(byteCount: data.count) { data.sha256Hex }
        defer { hashing.cancel() }
        var parts: [Collected] = []
        let walked = try data.withUnsafeBytes { raw in
            // Nothing to let go: the caller holds the bytes.
            try walk(raw.bindMemory(to: UInt8.self), file: file, buildingAsRead: true, splittingSessions: splittingSessions, release: { _ in }) { exchange, traits, diagnostics, session in
                while parts.count <= session { parts.append(Collected()) }
                parts[session].add(&exchange, traits: traits, diagnostics: diagnostics)
            }
        }
        let sha256 = hashing.join()
        // A tool's recording says so itself (`non-browser-client`), not as native requests.
        let byTool = walked.notes.contains { $0.code == DiagnosticCode.nonBrowserClient.rawValue }
        let sessions = walked.sessions
        while parts.count < sessions.labels.count { parts.append(Collected()) }
        return sessions.labels.indices.map { session in
            let classified = parts[session].classifier.diagnostics.filter { !byTool || !Self.saysNative($0) }
            let leading = (sessions.isSplit ? [sessions.note(session: session)] : []) + walked.notes + classified + walked.unplaced[session]
            return Recording(name: sessions.recordingName(name, session: session), sourceFormat: "har", sourcePath: file, sourceSHA256: sha256, exchanges: parts[session].take(), diagnostics: leading + parts[session].diagnostics)
        }
    }

    /// Whether a classification note is NC1's word on native requests, which a tool's
    /// recording replaces with its own (`non-browser-client`).
    public static func saysNative(_ diagnostic: Diagnostic) -> Bool {
        diagnostic.code == DiagnosticCode.noPageRequests.rawValue || diagnostic.code == DiagnosticCode.nativeRequests.rawValue
    }

    /// One recording's exchanges as `walk` hands them on: numbered in that order and
    /// classified as they come, with their diagnostics in sequence order.
    struct Collected {
        var exchanges: [Exchange] = []
        var classifier = ExchangeClassifier.Stream()
        var diagnostics: [Diagnostic] = []

        mutating func add(_ exchange: inout Exchange, traits: ExchangeClassifier.Traits?, diagnostics: [Diagnostic]) {
            exchange.sequence = exchanges.count
            // Revisions are of exchanges before this one.
            for revision in classifier.add(&exchange, traits: traits) { revision.apply(to: &exchanges) }
            for var d in diagnostics {
                d.sequence = exchange.sequence
                self.diagnostics.append(d)
            }
            exchanges.append(exchange)
        }

        /// The exchanges, handed over rather than copied.
        mutating func take() -> [Exchange] {
            var taken: [Exchange] = []
            swap(&taken, &exchanges)
            return taken
        }
    }

    /// Streams the exchanges of a HAR held in `bytes` to `handle` in time order (stable for
    /// equal times), each with its traits (worked out on the workers, for the classifier)
    /// and its diagnostics, holding none of them: what the reader holds
    /// at once is one batch of entries, and 32 bytes per entry (`walk`, reading each entry
    /// twice). `release` is told the byte ranges it may drop from memory (what is dropped
    /// is read again from the file if needed): behind the first pass as it goes, and
    /// everything after each batch. The exchanges come numbered by entry; the caller
    /// numbers them in the order given. Each exchange comes with the index of its browser
    /// session (`BrowserSessions`: a page-test tool's runs); the caller keeps one
    /// recording per session. Returns the sessions and each one's diagnostics of no
    /// exchange (entries skipped), in file order.
    public func stream(_ raw: UnsafeBufferPointer<UInt8>, file: String, release: (Range<Int>) -> Void, _ handle: (inout Exchange, ExchangeClassifier.Traits?, [Diagnostic], Int) throws -> Void) throws -> Streamed {
        try walk(raw, file: file, buildingAsRead: false, splittingSessions: true, release: release, handle)
    }

    /// The one loop over a HAR's entries, which `stream` and `read` share.
    ///
    /// A first pass reads each entry's time and byte range and checks the document's
    /// shape: what orders the entries, splits the sessions and settles the times needs
    /// every entry read first. A second hands the exchanges on in time order, each settled
    /// alike (`FileFacts.settle`). How an entry is built is the one difference:
    /// `buildingAsRead` (a whole read, whose exchanges stay in memory anyway) builds each
    /// on every core as the first pass reads it, a batch at a time, and keeps what it
    /// gave for the second pass, so the entry is read once; otherwise (a streamed import,
    /// which holds no exchange) the second pass reads the entries again in time order, a
    /// batch at a time, and builds them then.
    func walk(_ raw: UnsafeBufferPointer<UInt8>, file: String, buildingAsRead: Bool, splittingSessions: Bool, release: (Range<Int>) -> Void, _ handle: (inout Exchange, ExchangeClassifier.Traits?, [Diagnostic], Int) throws -> Void) throws -> Streamed {
        let bytes = Self.skippingByteOrderMark(raw)
        // Made for the pass that builds, so that a streamed import's first pass holds no batch.
        let building = buildingAsRead ? EntryBatch(importer: self, file: file) : nil
        // Never leave the workers reading bytes or tokens that are about to go.
        defer { building?.wait() }
        var first = FirstPass(bytes: bytes, offset: raw.count - bytes.count, file: file)
        let facts = try first.run(building: building, splittingSessions: splittingSessions, release: release)
        let order = first.ranges.indices.sorted { first.clock.precedes($0, $1) }
        var unplaced: [(Int, Diagnostic)] = []
        func handOn(_ index: Int, _ built: inout EntryBatch.Built) throws {
            let diagnostics = built.diagnostics
            guard var exchange = built.exchange.take() else {
                // A skipped entry's notes are of no exchange, whatever entry they named.
                unplaced += diagnostics.map { var d = $0; d.sequence = nil; return (index, d) }
                return
            }
            let traits = facts.settle(&exchange, index: index, traits: built.traits)
            unplaced += diagnostics.filter { $0.sequence == nil }.map { (index, $0) }
            try handle(&exchange, traits, diagnostics.filter { $0.sequence != nil }, facts.sessions.sessionOfEntry[index])
        }
        if buildingAsRead {
            for index in order { try handOn(index, &first.built[index]) }
        } else {
            // All of the file after each batch, not each entry's range: a page fault maps
            // neighbouring pages too, entries already released among them, and no later
            // release would cover them.
            let batch = EntryBatch(importer: self, file: file)
            defer { batch.wait() }
            try Self.readAgain(bytes, ranges: first.ranges, in: order, batch: batch, releaseAll: { release(0..<raw.count) }, handOn)
        }
        var perSession = [[Diagnostic]](repeating: [], count: facts.sessions.labels.count)
        for (index, diagnostic) in unplaced.enumerated().sorted(by: { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }).map(\.element) {
            perSession[facts.sessions.sessionOfEntry[index]].append(diagnostic)
        }
        return Streamed(sessions: facts.sessions, notes: facts.notes(durations: first.clock.durations), unplaced: perSession)
    }

    /// The second pass of a streamed import: the entries at `ranges` read again in
    /// `order`, a batch at a time, each batch built on every core while the one before it
    /// is handed on; `releaseAll` lets go of the file's pages after each batch.
    private static func readAgain(_ bytes: UnsafeBufferPointer<UInt8>, ranges: [Range<Int>], in order: [Int], batch: EntryBatch, releaseAll: () -> Void, _ handOn: (Int, inout EntryBatch.Built) throws -> Void) throws {
        var tokens: [JSONTape.Token] = []
        var start = 0
        while start < order.count {
            let slice = order[start..<min(start + EntryBatch.size, order.count)]
            start += slice.count
            for index in slice {
                try JSONReader.value(in: bytes, at: ranges[index].lowerBound, into: &tokens)
                batch.add(index: index, swapping: &tokens)
            }
            // The batch goes to the workers while the one before it is handed on.
            try batch.build(bytes: bytes, handOn)
            releaseAll()
        }
        try batch.finish(bytes: bytes, handOn)
        releaseAll()
    }

    /// The first pass over a HAR's entries: each entry's time (`clock`) and byte range,
    /// and, when it builds them, what each entry gave.
    struct FirstPass {
        let bytes: UnsafeBufferPointer<UInt8>
        /// Where `bytes` start in the file (after a byte-order mark), for `release`.
        let offset: Int
        let context: ImportContext
        var clock = EntryClock()
        var ranges: [Range<Int>] = []
        /// What each entry gave, by entry, when the pass built them.
        var built: [EntryBatch.Built] = []

        init(bytes: UnsafeBufferPointer<UInt8>, offset: Int, file: String) {
            self.bytes = bytes
            self.offset = offset
            context = ImportContext(file: file)
        }

        /// Reads every entry, letting go of the bytes behind it every `releaseStep`. With
        /// `building`, each entry's tokens go to that batch, built on every core while the
        /// next are read, and what each gave is kept in `built`; the tokens are let go a
        /// batch at a time. Returns what holds for the file as a whole.
        mutating func run(building batch: EntryBatch?, splittingSessions: Bool, release: (Range<Int>) -> Void) throws -> FileFacts {
            let (bytes, offset, context) = (self.bytes, self.offset, self.context)
            var clock = EntryClock()
            var ranges: [Range<Int>] = []
            var built: [EntryBatch.Built] = []
            defer { (self.clock, self.ranges, self.built) = (clock, ranges, built) }
            let keep: (Int, inout EntryBatch.Built) -> Void = { index, result in
                // Entries come back in file order; each result is moved, not copied.
                precondition(index == built.count)
                built.append(EntryBatch.Built())
                swap(&built[index], &result)
            }
            var released = 0
            let root: JSONTape
            do {
                var reader = JSONReader(bytes)
                root = try reader.forEachEntry(tapes: { index, tokens, range in
                    tokens.withUnsafeBufferPointer { clock.add(JSONNode(view: JSONView(tokens: $0, bytes: bytes), index: 0, context: context)) }
                    ranges.append(range)
                    if let batch {
                        batch.add(index: index, swapping: &tokens)
                        if batch.isFull { try batch.build(bytes: bytes, keep) }
                    }
                    if range.upperBound - released >= HARImporter.releaseStep {
                        release(offset + released..<offset + range.upperBound)
                        released = range.upperBound
                    }
                })
                try batch?.finish(bytes: bytes, keep)
            } catch let error as JSONSyntaxError {
                throw HARImportError(file: context.file, entryIndex: nil, field: "(file)", problem: "not valid JSON: \(error)")
            }
            release(offset + released..<offset + bytes.count)
            return try FileFacts(root: root, context: context, clock: &clock, splittingSessions: splittingSessions)
        }
    }

    /// What holds for a HAR file as a whole, known once the first pass has read every
    /// entry, and how it settles each entry's exchange.
    struct FileFacts {
        let recorder: Recorder
        let sessions: BrowserSessions
        /// Times in another unit than milliseconds: read again in it.
        let unit: TimeUnit?
        /// A tool that is no browser: every request its own (native).
        let tool: String?
        /// WebPagetest entries whose start was read from its mark, and those given a time
        /// for its placeholder, by entry.
        let corrected: [Int: Double]
        let estimated: [Int: Double]
        /// Each entry's time, as the clock settled it.
        let times: [Double]

        /// Checks the document's shape, and settles the clock's page-test times.
        init(root: JSONTape, context: ImportContext, clock: inout EntryClock, splittingSessions: Bool) throws {
            try HARImporter.checkShape(root, context: context)
            recorder = Recorder(root: root, context: context)
            corrected = clock.settlePageTestStarts()
            estimated = clock.estimatePlaceholders()
            sessions = splittingSessions ? BrowserSessions(root: root, context: context, pagerefs: clock.pagerefs, times: clock.times) : .single(entries: clock.times.count)
            unit = TimeUnit.of(durations: clock.durations, starts: clock.times)
            tool = Recorder.nonBrowserClient(root: root, context: context)
            times = clock.times
        }

        /// An entry's exchange as built, settled with what the file as a whole says; its
        /// traits, pinned native for a tool's recording.
        func settle(_ exchange: inout Exchange, index: Int, traits: ExchangeClassifier.Traits?) -> ExchangeClassifier.Traits? {
            if exchange.startedAt.isNaN || corrected[index] != nil { exchange.startedAt = times[index] }
            if let d = estimated[index] { HARImporter.placeTiming(d, of: &exchange) }
            unit?.apply(to: &exchange)
            recorder.settle(&exchange)
            guard tool != nil else { return traits }
            var pinned = traits ?? ExchangeClassifier.Traits(&exchange)
            pinned.initiator = .native
            return pinned
        }

        /// What the file as a whole was read as, for every recording of it.
        func notes(durations: [Double]) -> [Diagnostic] {
            (unit.map { [$0.note(durations: durations)] } ?? []) + (tool.map { [Recorder.nonBrowserNote($0)] } ?? []) + EntryClock.note(corrected) + EntryClock.placeholderNote(estimated)
        }
    }

    /// An entry with no measured time given `seconds` (`EntryClock.estimatePlaceholders`):
    /// its response's head and end arrive then.
    static func placeTiming(_ seconds: Double, of exchange: inout Exchange) {
        exchange.duration = seconds
        if exchange.response.status != 0 { exchange.responseStart = seconds }
    }

    /// What `stream` tells once every exchange is handed on.
    public struct Streamed {
        /// The browser sessions the exchanges were handed on in.
        public var sessions: BrowserSessions
        /// What the file as a whole was read as (`time-unit-corrected`), for every session.
        public var notes: [Diagnostic]
        /// Per session, the diagnostics of no exchange (entries skipped), in file order.
        public var unplaced: [[Diagnostic]]
    }

    /// Bytes read in the first pass between two `release` calls.
    static let releaseStep = 8 << 20

    static func skippingByteOrderMark(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? UnsafeBufferPointer(rebasing: bytes[3...]) : bytes
    }

    /// The shape of what holds the entries, checked once the file is read.
    static func checkShape(_ root: JSONTape, context: ImportContext) throws {
        try withExtendedLifetime(context) {
            try root.withView { view in
                let top = JSONNode(view: view, index: 0, context: context)
                try top.object()
                let log = top["log"]
                try log.object()
                _ = try log["entries"].array()
            }
        }
    }

    /// The time each entry is ordered by: its startedDateTime, or, when it has none (or one
    /// that is not a date-time, for an entry that is then skipped), the time of the entry
    /// before it in the file.
    struct EntryClock {
        var times: [Double] = []
        /// Each entry's `pageref`, which tells the browser sessions apart (`BrowserSessions`).
        var pagerefs: [String?] = []
        /// Each entry's `time` as written (NaN when missing), whose unit `TimeUnit` checks.
        var durations: [Double] = []
        /// Each entry's WebPagetest mark `_load_start` (milliseconds from its page's start).
        var loadStarts: [Double?] = []
        /// Each WebPagetest entry's host and the milliseconds its marks span (`pageTestMarks`).
        var pageTestSpans: [Int: (host: String, span: Double)] = [:]
        /// Each entry's place in its browser's issue order (`IssueOrder`), which breaks ties
        /// between entries stamped in the same millisecond.
        var issued: [IssueOrder] = []

        /// Whether entry `i` comes before entry `j` in time: by stamp, then by the order the
        /// browser issued them, then by file order.
        func precedes(_ i: Int, _ j: Int) -> Bool { (times[i], issued[i], i) < (times[j], issued[j], j) }

        mutating func add(_ entry: JSONNode) {
            var time = Double.nan
            var pageref: String?
            var duration = Double.nan
            var loadStart: Double?
            if (try? entry.object()) != nil {
                if let text = try? entry["startedDateTime"].optionalString(), let t = ISODate.parse(text) { time = t }
                pageref = (try? entry["pageref"].optionalString()) ?? nil
                duration = ((try? entry["time"].optionalNumber()) ?? nil) ?? .nan
                loadStart = (try? entry["_load_start"].optionalNumber()) ?? nil
                if loadStart != nil, let marks = HARImporter.pageTestMarks(entry),
                   let url = (try? entry["request"]["url"].optionalString()) ?? nil, let host = RequestTarget(url)?.host {
                    pageTestSpans[times.count] = (host, marks.end)
                }
            }
            times.append(time.isNaN ? (times.last ?? 0) : time)
            issued.append(IssueOrder(entry))
            pagerefs.append(pageref)
            durations.append(duration)
            loadStarts.append(loadStart)
        }

        /// WebPagetest writes 0 ms for every mark of an entry it could not time (its
        /// `time`, `_ttfb_end` and `_load_end` all equal `_load_start`), though its response
        /// came over the network, Set-Cookie and all: read so, the response arrives the
        /// moment its request leaves, before requests sent a millisecond later that still
        /// went without its cookies, and those read as a script's doing. Such a response
        /// is taken to arrive after the median time of its host's timed entries (of all
        /// timed entries when its host has none). Seconds, by entry index.
        func estimatePlaceholders() -> [Int: Double] {
            let placeholders = pageTestSpans.filter { $0.value.span == 0 }
            guard !placeholders.isEmpty else { return [:] }
            func median(_ spans: [Double]) -> Double? { spans.isEmpty ? nil : spans.sorted()[spans.count / 2] }
            let timed = pageTestSpans.values.filter { $0.span > 0 }
            let byHost = Dictionary(grouping: timed, by: \.host).mapValues { median($0.map(\.span)) }
            guard let overall = median(timed.map(\.span)) else { return [:] }
            return placeholders.mapValues { ((byHost[$0.host] ?? nil) ?? overall) / 1000 }
        }

        /// The note for entries `estimatePlaceholders` gave a time.
        static func placeholderNote(_ estimated: [Int: Double]) -> [Diagnostic] {
            guard !estimated.isEmpty else { return [] }
            let list = estimated.keys.sorted().prefix(8).map { "entry \($0): \(Int(estimated[$0]! * 1000)) ms" }.joined(separator: ", ")
            return [Diagnostic(.timeEstimated, message: "\(estimated.count) entr\(estimated.count == 1 ? "y carries" : "ies carry") WebPagetest's 0 ms placeholder for a time it did not measure; each response is taken to arrive after the median time of its host's timed entries (\(list)\(estimated.count > 8 ? ", and more" : ""))")]
        }

        /// WebPagetest's stamps checked against its own marks: every entry of a page starts
        /// at the page's start plus its `_load_start`, and the entries agree on that start
        /// but one whose milliseconds WebPagetest rounded up to 1000 and wrote as
        /// "07:52:29.1000" (29.1 s as ISO 8601 reads it, where it meant 30.000): read so, the
        /// entry seems to leave 0.9 s early, before responses whose cookies it went without.
        /// Such an entry's start is read from the page's start and its mark. The new start of
        /// each entry changed, by index.
        mutating func settlePageTestStarts() -> [Int: Double] {
            var byPage: [String: [Int]] = [:]
            for i in times.indices where loadStarts[i] != nil {
                if let page = pagerefs[i] { byPage[page, default: []].append(i) }
            }
            var corrected: [Int: Double] = [:]
            for entries in byPage.values where entries.count >= 3 {
                let offsets = entries.map { times[$0] - loadStarts[$0]! / 1000 }.sorted()
                let pageStart = offsets[offsets.count / 2]
                for i in entries where abs(times[i] - loadStarts[i]! / 1000 - pageStart) > Self.markTolerance {
                    times[i] = pageStart + loadStarts[i]! / 1000
                    corrected[i] = times[i]
                }
            }
            return corrected
        }

        /// How far a stamp may stray from its mark: WebPagetest writes both in whole
        /// milliseconds.
        static let markTolerance = 0.002

        /// The note for entries `settlePageTestStarts` corrected.
        static func note(_ corrected: [Int: Double]) -> [Diagnostic] {
            guard !corrected.isEmpty else { return [] }
            let list = corrected.keys.sorted().prefix(8).map(String.init).joined(separator: ", ")
            return [Diagnostic(.timeCorrected, message: "\(corrected.count) entr\(corrected.count == 1 ? "y's" : "ies'") startedDateTime disagree\(corrected.count == 1 ? "s" : "") with WebPagetest's own mark of when it started (the page's start plus _load_start); read from the mark: entry \(list)\(corrected.count > 8 ? " and more" : "")")]
        }
    }

    // MARK: - Entries

    /// One entry's exchange; nil when the entry is skipped. An entry without
    /// startedDateTime gets NaN, which the caller replaces with the time before it.
    func exchange(from entry: JSONNode, index: Int, diagnostics: inout [Diagnostic]) throws -> Exchange? {
        let sourceFile = entry.context.file
        _ = try entry.object()
        let request = entry["request"]
        _ = try request.object()
        let method = try request["method"].string()
        // RFC 9110 method = token; swift-http-types checks the token grammar.
        guard HTTPRequest.Method(method) != nil else {
            throw request["method"].fail("not an HTTP method: \"\(method.prefix(40))\"")
        }
        let url = try request["url"].string()
        guard let target = RequestTarget(url) else {
            if url.hasPrefix("data:") || url.hasPrefix("blob:") || url.hasPrefix("chrome-extension:") || url.hasPrefix("about:") {
                diagnostics.append(Diagnostic(.entrySkipped, message: "entry \(index): \(url.prefix(40))… is not an HTTP request; skipped"))
                return nil
            }
            throw request["url"].fail("not an absolute URL: \"\(url.prefix(200))\"")
        }
        // A hybrid app's own scheme (capacitor://, app://, tauri://) is served by its
        // WKURLSchemeHandler and kept (A3); a browser's internal schemes are not traffic.
        guard !Self.internalSchemes.contains(target.scheme) else {
            diagnostics.append(Diagnostic(.entrySkipped, message: "entry \(index): scheme \(target.scheme) is not HTTP; skipped"))
            return nil
        }
        let sequence = index
        var startedAt: Double
        let started = entry["startedDateTime"]
        if let text = try started.optionalString() {
            guard let t = ISODate.parse(text) else { throw started.fail("not an ISO 8601 date-time: \"\(text.prefix(60))\"") }
            startedAt = t
        } else {
            startedAt = .nan
            diagnostics.append(Diagnostic(.timeMissing, sequence: sequence, message: "entry \(index) has no startedDateTime; placed after the previous entry"))
        }
        let marks = Self.pageTestMarks(entry)
        let time = try marks?.end ?? max(entry["time"].optionalNumber() ?? 0, 0)

        let requestHeaders = try headers(request["headers"])
        let requestBody = try requestBodyBytes(request["postData"], headers: requestHeaders)
        if requestBody.isEmpty, let declared = Self.declaredRequestBodySize(request, headers: requestHeaders), declared > 0 {
            // Proxyman drops binary request bodies (its issue #1614) and keeps the size.
            diagnostics.append(Diagnostic(.requestBodyMissing, sequence: sequence, message: "entry \(index): the request declares \(declared) body bytes but the HAR holds none; a body lost under a preset cannot be told from this recording"))
        }

        guard let recordedResponse = try recordedResponse(entry["response"], index: index, sourceFile: sourceFile, diagnostics: &diagnostics) else { return nil }
        return Exchange(
            sequence: sequence,
            startedAt: startedAt,
            duration: time / 1000,
            connectionID: try entry["connection"].optionalString(),
            serverAddress: try entry["serverIPAddress"].optionalString(),
            request: RecordedRequest(method: method, url: url, target: target, httpVersion: Self.httpVersion(try request["httpVersion"].optionalString()), headers: requestHeaders, body: requestBody),
            response: recordedResponse,
            resourceType: try entry["_resourceType"].optionalString(),
            evidenceGap: try Self.evidenceGap(entry, status: recordedResponse.status, headers: requestHeaders),
            responseStart: recordedResponse.status == 0 ? nil : marks.map { $0.head / 1000 } ?? Self.responseStart(entry["timings"], time: time),
            webSocketMessages: Self.webSocketMessages(entry["_webSocketMessages"], index: index, diagnostics: &diagnostics)
        )
    }

    /// The entry's response; nil when it is the browser's own redirect and the entry is
    /// skipped. A missing response is one with status 0 and a note.
    func recordedResponse(_ response: JSONNode, index: Int, sourceFile: String, diagnostics: inout [Diagnostic]) throws -> RecordedResponse? {
        let sequence = index
        if response.isMissing {
            diagnostics.append(Diagnostic(.responseMissing, sequence: sequence, message: "entry \(index) has no response"))
            return RecordedResponse(status: 0, bodyMissing: true)
        }
        _ = try response.object()
        let statusNode = response["status"]
        guard var status = try statusNode.optionalNumber(), status >= -1, status < 1000, status == status.rounded() else {
            throw statusNode.fail(statusNode.isMissing ? "missing (a status code is required)" : "not a status code")
        }
        if status == -1 {
            // Some Playwright-based recorders write -1 for "no known response": E1.
            status = 0
            diagnostics.append(Diagnostic(.responseMissing, sequence: sequence, message: "entry \(index): response.status is -1 (no known response)"))
        }
        let responseHeaders = try headers(response["headers"])
        // Chrome's internal redirects (HSTS's upgrade to https, an extension's): a 307
        // with Non-Authoritative-Reason that no server sent; the request it leads to
        // is the load's first on the wire, as in a web view that upgrades alike.
        if status == 307, let reason = responseHeaders.first("Non-Authoritative-Reason") {
            diagnostics.append(Diagnostic(.entrySkipped, message: "entry \(index): the browser's own redirect (307, Non-Authoritative-Reason: \(reason.prefix(40))), never on the wire; skipped"))
            return nil
        }
        let content = response["content"]
        let (body, bodyMissing) = try responseBody(content, headers: responseHeaders, index: index, sourceFile: sourceFile, diagnostics: &diagnostics)
        if bodyMissing, Int(status) != 304, Int(status) != 204, Int(status) != 0 {
            diagnostics.append(Diagnostic(.responseBodyMissing, sequence: sequence, message: "entry \(index): the HAR does not hold the response body; replay serves an empty one"))
        }
        if status == 0, let error = try response["_error"].optionalString(), !error.isEmpty {
            // Chrome's net error for a failed request, or the recording proxy's reason.
            diagnostics.append(Diagnostic(.noResponse, sequence: sequence, message: "entry \(index) got no response: \(error)"))
        } else if let error = try response["_error"].optionalString(), !error.isEmpty {
            // A response that stopped short: Chrome's net error (ERR_CONTENT_LENGTH_MISMATCH),
            // or the recording proxy's reason (the upstream closed mid-body).
            diagnostics.append(Diagnostic(.responseIncomplete, sequence: sequence, message: "entry \(index): the response stopped short: \(error)"))
        }
        if let received = content["_receivedBytes"].number, received > Double(body.count) {
            // The recording proxy kept the first --max-body-bytes of a longer body.
            let note = (try? content["comment"].optionalString()) ?? nil
            diagnostics.append(Diagnostic(.responseBodyLimit, sequence: sequence, message: "entry \(index): \(note ?? "the body is cut: \(Int(received)) bytes were received")"))
        }
        let bodySize = try response["bodySize"].optionalNumber()
        let redirectURL = try response["redirectURL"].optionalString()
        return RecordedResponse(
            status: Int(status),
            statusText: try response["statusText"].optionalString() ?? "",
            httpVersion: Self.httpVersion(try response["httpVersion"].optionalString()),
            headers: responseHeaders,
            body: body,
            // A size is a count of bytes: anything else (1e300, NaN, 2.5) is treated as unknown,
            // never converted (a Double past Int.max would trap; the fuzzer found it).
            encodedLength: bodySize.flatMap { $0 >= 0 && $0 <= 1e15 && $0 == $0.rounded() ? Int($0) : nil },
            bodyMissing: bodyMissing,
            redirectURL: (redirectURL?.isEmpty ?? true) ? nil : redirectURL
        )
    }

    /// The response body as the entry holds it (text, base64, Polly.js's coded bytes, a
    /// Playwright side file), and whether it is missing.
    func responseBody(_ content: JSONNode, headers responseHeaders: HeaderList, index: Int, sourceFile: String, diagnostics: inout [Diagnostic]) throws -> (Data, Bool) {
        let sequence = index
        var body = Data()
        var bodyMissing = false
        if content.isMissing {
            bodyMissing = true
        } else {
            _ = try content.object()
            if let text = try content["text"].optionalString() {
                let encoding = try content["encoding"].optionalString()
                if encoding?.asciiLowercased == "base64" {
                    guard let decoded = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else {
                        throw content["text"].fail("content.encoding is base64 but the text is not valid base64")
                    }
                    body = decoded
                } else if content["_isBinary"].bool == true, let coded = Self.pollyBinary(text) {
                    // Polly.js: the bytes as sent, so the Content-Encoding still applies.
                    body = coded
                    if let coding = responseHeaders.first("Content-Encoding") {
                        do {
                            if let decoded = try ContentDecoder().decodeIfEncoded([UInt8](coded), contentEncoding: coding) { body = Data(decoded.bytes) }
                        } catch {
                            diagnostics.append(Diagnostic(.contentDecodingFailed, sequence: sequence, message: "entry \(index): the Polly.js body did not decode as \(coding) (\(error)); kept as recorded"))
                        }
                    }
                } else {
                    body = Self.encodeText(text, contentType: responseHeaders.first("Content-Type"))
                }
            } else if let side = try content["_file"].optionalString() {
                // Playwright: the body in a file beside the HAR.
                if let bytes = Self.sideFile(side, besideHAR: sourceFile) {
                    body = bytes
                } else {
                    bodyMissing = true
                    diagnostics.append(Diagnostic(.responseBodyMissing, sequence: sequence, message: "entry \(index): the body's side file \(side) is not beside the HAR"))
                }
            } else {
                bodyMissing = (try content["size"].optionalNumber() ?? 0) > 0
            }
        }
        return (body, bodyMissing)
    }

    /// Chrome's `_webSocketMessages` (the recording proxy's journal writes them alike): per
    /// message `type` (send or receive), `time` (seconds since 1970), `opcode` (1 text, 2
    /// binary, base64) and `data`. A message that does not read so is left out, with a note
    /// naming it; the entry is kept.
    static func webSocketMessages(_ node: JSONNode, index: Int, diagnostics: inout [Diagnostic]) -> [WebSocketMessage] {
        guard node.kind == .array else { return [] }
        var messages: [WebSocketMessage] = []
        var skipped: [String] = []
        try? node.forEachOptionalElement { item in
            let position = "entry \(index): _webSocketMessages[\(messages.count + skipped.count)]"
            let type = ((try? item["type"].optionalString()) ?? nil).flatMap(WebSocketMessage.Direction.init(rawValue:))
            let text = (try? item["data"].optionalString()) ?? nil
            guard let type, let time = item["time"].number, time.isFinite, let opcode = item["opcode"].number, opcode == 1 || opcode == 2, let text else {
                skipped.append(position)
                return
            }
            let data = opcode == 2 ? Data(base64Encoded: text, options: .ignoreUnknownCharacters) : Data(text.utf8)
            guard let data else {
                skipped.append(position + " (binary data that is not base64)")
                return
            }
            messages.append(WebSocketMessage(direction: type, time: time, opcode: Int(opcode), data: data))
        }
        if !skipped.isEmpty {
            diagnostics.append(Diagnostic(.entrySkipped, sequence: index, message: "\(skipped.count) WebSocket message(s) not read (a type of send or receive, a numeric time, opcode 1 or 2 and string data are needed): \(skipped.prefix(3).joined(separator: ", "))"))
        }
        return messages
    }

    /// WebPagetest stamps `startedDateTime` when the request left (`_load_start`, in
    /// milliseconds from the page's start), yet its `time` and timings also count the DNS
    /// lookup, connect and TLS done before it (from `_all_start`): read that way, a
    /// response's head seems to arrive up to the connect time late, after heads that
    /// came later, and a Set-Cookie lands in the wrong order. Its own marks say when the
    /// head arrived (`_ttfb_end`) and the body ended (`_load_end`); milliseconds from the
    /// request's start, or nil when the entry has no such marks.
    static func pageTestMarks(_ entry: JSONNode) -> (head: Double, end: Double)? {
        func mark(_ node: JSONNode) -> Double? { (try? node.optionalNumber()) ?? nil }
        guard let start = mark(entry["_load_start"]), let head = mark(entry["_ttfb_end"]), let end = mark(entry["_load_end"]),
              head >= start, end >= head
        else { return nil }
        return (head - start, end - start)
    }

    /// Seconds from the request's start until its response's head arrived: the phases
    /// before the body's download (`blocked`, `dns`, `connect`, `send`, `wait`; -1 where
    /// one does not apply), within the entry's `time`; else `time` less `receive`; nil
    /// when the entry says neither (milliseconds in the file).
    static func responseStart(_ timings: JSONNode, time: Double) -> Double? {
        func phase(_ node: JSONNode) -> Double? { ((try? node.optionalNumber()) ?? nil).map { max($0, 0) } }
        guard time > 0 else { return nil }
        if let wait = phase(timings["wait"]) {
            let before = [timings["blocked"], timings["dns"], timings["connect"], timings["send"]].compactMap(phase).reduce(wait, +)
            return min(before, time) / 1000
        }
        guard let receive = phase(timings["receive"]), receive <= time else { return nil }
        return (time - receive) / 1000
    }

    /// The request body's size as the exporter wrote it (`bodySize`, else Content-Length),
    /// or nil when neither says.
    static func declaredRequestBodySize(_ request: JSONNode, headers: HeaderList) -> Int? {
        if let n = request["bodySize"].number, n >= 0, n <= 1e15, n == n.rounded() { return Int(n) }
        return headers.first("Content-Length").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// Why the entry's request is no evidence of the page's cookies (E1-E3), or the gap an
    /// h5replay export wrote (`_evidenceGap`).
    ///
    /// An entry with no response (status 0) is left without a gap here: whether its headers
    /// are what was sent depends on who recorded it, which the file says in `log.creator`,
    /// read once the entries are (`Recorder.settle`).
    static func evidenceGap(_ entry: JSONNode, status: Int, headers: HeaderList) throws -> EvidenceGap? {
        if let written = try entry["_evidenceGap"].optionalString(), let gap = EvidenceGap(rawValue: written) { return gap }
        if fromCache(entry) { return .fromCache }
        if status == 0 { return nil }
        let request = entry["request"]
        if headers.isEmpty, request["headersSize"].number.map({ Int($0) }) ?? -1 == -1 { return .noRequestHeaders }
        return nil
    }

    /// Who wrote the HAR, as far as an entry without a response is concerned (rule E1).
    enum Recorder {
        /// A browser's developer tools (and anything not known to be otherwise): an entry
        /// with no response holds only the provisional request headers, without the Cookie
        /// header the engine would have sent.
        case browser
        /// A proxy, a capture converter or h5replay itself: the request headers are what
        /// went on the wire, the Cookie header included, response or not.
        case wire

        /// Words in `log.creator.name` of tools that send requests themselves, as no page
        /// does: REST clients and load testers.
        static let nonBrowserClients = ["insomnia", "postman", "paw", "rapidapi", "httpie", "bruno", "hoppscotch", "thunder client", "hurl", "jmeter", "k6"]

        /// The tool named by `log.creator.name`, when it is a client that is no browser.
        static func nonBrowserClient(root: JSONTape, context: ImportContext) -> String? {
            let name = withExtendedLifetime(context) {
                root.withView { view in try? JSONNode(view: view, index: 0, context: context)["log"]["creator"]["name"].optionalString() }
            } ?? nil
            guard let name else { return nil }
            let lower = name.asciiLowercased
            return nonBrowserClients.contains { lower.contains($0) } ? name : nil
        }

        /// The note a tool's recording carries.
        static func nonBrowserNote(_ tool: String) -> Diagnostic {
            Diagnostic(.nonBrowserClient, message: "written by \(tool), a client that is no browser: its requests are the tool's, none a page's, so they are replayed outside the web view and compared with nothing (NC1); no page-only rule (CORS, the web view's jars) judges them")
        }

        /// Words in `log.creator.name` of recorders that saw the request itself.
        static let wireRecorders = ["mitmproxy", "charles", "proxyman", "fiddler", "pcap2har", "browsermob", "burp", "http toolkit", "httptoolkit", "whistle", "owasp zap", "reqable"]

        init(creator: String?) {
            let name = creator?.asciiLowercased ?? ""
            // h5replay's own export and record journal write exactly "h5replay" (and every
            // gap as `_evidenceGap`); the bundled flows' generator writes a browser's entries.
            self = name == "h5replay" || Self.wireRecorders.contains { name.contains($0) } ? .wire : .browser
        }

        /// The recorder named by the document's `log.creator.name`.
        init(root: JSONTape, context: ImportContext) {
            let name = withExtendedLifetime(context) {
                root.withView { view in try? JSONNode(view: view, index: 0, context: context)["log"]["creator"]["name"].optionalString() }
            }
            self.init(creator: name ?? nil)
        }

        /// An entry with no response and no gap of its own: E1 when a browser recorded it;
        /// from a recorder on the wire, the request is evidence unless it has no headers (E2).
        /// A browser's entry with a response whose request holds only provisional headers
        /// is E7; a recorder on the wire wrote what was sent, whatever it lacks.
        func settle(_ exchange: inout Exchange) {
            guard exchange.evidenceGap == nil else { return }
            switch self {
            case .browser where exchange.response.status == 0: exchange.evidenceGap = .noResponse
            case .browser: if Self.provisional(exchange.request.headers) { exchange.evidenceGap = .provisionalHeaders }
            case .wire: if exchange.response.status == 0, exchange.request.headers.isEmpty { exchange.evidenceGap = .noRequestHeaders }
            }
        }

        /// Headers a page's engine knew before the network stack added its own: some, but
        /// none of Accept-Encoding, Host (`:authority` on HTTP/2) and Cookie, which every
        /// browser's network stack sends (Chrome's DevTools reports them in
        /// `requestWillBeSentExtraInfo`, which an export may miss).
        static func provisional(_ headers: HeaderList) -> Bool {
            !headers.isEmpty && headers.first("Accept-Encoding") == nil && headers.first("Host") == nil
                && headers.first(":authority") == nil && headers.first("Cookie") == nil
        }
    }

    /// Chrome marks a response served from its cache with `_fromCache` ("memory" or
    /// "disk"); such an entry never reached the network (rule E3). WebKit's Web Inspector
    /// (Safari's, and the one a WKWebView's HAR comes from) writes `_fetchType` "Memory
    /// Cache" or "Disk Cache". Firefox writes one its image or memory cache served with no
    /// timings at all (`"timings": {}`), no HTTP version and no response headers. Their
    /// request headers, if any, are made up without Cookie. A response a service worker gave
    /// (Chrome's `_fetchedViaServiceWorker`, WebKit's `_fetchType` "Service Worker") is the
    /// same to the page: its request went to the worker, not to the network, and carried no
    /// Cookie; what the worker fetched, if anything, is the worker's own request.
    static func fromCache(_ entry: JSONNode) -> Bool {
        if let fetchType = try? entry["_fetchType"].optionalString(), fetchType == "Memory Cache" || fetchType == "Disk Cache" || fetchType == "Service Worker" { return true }
        if entry["response"]["_fetchedViaServiceWorker"].bool == true { return true }
        let node = entry["_fromCache"]
        if node.isMissing {
            let timings = entry["timings"], response = entry["response"]
            return timings.kind == .object && timings.count == 0
                && (try? response["httpVersion"].optionalString()) ?? nil == ""
                && response["headers"].kind == .array && response["headers"].count == 0
        }
        if node.kind == .string, let text = try? node.string() { return !text.isEmpty }
        return node.bool ?? false
    }

    static func httpVersion(_ raw: String?) -> String {
        guard let raw, !raw.isEmpty else { return "HTTP/1.1" }
        if raw == "HTTP/1.1" { return raw }
        switch raw.asciiLowercased {
        case "http/2.0", "http/2", "h2": return "HTTP/2"
        case "http/3", "http/3.0", "h3": return "HTTP/3"
        case "http/1.0": return "HTTP/1.0"
        default:
            // "HTTP/x.x" and other placeholders say nothing: HTTP/1.1.
            let upper = raw.uppercased()
            let version = upper.dropFirst(5)
            return upper.hasPrefix("HTTP/") && !version.isEmpty && version.allSatisfy({ $0.isNumber || $0 == "." }) ? upper : "HTTP/1.1"
        }
    }

    /// Headers as `{"name", "value"}` objects (most exporters) or `[name, value]` arrays.
    private func headers(_ node: JSONNode) throws -> HeaderList {
        var out: HeaderList = []
        out.reserveCapacity(node.count)
        try node.forEachOptionalElement { item in
            if item.kind == .object {
                let name = try item["name"].string()
                let value = item["value"]
                if value.kind == .array {
                    // Polly.js (some adapters): one header, its values as an array.
                    for element in try value.array() { out.append(HeaderField(name, (try? element.optionalString()) ?? "")) }
                } else {
                    // optionalString reads a number as its text (Content-Length written as one).
                    out.append(HeaderField(name, try value.optionalString() ?? ""))
                }
            } else if item.kind == .array {
                let pair = try item.array()
                guard pair.count == 2, pair[0].kind == .string else {
                    throw item.fail("expected a [name, value] pair, found \(pair.count) element(s)")
                }
                out.append(HeaderField(try pair[0].string(), try pair[1].optionalString() ?? ""))
            } else {
                throw item.fail("expected a header object {name, value} or a [name, value] pair, found \(item.typeName)")
            }
        }
        return Self.unfoldSetCookies(out)
    }

    /// Set-Cookie fields as the server sent them, one cookie each. Chrome's, Firefox's and
    /// chrome-har's exports join a response's Set-Cookie lines into one value with line
    /// breaks; WebPagetest's cut a joined value's second line at its first ": ", leaving a
    /// field whose name holds a `=` (which no field name may) after the Set-Cookie.
    static func unfoldSetCookies(_ headers: HeaderList) -> HeaderList {
        // Read in place: the usual list, with nothing to unfold, makes no string.
        var folded = false
        headers.forEach { name, value in
            if folded { return }
            folded = name.equalsCaseInsensitive("set-cookie") ? value.contains(0x0A) : name.contains(0x3D)
        }
        guard folded else { return headers }
        var out: HeaderList = []
        var afterSetCookie = false
        for field in headers {
            let name = field.name
            if name.caseInsensitiveEquals("set-cookie") {
                for line in field.value.split(whereSeparator: \.isNewline) where !line.trimmingOWS.isEmpty {
                    out.append(HeaderField(name, String(line.trimmingOWS)))
                }
                afterSetCookie = true
            } else if afterSetCookie, name.containsByte(0x3D) {
                // WebPagetest's cut line: "NAME=VALUE;Expires=Wed, 30 Sep 2015 12" and "00:00 GMT".
                out.append(HeaderField("Set-Cookie", name + ":" + field.value))
            } else {
                out.append(field)
                afterSetCookie = false
            }
        }
        return out
    }

    /// A side file named relative to the HAR's folder, never outside it.
    static func sideFile(_ name: String, besideHAR har: String) -> Data? {
        guard !name.hasPrefix("/"), !name.split(separator: "/").contains("..") else { return nil }
        let url = URL(fileURLWithPath: har).deletingLastPathComponent().appendingPathComponent(name)
        return try? Data(contentsOf: url)
    }

    /// Polly.js's binary bodies (`content._isBinary`): a hex string, or for a content-coded
    /// response a JSON array of hex chunks of the coded bytes; nil when the text is neither.
    static func pollyBinary(_ text: String) -> Data? {
        func hex(_ s: Substring) -> [UInt8]? {
            guard s.count % 2 == 0 else { return nil }
            var out: [UInt8] = []
            out.reserveCapacity(s.count / 2)
            var i = s.startIndex
            while i < s.endIndex {
                let j = s.index(after: i)
                guard let byte = UInt8(s[i...j], radix: 16) else { return nil }
                out.append(byte)
                i = s.index(after: j)
            }
            return out
        }
        if text.hasPrefix("[") {
            var utf8 = Array(text.utf8)
            guard case .array(let chunks)? = try? utf8.withUnsafeMutableBufferPointer({ try JSONReader.parse(UnsafeBufferPointer($0)) }) else { return nil }
            var bytes: [UInt8] = []
            for chunk in chunks {
                guard case .string(let chunk) = chunk, let b = hex(Substring(chunk)) else { return nil }
                bytes += b
            }
            return Data(bytes)
        }
        return hex(Substring(text)).map { Data($0) }
    }

    /// `postData.text`, or the body rebuilt from `postData.params` when the text is missing.
    private func requestBodyBytes(_ postData: JSONNode, headers: HeaderList) throws -> Data {
        if postData.isMissing { return Data() }
        _ = try postData.object()
        if try postData["text"].optionalString() == nil, let side = try postData["_file"].optionalString(), let bytes = Self.sideFile(side, besideHAR: postData.context.file) {
            return bytes  // Playwright with content "attach"
        }
        if let text = try postData["text"].optionalString() {
            let encoding = try postData["_encoding"].optionalString() ?? postData["encoding"].optionalString()
            if encoding?.asciiLowercased == "base64" {
                guard let decoded = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else {
                    throw postData["text"].fail("postData is marked base64 but the text is not valid base64")
                }
                return decoded
            }
            return Data(text.utf8)
        }
        let params = try postData["params"].optionalArray()
        guard !params.isEmpty else { return Data() }
        let mimeType = try postData["mimeType"].optionalString() ?? headers.first("Content-Type") ?? ""
        var fields: [FormField] = []
        for param in params {
            fields.append(FormField(
                name: try param["name"].string(),
                value: try param["value"].optionalString() ?? "",
                fileName: try param["fileName"].optionalString(),
                contentType: try param["contentType"].optionalString()))
        }
        if mimeType.asciiLowercased.hasPrefix("multipart/form-data") {
            let boundary = FormField.boundary(in: mimeType) ?? "----h5replay-boundary"
            return FormField.multipart(fields, boundary: boundary)
        }
        return FormField.urlEncoded(fields)
    }

    /// Text content as bytes: Latin-1 when the Content-Type says so and the text fits,
    /// UTF-8 otherwise.
    static func encodeText(_ text: String, contentType: String?) -> Data {
        // Most types name no charset, or UTF-8: find the parameter on bytes first.
        if let contentType, let charset = Self.charset(of: contentType), charset != "utf-8" {
            if ["iso-8859-1", "latin1", "latin-1", "iso8859-1", "windows-1252", "us-ascii", "ascii"].contains(charset),
                let data = text.data(using: .isoLatin1)
            {
                return data
            }
        }
        return Data(text.utf8)
    }

    /// The charset parameter of a Content-Type, lowercased and unquoted; nil when none.
    static func charset(of contentType: String) -> String? {
        var contentType = contentType
        // Read in place: a Content-Type is read for every text body.
        return contentType.withUTF8 { bytes -> String? in
            let word: StaticString = "charset="
            let length = word.utf8CodeUnitCount
            guard bytes.count >= length else { return nil }
            let w = word.utf8Start
            for start in 0...(bytes.count - length) {
                var k = 0
                while k < length, bytes[start + k] | 0x20 == w[k] || (w[k] == UInt8(ascii: "=") && bytes[start + k] == w[k]) { k += 1 }
                guard k == length else { continue }
                var value = bytes[(start + length)...].prefix { $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: " ") }.map { $0 >= 65 && $0 <= 90 ? $0 | 0x20 : $0 }
                value.removeAll { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "'") }
                return String(decoding: value, as: UTF8.self)
            }
            return nil
        }
    }
}

/// Where a browser's export numbers its requests, the order it issued them in: Chrome's
/// request ids ("119464.217", a redirect's hop "119464.217-1"; chrome-har's `_requestId`,
/// WebPagetest's `_request_id`) count up within a process. Exporters write entries stamped
/// in the same millisecond in any order (WebPagetest by its own index), so a burst of
/// requests around a script's cookie write would otherwise read out of order. An entry
/// without an id orders before one with; ids of different processes by the process.
struct IssueOrder: Comparable {
    var process = ""
    var number = 0
    var hop = 0

    init(_ entry: JSONNode) {
        let field = (try? entry["_requestId"].optionalString()) ?? nil
        guard let id = field ?? ((try? entry["_request_id"].optionalString()) ?? nil),
              let dot = id.lastIndex(of: ".") else { return }
        let rest = id[id.index(after: dot)...]
        let parts = rest.split(separator: "-", maxSplits: 1)
        guard let number = parts.first.flatMap({ Int($0) }) else { return }
        (process, self.number) = (String(id[..<dot]), number)
        hop = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
    }

    static func < (a: IssueOrder, b: IssueOrder) -> Bool { (a.process, a.number, a.hop) < (b.process, b.number, b.hop) }
}
