import Foundation

/// One request and its response, as a browser engine really sent and received them.
///
/// This is the truth a replay is compared with. The initiator, frame and body kind are
/// not on the wire; the importer infers them (docs/model.md, "Request and body kinds") and a scenario
/// can pin them.
public struct Exchange: Sendable, Hashable, Codable {
    /// The fields sit behind one reference, copied only when a shared exchange is changed:
    /// the emulator, the detector and the stores pass exchanges by the thousand, and a copy
    /// then costs one retain, not one per header list and string.
    @usableFromInline struct Fields: Sendable, Hashable, Codable {
        @usableFromInline var sequence: Int
        @usableFromInline var startedAt: Double
        @usableFromInline var duration: Double
        @usableFromInline var connectionID: String?
        @usableFromInline var serverAddress: String?
        @usableFromInline var request: RecordedRequest
        @usableFromInline var response: RecordedResponse
        @usableFromInline var initiator: Initiator
        @usableFromInline var frame: Frame
        @usableFromInline var bodyKind: BodyKind
        @usableFromInline var redirect: RedirectLink?
        @usableFromInline var resourceType: String?
        @usableFromInline var evidenceGap: EvidenceGap?
        @usableFromInline var responseStart: Double?
        /// Nil when the exchange carried no WebSocket messages (every exchange but a
        /// handshake), so an exchange without them encodes and compares as before.
        @usableFromInline var webSocketMessages: [WebSocketMessage]?
    }

    /// The fields' one reference: a buffer whose header is reached through a pointer, not
    /// a class property's checked access; changed only while uniquely referenced.
    @usableFromInline final class Box: ManagedBuffer<Fields, Never> {}

    /// Safe to share across threads: a buffer is changed only once `unique()` has made it
    /// this value's alone.
    @usableFromInline nonisolated(unsafe) var box: Box

    /// A new buffer holding `fields`, moved in: a closure that returned `fields` itself
    /// would copy it (a retain of every string, list and body in the request and response).
    @usableFromInline static func box(_ fields: consuming Fields) -> Box {
        var moving: Fields? = fields
        return unsafeDowncast(Box.create(minimumCapacity: 0) { _ in moving.take()! }, to: Box.self)
    }

    /// The fields, for a change: the pointer is valid while `box` holds the buffer.
    @usableFromInline var header: UnsafeMutablePointer<Fields> { box.withUnsafeMutablePointerToHeader { $0 } }

    @usableFromInline mutating func unique() {
        if !isKnownUniquelyReferenced(&box) { box = Self.box(box.withUnsafeMutablePointerToHeader { $0.pointee }) }
    }

