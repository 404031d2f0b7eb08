/// Every diagnostic an import can attach, with its stable code and severity: one place to
/// read what an import may say, and no code spelt twice.
public enum DiagnosticCode: String, Sendable, Hashable, CaseIterable {
    /// a HAR holding several browser sessions of a page-test tool (runs, each in a fresh
    /// browser, and repeat views after a restart) was imported as one recording per session
    case browserSessions = "browser-sessions"
    /// the kernel dropped packets during a live capture
    case captureDrops = "capture-drops"
    /// libpcap stopped reading the file early
    case captureError = "capture-error"
    /// the file ends inside a packet record
    case captureTruncated = "capture-truncated"
    /// a body whose Content-Encoding did not decode; kept as sent
    case contentDecodingFailed = "content-decoding-failed"
    /// a decoded body over --max-decoded-bytes or --max-decode-ratio
    case decodedBodyLimit = "decoded-body-limit"
    /// a HAR entry or capture record that could not be read was skipped
    case entrySkipped = "entry-skipped"
    /// a HAR entry with a field no exporter writes (named by its path) was skipped; the
    /// file's other entries are imported
    case entryInvalid = "entry-invalid"
    /// more TCP connections were open at once than --max-open-flows; the idlest were closed
    case flowLimit = "flow-limit"
    /// bytes on a connection that are not HTTP/1.x
    case httpParseError = "http-parse-error"
    /// a framing or coding oddity where Chromium and WebKitGTK hand the page different
    /// things; the message says which one the recording follows and what the other does
    case framingAmbiguous = "framing-ambiguous"
    /// a framing or coding oddity both engines read past alike, and so did the import
    case framingTolerated = "framing-tolerated"
    /// a CONNECT or Upgrade ended the HTTP stream
    case httpTunnel = "http-tunnel"
    /// TLS connections, which a capture cannot decode
    case httpsNotDecodable = "https-not-decodable"
    /// IP fragments that never completed a datagram
    case ipFragmentsIncomplete = "ip-fragments-incomplete"
    /// packets the link, IP or TCP decoder could not read were skipped
    case malformedPackets = "malformed-packets"
    /// a connection the capture joined mid-stream
    case midStreamStart = "mid-stream-start"
    /// a captured request that got no response
    case noResponse = "no-response"
    /// requests that were not a page's (NC1): the app's native code, a tool or the browser
    /// itself sent them; replayed outside the web view, compared with nothing
    case nativeRequests = "native-requests"
    /// no request of the recording came from a page (NC1): nothing to replay through a
    /// web view
    case noPageRequests = "no-page-requests"
    /// TCP connections that carried no HTTP
    case nonHttpConnections = "non-http-connections"
    /// packet timestamps going back in time
    case packetsOutOfTimeOrder = "packets-out-of-time-order"
    /// the exporter left the request body out (the HAR declares a size but holds no bytes)
    case requestBodyMissing = "request-body-missing"
    /// a request body longer than --max-body-bytes, kept up to the limit
    case requestBodyLimit = "request-body-limit"
    /// a request cut short (a gap, the end of the capture)
    case requestIncomplete = "request-incomplete"
    /// a response body longer than --max-body-bytes, kept up to the limit
    case responseBodyLimit = "response-body-limit"
    /// the exporter left the response body out
    case responseBodyMissing = "response-body-missing"
    /// a response cut short (a gap, the end of the capture)
    case responseIncomplete = "response-incomplete"
    /// a HAR entry without a response object
    case responseMissing = "response-missing"
    /// a response with no request before it on its connection
    case responseWithoutRequest = "response-without-request"
    /// bytes missing from a TCP stream
    case tcpGap = "tcp-gap"
    /// retransmitted TCP bytes that differ from the first copy
    case tcpOverlapConflict = "tcp-overlap-conflict"
    /// requests recorded as http:// that were https:// to the browser (TLS ended in front
    /// of where the traffic was recorded), read as https
    case tlsTerminated = "tls-terminated"
    /// a HAR a tool that is no browser wrote (a REST client): its requests are the tool's,
    /// none a page's (NC1)
    case nonBrowserClient = "non-browser-client"
    /// responses the recording browser had cached (304 Not Modified, or served from its
    /// cache): a fresh client served the recording gets them without a body
    case warmCache = "warm-cache"
    /// a HAR entry without a usable startedDateTime
    case timeMissing = "time-missing"
    /// a HAR whose entry times are in another unit than milliseconds (nanoseconds,
    /// microseconds), read in that unit
    case timeUnitCorrected = "time-unit-corrected"
    /// HAR entries whose startedDateTime disagrees with the page-test tool's own mark of
    /// when they started, read from the mark
    case timeCorrected = "time-corrected"
    /// HAR entries the page-test tool could not time (0 ms in every mark): their responses
    /// are taken to arrive after the median time of their host's timed entries
    case timeEstimated = "time-estimated"

    public var severity: Diagnostic.Severity {
        switch self {
        case .browserSessions: return .note
        case .captureDrops: return .warning
        case .captureError: return .warning
        case .captureTruncated: return .warning
        case .contentDecodingFailed: return .warning
        case .decodedBodyLimit: return .warning
        case .entrySkipped: return .note
        case .entryInvalid: return .warning
        case .requestBodyMissing: return .warning
        case .flowLimit: return .warning
        case .httpParseError: return .warning
        case .httpTunnel: return .note
        case .framingAmbiguous: return .warning
        case .framingTolerated: return .note
        case .httpsNotDecodable: return .warning
        case .ipFragmentsIncomplete: return .warning
        case .malformedPackets: return .warning
        case .midStreamStart: return .note
        case .noResponse: return .warning
        case .nativeRequests: return .note
        case .noPageRequests: return .warning
        case .nonHttpConnections: return .note
        case .packetsOutOfTimeOrder: return .note
        case .requestBodyLimit: return .warning
        case .requestIncomplete: return .warning
        case .responseBodyLimit: return .warning
        case .responseBodyMissing: return .note
        case .responseIncomplete: return .warning
        case .responseMissing: return .warning
        case .responseWithoutRequest: return .note
        case .tcpGap: return .warning
        case .tcpOverlapConflict: return .warning
        case .timeMissing: return .warning
        case .tlsTerminated: return .note
        case .nonBrowserClient: return .note
        case .warmCache: return .note
        case .timeUnitCorrected: return .note
        case .timeCorrected, .timeEstimated: return .note
        }
    }
}

extension Diagnostic {
    /// A diagnostic of the catalogue, at its severity.
    public init(_ code: DiagnosticCode, sequence: Int? = nil, message: String) {
        self.init(code.severity, code: code.rawValue, sequence: sequence, message: message)
    }

    /// The catalogue's entry for this diagnostic; nil for a code this version does not know
    /// (one stored by a newer version).
    public var catalogued: DiagnosticCode? { DiagnosticCode(rawValue: code) }
}