    /// 0-based index in the recording, in time order.
    @inlinable public var sequence: Int {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.sequence } }
        _modify { unique(); yield &header.pointee.sequence }
    }
    /// Seconds since 1970 when the request started.
    @inlinable public var startedAt: Double {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.startedAt } }
        _modify { unique(); yield &header.pointee.startedAt }
    }
    /// Seconds from request start to response end (0 when unknown).
    @inlinable public var duration: Double {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.duration } }
        _modify { unique(); yield &header.pointee.duration }
    }
    @inlinable public var connectionID: String? {
        _read { yield header.pointee.connectionID }
        _modify { unique(); yield &header.pointee.connectionID }
    }
    @inlinable public var serverAddress: String? {
        _read { yield header.pointee.serverAddress }
        _modify { unique(); yield &header.pointee.serverAddress }
    }
    @inlinable public var request: RecordedRequest {
        _read { yield header.pointee.request }
        _modify { unique(); yield &header.pointee.request }
    }
    @inlinable public var response: RecordedResponse {
        _read { yield header.pointee.response }
        _modify { unique(); yield &header.pointee.response }
    }
    @inlinable public var initiator: Initiator {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.initiator } }
        _modify { unique(); yield &header.pointee.initiator }
    }
    @inlinable public var frame: Frame {
        _read { yield header.pointee.frame }
        _modify { unique(); yield &header.pointee.frame }
    }
    @inlinable public var bodyKind: BodyKind {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.bodyKind } }
        _modify { unique(); yield &header.pointee.bodyKind }
    }
    /// Membership in a redirect chain, when the exchange is one hop of one.
    @inlinable public var redirect: RedirectLink? {
        _read { yield header.pointee.redirect }
        _modify { unique(); yield &header.pointee.redirect }
    }
    /// The exporter's own resource type (`_resourceType`), kept for export.
    @inlinable public var resourceType: String? {
        _read { yield header.pointee.resourceType }
        _modify { unique(); yield &header.pointee.resourceType }
    }
    /// Why this exchange's Cookie header says nothing about which cookies the page had,
    /// nil when it does, as its importer knew it: a HAR entry with no response (E1) or no
    /// request headers recorded (E2), one served from cache or by a service worker (E3), a
    /// captured request cut short (E4).
    @inlinable public var evidenceGap: EvidenceGap? {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.evidenceGap } }
        _modify { unique(); yield &header.pointee.evidenceGap }
    }

    /// Seconds from request start until the response's head arrived, nil when the
    /// recording does not say (a HAR without `timings`). A browser stores a response's
    /// Set-Cookie when its head arrives: a request that left before then went without it.
    @inlinable public var responseStart: Double? {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.responseStart } }
        _modify { unique(); yield &header.pointee.responseStart }
    }

    /// The messages a WebSocket carried after this handshake exchange's 101, in the order
    /// they crossed (HAR's `_webSocketMessages`, as Chrome writes them); empty for any other
    /// exchange. The store does not keep them (no column yet): they live in the HAR.
    public var webSocketMessages: [WebSocketMessage] {
        get { box.withUnsafeMutablePointerToHeader { $0.pointee.webSocketMessages } ?? [] }
        set { unique(); header.pointee.webSocketMessages = newValue.isEmpty ? nil : newValue }
    }

    public init(
        sequence: Int, startedAt: Double, duration: Double = 0, connectionID: String? = nil,
        serverAddress: String? = nil, request: RecordedRequest, response: RecordedResponse,
        initiator: Initiator = .other, frame: Frame = .main, bodyKind: BodyKind = .none,
        redirect: RedirectLink? = nil, resourceType: String? = nil, evidenceGap: EvidenceGap? = nil,
        responseStart: Double? = nil, webSocketMessages: [WebSocketMessage] = []
    ) {
        box = Self.box(Fields(
            sequence: sequence, startedAt: startedAt, duration: duration, connectionID: connectionID,
            serverAddress: serverAddress, request: request, response: response, initiator: initiator,
            frame: frame, bodyKind: bodyKind, redirect: redirect, resourceType: resourceType, evidenceGap: evidenceGap,
            responseStart: responseStart, webSocketMessages: webSocketMessages.isEmpty ? nil : webSocketMessages))
    }

    public init(from decoder: Decoder) throws { box = Self.box(try Fields(from: decoder)) }
    public func encode(to encoder: Encoder) throws { try box.withUnsafeMutablePointerToHeader { try $0.pointee.encode(to: encoder) } }

    public static func == (a: Exchange, b: Exchange) -> Bool {
        a.box === b.box || a.box.withUnsafeMutablePointerToHeader { x in b.box.withUnsafeMutablePointerToHeader { x.pointee == $0.pointee } }
    }

    public func hash(into hasher: inout Hasher) { box.withUnsafeMutablePointerToHeader { hasher.combine($0.pointee) } }

    public var endedAt: Double { startedAt + max(duration, 0) }

    /// When the response's head arrived, where the recording says (`responseStart`,
    /// within the exchange's span); else when the response ended, the latest it can have.
    @inlinable public var responseArrivedAt: Double {
        startedAt + (responseStart.map { min(max($0, 0), max(duration, 0)) } ?? max(duration, 0))
    }
}

/// One WebSocket message, as Chrome's HAR writes it in `_webSocketMessages`: which way it
/// went, when (seconds since 1970), its opcode (1 text, 2 binary) and its payload.
public struct WebSocketMessage: Sendable, Hashable, Codable {
    public enum Direction: String, Sendable, Hashable, Codable {
        /// From the client (the page) to the server.
        case send
        /// From the server to the client.
        case receive
    }

    public var direction: Direction
    public var time: Double
    public var opcode: Int
    /// The payload: UTF-8 text for opcode 1, bytes for opcode 2.
    public var data: Data

    public init(direction: Direction, time: Double, opcode: Int, data: Data) {
        self.direction = direction
        self.time = time
        self.opcode = opcode
        self.data = data
    }
}

/// Why a recorded request is not evidence of which cookies the page had (rules E1-E6).
public enum EvidenceGap: String, Sendable, Hashable, Codable, CaseIterable {
    /// E1: the request got no response (status 0: aborted, blocked, failed); exporters
    /// record only provisional headers for it.
    case noResponse = "no-response"
    /// E2: the exporter recorded no request headers.
    case noRequestHeaders = "no-request-headers"
    /// E3: served from the browser's cache; no request reached the network.
    case fromCache = "from-cache"
    /// E4: a captured request cut short by a gap.
    case requestCut = "request-cut"
    /// E5: the engine's CORS preflight, which never carries credentials.
    case corsPreflight = "cors-preflight"
    /// E6: a page's request to another origin than its own, in CORS mode (it carries an
    /// `Origin` naming another origin) and without any Cookie: fetch's default
    /// credentials mode (`same-origin`), an XHR without `withCredentials` and a
    /// `crossorigin="anonymous"` load all send such a request without cookies, whatever
    /// the jar holds.
    case credentialsOmitted = "credentials-omitted"
    /// E7: a browser's export kept only the request's provisional headers (Chrome's
    /// DevTools without the network stack's `requestWillBeSentExtraInfo`): no
    /// Accept-Encoding, Host or Cookie, which the network stack adds to every request,
    /// so the Cookie header it sent was not recorded.
    case provisionalHeaders = "provisional-headers"

    /// The rule that says so.
    public var rule: String {
        switch self {
        case .noResponse: return "E1"
        case .noRequestHeaders: return "E2"
        case .fromCache: return "E3"
        case .requestCut: return "E4"
        case .corsPreflight: return "E5"
        case .credentialsOmitted: return "E6"
        case .provisionalHeaders: return "E7"
        }
    }

    /// "no response (status 0)", for `show` and findings.
    public var reason: String {
        switch self {
        case .noResponse: return "no response (status 0): a browser's export keeps only provisional request headers"
        case .noRequestHeaders: return "no request headers recorded"
        case .fromCache: return "served from cache or by a service worker: the page's request reached no network"
        case .requestCut: return "the captured request is cut short by a gap"
        case .corsPreflight: return "a CORS preflight: the engine sends it without cookies"
        case .credentialsOmitted: return "a request to another origin sent in CORS mode without any cookie: its credentials mode (fetch's default, an XHR without withCredentials) kept them off"
        case .provisionalHeaders: return "only the browser's provisional request headers were recorded (no Accept-Encoding, Host or Cookie): what the network stack sent, cookies included, is not in the file"
        }
    }
}

/// The request as sent: method, URL, header fields in wire order, body bytes.
public struct RecordedRequest: Sendable, Hashable, Codable {
    public var method: String
    public var url: String {
        didSet { target = RequestTarget(url) }
    }
    /// `url` split into its parts, once: classification, cookies and matching all ask.
    public private(set) var target: RequestTarget?
    public var httpVersion: String
    public var headers: HeaderList
    public var body: Data {
        didSet {
            bodyFingerprint = BodyFingerprint(body)
            bodyFitsHeaderValue = Self.fitsHeaderValue(body)
            bodyDetached = false
        }
    }
    /// The body could travel as a header value: no CR or LF and no character above
    /// U+00FF (in UTF-8, lead bytes from 0xC4). Computed once with the fingerprint, since
    /// every preset that moves bodies into headers asks (H3).
    public private(set) var bodyFitsHeaderValue: Bool
    /// Length and SHA-256 of `body`, computed once when the body is set: every preset of
    /// every replay compares against it.
    public private(set) var bodyFingerprint: BodyFingerprint
    /// The body was handed to the store while importing and is not held here; the
    /// fingerprint still describes it. A recording loaded from the store is never detached.
    public private(set) var bodyDetached = false

    /// Gives the body away (to the store, during a streaming import), keeping its fingerprint.
    public mutating func detachBody() -> Data {
        let detached = body
        let fingerprint = bodyFingerprint
        let fits = bodyFitsHeaderValue
        body = Data()
        bodyFingerprint = fingerprint
        bodyFitsHeaderValue = fits
        bodyDetached = true
        return detached
    }

    public init(method: String, url: String, httpVersion: String = "HTTP/1.1", headers: HeaderList = [], body: Data = Data()) {
        self.init(method: method, url: url, target: RequestTarget(url), httpVersion: httpVersion, headers: headers, body: body)
    }

    /// A request whose URL the caller has already parsed: `target` must be
    /// `RequestTarget(url)`.
    public init(method: String, url: String, target: RequestTarget?, httpVersion: String = "HTTP/1.1", headers: HeaderList = [], body: Data = Data()) {
        self.method = method
        self.url = url
        self.target = target
        self.httpVersion = httpVersion
        self.headers = headers
        self.body = body
        self.bodyFingerprint = BodyFingerprint(body)
        self.bodyFitsHeaderValue = Self.fitsHeaderValue(body)
    }

    /// The page that issued the request, as its Referer, else its Origin, names it; nil when
    /// neither does. A capture made on the device holds an app's API calls but not its page,
    /// which the app serves itself: `Origin: capacitor://localhost` names it.
    public var issuingPage: RequestTarget? {
        headers.first("Referer").flatMap(RequestTarget.init) ?? headers.first("Origin").flatMap(RequestTarget.init)
    }

    /// Whether the page that issued the request (as `issuingPage` names it) is on a scheme
    /// of an app's own, not http or https. Reads only the scheme: a report asks for every
    /// third-party finding.
    public var issuedOnAppScheme: Bool {
        guard let page = headers.first("Referer") ?? headers.first("Origin"), let colon = page.utf8.firstIndex(of: UInt8(ascii: ":")),
            colon > page.startIndex, page.utf8[colon...].starts(with: "://".utf8)
        else { return false }
        let scheme = page[..<colon].lowercased()
        return scheme != "http" && scheme != "https"
    }

    static func fitsHeaderValue(_ body: Data) -> Bool {
        body.withUnsafeBytes { bytes in !bytes.contains { $0 == 0x0A || $0 == 0x0D || $0 >= 0xC4 } }
    }

    enum CodingKeys: String, CodingKey { case method, url, httpVersion, headers, body }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(method: try c.decode(String.self, forKey: .method), url: try c.decode(String.self, forKey: .url), httpVersion: try c.decode(String.self, forKey: .httpVersion),
            headers: try c.decode(HeaderList.self, forKey: .headers), body: try c.decode(Data.self, forKey: .body))
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(method, forKey: .method)
        try c.encode(url, forKey: .url)
        try c.encode(httpVersion, forKey: .httpVersion)
        try c.encode(headers, forKey: .headers)
        try c.encode(body, forKey: .body)
    }

}

/// The response: status, header fields, the body after content decoding.
public struct RecordedResponse: Sendable, Hashable, Codable {
    /// 0 when there was no response (a network error or an aborted load).
    public var status: Int
    public var statusText: String
    public var httpVersion: String
    public var headers: HeaderList
    /// The body after content decoding.
    public var body: Data
    /// The length on the wire before content decoding, when known.
    public var encodedLength: Int?
    /// The recording had no body for this response (Firefox drops image bodies, for one).
    public var bodyMissing: Bool
    /// HAR's `redirectURL`, used when the Location header is missing.
    public var redirectURL: String?
    /// Set when the body was handed to the store while importing and is not held here.
    public var detachedBody: BodyFingerprint?

    /// Gives the body away (to the store, during a streaming import), keeping its
    /// fingerprint, reused from `repeated` when the body was met before.
    public mutating func detachBody(fingerprinting repeated: inout RepeatedBodies) -> (Data, BodyFingerprint) {
        detachBody(fingerprint: repeated.fingerprint(of: body).fingerprint)
    }

    /// Gives the body away with a fingerprint the caller worked out before: it must be
    /// `BodyFingerprint(body)`.
    public mutating func detachBody(fingerprint: BodyFingerprint) -> (Data, BodyFingerprint) {
        let detached = body
        body = Data()
        detachedBody = fingerprint
        return (detached, fingerprint)
    }

    public init(status: Int, statusText: String = "", httpVersion: String = "HTTP/1.1", headers: HeaderList = [], body: Data = Data(), encodedLength: Int? = nil, bodyMissing: Bool = false, redirectURL: String? = nil) {
        self.status = status
        self.statusText = statusText
        self.httpVersion = httpVersion
        self.headers = headers
        self.body = body
        self.encodedLength = encodedLength
        self.bodyMissing = bodyMissing
        self.redirectURL = redirectURL
    }

    @inlinable public var isRedirect: Bool {
        switch status {
        case 301, 302, 303, 307, 308: return true
        default: return false
        }
    }
    /// 307 and 308 keep the method and body; the others turn a POST into a GET.
    @inlinable public var preservesMethod: Bool { status == 307 || status == 308 }
    public var location: String? { headers.first("Location") ?? redirectURL }
}

/// Who issued a request (docs/model.md, "Request and body kinds").
public enum Initiator: String, Sendable, Hashable, Codable, CaseIterable {
    case navigation
    case formSubmission = "form-submission"
    case xhr
    case fetch
    /// An ajax request whose API (XHR or fetch) is unknown.
    case ajax
    case beacon
    case prefetch
    case script
    case stylesheet
    case image
    case font
    case media
    case other
    /// Sent by a program that is no browser engine: the app's native code (NSURLSession,
    /// whose User-Agent names CFNetwork), or a tool on the capturing machine. It never
    /// passes through the web view (NC1).
    case native
    /// A WebSocket's opening handshake (`Upgrade: websocket`): WebKit's own, which no
    /// interceptor sees and no CORS check applies to (WS1).
    case websocket
    /// An `EventSource`'s request (server-sent events): page script opens it, but it is
    /// neither XHR nor fetch, so bridges that patch those do not see it (ES1).
    case eventSource = "eventsource"

    /// A load of a document: it sets the frame's URL.
    public var isDocument: Bool { self == .navigation || self == .formSubmission }
    /// A request issued by page script.
    public var isScripted: Bool { self == .xhr || self == .fetch || self == .ajax || self == .beacon || self == .eventSource }
}

/// Which frame issued a request.
public struct Frame: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable { case main, iframe }
    public var kind: Kind
    /// The request's site differs from the top-level document's site.
    public var thirdParty: Bool

    public init(kind: Kind, thirdParty: Bool) {
        self.kind = kind
        self.thirdParty = thirdParty
    }

    public static let main = Frame(kind: .main, thirdParty: false)

    /// `main`, `main-3p`, `iframe` or `iframe-3p`, for tables and the database.
    public var label: String { kind.rawValue + (thirdParty ? "-3p" : "") }

    public init?(label: String) {
        let third = label.hasSuffix("-3p")
        guard let kind = Kind(rawValue: third ? String(label.dropLast(3)) : label) else { return nil }
        self.init(kind: kind, thirdParty: third)
    }
}

/// What JavaScript passed to `send`/`fetch` (docs/model.md, "Request and body kinds").
public enum BodyKind: String, Sendable, Hashable, Codable, CaseIterable {
    case none
    /// text/*, JSON, XML or other valid UTF-8.
    case text
    /// `application/x-www-form-urlencoded` (form fields or URLSearchParams).
    case urlEncoded = "urlencoded"
    /// `multipart/form-data` without any file part.
    case formData = "formdata"
    /// `multipart/form-data` with at least one part carrying a filename (a Blob or File).
    case formDataWithFile = "formdata-file"
    /// Bytes: a Blob by default, an ArrayBuffer when the scenario says so.
    case binary
    /// A ReadableStream upload (only a scenario can say so: the wire shows bytes).
    case stream
    /// Bytes the scenario says were an ArrayBuffer (not a Blob).
    case binaryArrayBuffer = "arraybuffer"

    /// Bytes of any kind: a Blob, an ArrayBuffer, or a FormData holding a file.
    public var isBinary: Bool { self == .binary || self == .binaryArrayBuffer || self == .formDataWithFile }

    /// Whether WebKit backs the body with a Blob (S2).
    public func isBlobBacked(binaryAsBlob: Bool) -> Bool {
        switch self {
        case .formDataWithFile: return true
        case .binary: return binaryAsBlob
        default: return false  // an ArrayBuffer, a string, form fields
        }
    }
}

/// A hop of a redirect chain: the chain is named by the sequence of its first request.
public struct RedirectLink: Sendable, Hashable, Codable {
    /// Sequence of the chain's first request (hop 0).
    public var chainStart: Int
    /// 0 for the request the page issued, 1 for the first redirect target, and so on.
    public var hop: Int
    /// Sequence of the next hop, when this response redirects and the target was recorded.
    public var next: Int?

    public init(chainStart: Int, hop: Int, next: Int?) {
        self.chainStart = chainStart
        self.hop = hop
        self.next = next
    }
}

extension RecordedRequest {
    /// The document that sent the request, as its Referer names it; nil without one, or
    /// when it does not parse.
    public var refererTarget: RequestTarget? {
        headers.first("Referer").flatMap { RequestTarget($0.trimmingOWS) }
    }
}
