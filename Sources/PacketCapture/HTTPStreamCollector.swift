import Foundation
import HTTPWire
import TrafficModel

/// Turns reassembled TCP streams into exchanges: tells HTTP from TLS and other protocols,
/// runs an HTTP/1.1 parser pair per connection, decodes content, and builds the
/// recording's `Exchange` values with the diagnostics of each.
public struct HTTPStreamCollector: TCPStreamSink {
    public struct Options: Sendable {
        public var httpLimits: HTTPLimits
        public var decoder: ContentDecoder
        /// Tolerant (the default) decodes what browsers decode and says so; strict
        /// (`--strict-http`) refuses every framing oddity, as llhttp's strict mode does.
        public var strictness: HTTPParser.Strictness

        public init(httpLimits: HTTPLimits = .default, decoder: ContentDecoder = ContentDecoder(), strictness: HTTPParser.Strictness = .tolerant) {
            self.httpLimits = httpLimits
            self.decoder = decoder
            self.strictness = strictness
            self.decoder.tolerant = strictness == .tolerant
        }
    }

    /// An exchange with what the importer needs beyond the model: its client, for
    /// `--split client`, and diagnostics not yet numbered.
    public struct Collected: Sendable {
        public var exchange: Exchange
        public var client: String
        public var diagnostics: [Diagnostic]
        /// Bodies taken out of `exchange` for the store (`detach()`), with their digests.
        public var detached: [StoredBody] = []
        /// The response body as it crossed the wire and its Content-Encoding, when it
        /// decoded cleanly (no oddity, no limit) to more bytes than it is: what `detach()`
        /// gives the store in place of the decoded body.
        public var wireResponse: (bytes: Data, coding: String)?
        /// What classification reads from the exchange alone, worked out by `detach()`; the
        /// classifier, which needs the exchanges before, then takes it as given.
        public var traits: ExchangeClassifier.Traits?
        /// The decoding memo's entry the response body is, when it is one: its fingerprint
        /// is worked out once (`detach`). Let go once detached.
        var decoding: Decoding?

        /// Moves the bodies out for a streaming import, classifying the request body first
        /// (the body kind needs its bytes). The exchange's other traits are worked out here
        /// too: this runs on the thread that builds exchanges, and the thread that orders
        /// and stores them is the one an import waits on.
        /// A response body met before takes its fingerprint from `repeated`.
        public mutating func detach(fingerprinting repeated: inout RepeatedBodies) {
            traits = ExchangeClassifier.Traits(&exchange)
            let request = exchange.request.detachBody()
            // The request's body and the response's: one allocation, not a growth for each.
            detached.reserveCapacity(2)
            detached.append(StoredBody(request, fingerprint: exchange.request.bodyFingerprint))
            let (response, fingerprint): (Data, BodyFingerprint)
            if let decoding {
                let known = decoding.fingerprint ?? BodyFingerprint(decoding.decoded)
                decoding.fingerprint = known
                (response, fingerprint) = exchange.response.detachBody(fingerprint: known)
                self.decoding = nil
            } else {
                (response, fingerprint) = exchange.response.detachBody(fingerprinting: &repeated)
            }
            if let wire = wireResponse {
                detached.append(StoredBody(wire.bytes, coding: wire.coding, fingerprint: fingerprint))
                wireResponse = nil
            } else {
                detached.append(StoredBody(response, fingerprint: fingerprint))
            }
        }
    }

    /// Connection counts for the summary.
    public struct Counts: Sendable, Hashable {
        public var httpConnections = 0
        /// TLS (HTTPS) connections: counted, not decodable.
        public var tlsConnections = 0
        /// TCP connections that carried neither HTTP/1.x nor TLS.
        public var otherConnections = 0
        /// Connections that turned into another protocol (Upgrade, CONNECT).
        public var tunnels = 0
        public var exchanges = 0
        public var responsesWithoutRequest = 0
        public var parseErrors = 0
    }

    enum StreamProtocol { case undetermined, http, tls, other }

    /// A class, so that each packet updates its connection in place. Its fields are
    /// unchecked, as the reassembler's flows are: only the reading thread touches them,
    /// one access at a time.
    final class FlowState {
        let client: Endpoint
        let server: Endpoint
        let midStream: Bool
        /// What every exchange of the connection records of it, spelled once per connection
        /// rather than once per exchange (an address formatted is a few hundred instructions).
        let names: Names
        @exclusivity(unchecked) var proto: StreamProtocol = .undetermined
        @exclusivity(unchecked) var connection: HTTPConnection?
        @exclusivity(unchecked) var reportedError = false
        /// The client's SYN, when the capture saw the connection open.
        @exclusivity(unchecked) var synAt: Double?
        /// The server's SYN-ACK.
        @exclusivity(unchecked) var establishedAt: Double?
        /// The first byte the client sent.
        @exclusivity(unchecked) var firstDataAt: Double?
        /// When the page issued the connection's first request, if before its first byte
        /// (`HTTPStreamCollector.issueTime`); nil once that request is handed on.
        @exclusivity(unchecked) var firstIssuedAt: Double?
        @exclusivity(unchecked) var firstDelivered = false

        init(client: Endpoint, server: Endpoint, midStream: Bool, flow: TCPFlowID) {
            self.client = client
            self.server = server
            self.midStream = midStream
            names = Names(client: client.address.description, server: server.description, connection: String(flow))
        }
    }

    /// A connection's ends and number as its exchanges record them: the client's address
    /// (`Collected.client`), the server's address and port, the connection's id.
    public struct Names: Sendable {
        public var client: String
        public var server: String
        public var connection: String
    }

    /// A paired request and response as parsed, not yet built into an `Exchange`. Building
    /// (content decoding, hashing) is independent per exchange, so an importer may do it
    /// on another thread.
    public struct Pending: Sendable {
        public var parts: HTTPConnection.Exchange
        public var client: Endpoint
        public var server: Endpoint
        public var flow: TCPFlowID
        /// The connection's names, as its exchanges record them.
        public var names: Names
        /// When the page issued the request, when that was before its first byte: the SYN
        /// of the connection it opened (`issueTime`).
        public var issuedAt: Double? = nil
    }

    public var options: Options
    public var counts = Counts()
    /// Exchanges parsed since the caller last emptied this.
    public var pending: [Pending] = []
    /// Recording-level diagnostics (per connection: parse errors, tunnels).
    public var diagnostics: [Diagnostic] = []
    var flows: [TCPFlowID: FlowState] = [:]
    /// The latest packet time any connection reported.
    var latestTime = -Double.infinity

    public init(options: Options = Options()) {
        self.options = options
    }

    public mutating func opened(_ flow: TCPFlowID, client: Endpoint, server: Endpoint, midStream: Bool, time: Double) {
        let state = FlowState(client: client, server: server, midStream: midStream, flow: flow)
        if !midStream { state.synAt = time }
        flows[flow] = state
        latestTime = max(latestTime, time)
    }

    public mutating func established(_ flow: TCPFlowID, time: Double) {
        guard let state = flows[flow], state.synAt != nil, state.establishedAt == nil else { return }
        state.establishedAt = time
        latestTime = max(latestTime, time)
    }

    // MARK: When a request was issued
    //
    // A browser's HAR dates a request from when the page issued it: the time to open a
    // connection (and to look up its host) comes after `startedDateTime` and counts in
    // `time`. A capture sees the request's first byte only once the connection is open,
    // a round trip or more later. The first request of a connection the capture saw open
    // is dated from the connection's SYN, as pcap2har dates it, so that a capture and a HAR
    // of the same traffic agree on the order of cookie writes and requests. A connection
    // opened ahead of its request (a browser's preconnect) is told by its first byte coming
    // well after the handshake: its request keeps the time of its first byte.

    /// How long after the SYN-ACK the first byte may come for the request to have been
    /// waiting for the connection: a handshake's time again, and at least 50 ms.
    static func promptness(syn: Double, established: Double) -> Double { max(0.05, established - syn) }
    /// How long a connection may wait for its SYN-ACK and still date its first request.
    static let handshakeLimit = 3.0

    /// The time the connection's first request was issued, when that was its SYN.
    static func issueTime(_ state: FlowState) -> Double? {
        guard let syn = state.synAt, let established = state.establishedAt, let first = state.firstDataAt,
              established >= syn, established - syn <= handshakeLimit, first >= established,
              first - established <= promptness(syn: syn, established: established) else { return nil }
        return syn
    }

    /// The earliest time a request still to come on this connection may be dated from,
    /// while that is before its first byte: until its first byte, or until the handshake
    /// is too slow or the first byte too late for the SYN to date it.
    func issueFloor(_ state: FlowState) -> Double? {
        if state.firstDelivered { return nil }
        if let issued = state.firstIssuedAt { return issued }
        guard state.firstDataAt == nil, let syn = state.synAt else { return nil }
        if let established = state.establishedAt {
            return latestTime - established <= Self.promptness(syn: syn, established: established) ? syn : nil
        }
        return latestTime - syn <= Self.handshakeLimit ? syn : nil
    }

    public mutating func data(_ flow: TCPFlowID, fromClient: Bool, _ bytes: UnsafeRawBufferPointer, time: Double) {
        guard let state = flows[flow] else { return }
        if time > latestTime { latestTime = time }
        if fromClient, state.firstDataAt == nil {
            state.firstDataAt = time
            state.firstIssuedAt = Self.issueTime(state)
        }
        if state.proto == .undetermined {
            state.proto = Self.detect(bytes, fromClient: fromClient, state: state)
            switch state.proto {
            case .http:
                counts.httpConnections += 1
                state.connection = HTTPConnection(strictness: options.strictness, limits: options.httpLimits, midStream: state.midStream)
            case .tls: counts.tlsConnections += 1
            case .other: counts.otherConnections += 1
            case .undetermined: break
            }
        }
        guard state.proto == .http else { return }
        if fromClient {
            state.connection!.clientData(bytes, time: time)
        } else {
            state.connection!.serverData(bytes, time: time)
        }
        drain(state, flow: flow)
    }

    public mutating func gap(_ flow: TCPFlowID, fromClient: Bool, length: Int, time: Double) {
        guard let state = flows[flow], state.proto == .http else { return }
        if fromClient {
            state.connection!.clientGap(length, time: time)
        } else {
            state.connection!.serverGap(length, time: time)
        }
        drain(state, flow: flow)
    }

    public mutating func closed(_ flow: TCPFlowID, reason: TCPCloseReason, time: Double) {
        guard let state = flows.removeValue(forKey: flow) else { return }
        if state.proto == .http {
            state.connection!.finish(time: time)
            drain(state, flow: flow)
        }
    }

    /// The start of the earliest request on an open connection that is not yet in
    /// `pending`: every exchange still to come began at or after it, or after the current
    /// packet's time. Costs one step per open connection.
    public var earliestOpenRequestStart: Double? {
        var earliest: Double?
        for state in flows.values where state.proto == .http || state.proto == .undetermined {
            guard let start = issueFloor(state) ?? state.connection?.earliestUndeliveredRequestStart else { continue }
            if earliest == nil || start < earliest! { earliest = start }
        }
        return earliest
    }

    static func detect(_ bytes: UnsafeRawBufferPointer, fromClient: Bool, state: FlowState) -> StreamProtocol {
        guard let first = bytes.first else { return .undetermined }
        // A TLS record: handshake (22) or, mid-stream, application data (23), version 3.x.
        if bytes.count >= 3, first == 0x16 || first == 0x17 || first == 0x15 || first == 0x14, bytes[1] == 0x03, bytes[2] <= 0x04 {
            return .tls
        }
        if fromClient {
            var k = 0
            while k < min(bytes.count, 24), HTTPParser.isTokenChar(bytes[k]) { k += 1 }
            if k > 0, k < bytes.count, bytes[k] == 0x20 { return .http }
        } else if bytes.starts(with: "HTTP/".utf8) {
            return .http
        }
        if state.midStream { return state.server.port == 443 || state.server.port == 8443 ? .tls : .http }
        return .other
    }

    mutating func drain(_ state: FlowState, flow: TCPFlowID) {
        if let error = state.connection!.requests.error ?? state.connection!.responses.error, !state.reportedError {
            state.reportedError = true
            counts.parseErrors += 1
            diagnostics.append(Diagnostic(.httpParseError, message: "connection \(state.client) → \(state.server): \(error); the parser looked for the next message after it"))
            if let oddity = error.oddity {
                diagnostics.append(Self.diagnostic(oddity, at: "connection \(state.client) → \(state.server)"))
            }
        }
        if state.connection!.leftHTTP, state.proto == .http {
            counts.tunnels += 1
            state.proto = .other
            diagnostics.append(Diagnostic(.httpTunnel, message: "connection \(state.client) → \(state.server) switched protocols (Upgrade or CONNECT); what follows is not HTTP/1.1"))
        }
        guard !state.connection!.completed.isEmpty else { return }
        // Each exchange moved out, not copied: popped from the end of the list reversed in
        // its buffer, where a loop over the list copied each (its two messages' parts).
        var completed: [HTTPConnection.Exchange] = []
        swap(&completed, &state.connection!.completed)
        completed.withUnsafeMutableBufferPointer { $0.reverse() }
        while let parts = completed.popLast() {
            guard parts.request != nil else {
                counts.responsesWithoutRequest += 1
                if let status = parts.response?.head.status {
                    diagnostics.append(Diagnostic(.responseWithoutRequest, message: "connection \(state.client) → \(state.server): a \(status) response whose request is not in the capture (it began before the capture did)"))
                }
                continue
            }
            // The connection's first request: dated from its SYN when it waited for it.
            let issuedAt = state.firstDelivered ? nil : state.firstIssuedAt
            state.firstDelivered = true
            state.firstIssuedAt = nil
            if parts.request!.head.method == "CONNECT" { continue }
            counts.exchanges += 1
            pending.append(Pending(parts: parts, client: state.client, server: state.server, flow: flow, names: state.names, issuedAt: issuedAt))
        }
        // The emptied list's room, kept for the next.
        swap(&completed, &state.connection!.completed)
    }

    static func url(for head: HTTPHead, server: Endpoint) -> String {
        var target = head.target
        if target.hasBytePrefix("http://") || target.hasBytePrefix("https://") || target.hasBytePrefix("HTTP://") { return target }
        // The Host value without its surrounding spaces, read in place and joined in one
        // buffer: appending to a string cost a few hundred instructions a piece, for every
        // exchange.
        let url: String?? = head.headers.firstValue("Host") { raw in
            let host = raw.owsTrimmed(0..<raw.count)
            guard !host.isEmpty else { return nil }
            return target.withUTF8 { httpURL(host: UnsafeBufferPointer(rebasing: raw[host]), target: $0) }
        }
        if let url = url ?? nil { return url }
        var host = server.port == 80 ? "\(server.address)" : "\(server.address):\(server.port)"
        return host.withUTF8 { h in target.withUTF8 { httpURL(host: h, target: $0) } }
    }

    /// `http://` and the host, then the request-target: as it is when it starts with "/",
    /// "/" for `*`, and after a "/" otherwise.
    static func httpURL(host: UnsafeBufferPointer<UInt8>, target: UnsafeBufferPointer<UInt8>) -> String {
        let star = target.count == 1 && target[0] == 0x2A
        let slash = target.first != 0x2F
        let path = star ? UnsafeBufferPointer(rebasing: target[0..<0]) : target
        let scheme: StaticString = "http://"
        let count = scheme.utf8CodeUnitCount + host.count + (slash ? 1 : 0) + path.count
        return String(unsafeUninitializedCapacity: count) { out in
            var k = 0
            _ = out.initialize(from: UnsafeBufferPointer(start: scheme.utf8Start, count: scheme.utf8CodeUnitCount))
            k += scheme.utf8CodeUnitCount
            _ = UnsafeMutableBufferPointer(rebasing: out[k...]).initialize(from: host)
            k += host.count
            if slash {
                out[k] = 0x2F
                k += 1
            }
            _ = UnsafeMutableBufferPointer(rebasing: out[k...]).initialize(from: path)
            return k + path.count
        }
    }

    /// A framing oddity as a diagnostic: `framing-ambiguous` when the engines differ on it.
    static func diagnostic(_ oddity: FramingOddity, at place: String) -> Diagnostic {
        Diagnostic(oddity.split == nil ? .framingTolerated : .framingAmbiguous, message: "\(place): \(oddity.sentence) [\(oddity.id)]")
    }

    /// A compressed response body's clean decoding, kept to be reused when the same bytes
    /// come again under the same Content-Encoding (`build(_:options:decodings:)`).
    ///
    /// A reference, so that its fingerprint, worked out when the first exchange with it is
    /// detached, serves every later one: they share the decoded bytes, and hashing them or
    /// comparing them byte for byte with a kept copy (`RepeatedBodies`) would be done for
    /// nothing. Read and written only on the thread that builds with the memo.
    public final class Decoding: @unchecked Sendable {
        let coding: String
        let decoded: Data
        var fingerprint: BodyFingerprint?

        init(coding: String, decoded: Data) {
            self.coding = coding
            self.decoded = decoded
        }
    }

    /// Builds the model's exchange: URL, decoded body, diagnostics. Pure; any thread.
    public static func build(_ item: consuming Pending, options: Options) -> Collected {
        var none = RecentBodies<Decoding>(budget: 0)
        return build(item, options: options, decodings: &none)
    }

    /// As `build(_:options:)`, taking a compressed response's decoded body from `decodings`
    /// when the same bytes came before under the same Content-Encoding and decoded cleanly
    /// (no oddity, no limit, the whole body): a capture carries the same compressed script
    /// or page many times, and decoding it again gives the same bytes. The decoded body is
    /// then shared with the earlier exchange's, not inflated and copied again.
    ///
    /// The parsed messages are taken apart, not copied: their header lists become the
    /// exchange's.
    public static func build(_ item: consuming Pending, options: Options, decodings: inout RecentBodies<Decoding>) -> Collected {
        let client = item.client, server = item.server
        let request = item.parts.request.take()!
        var diagnostics: [Diagnostic] = []
        // Spelled out only for a diagnostic: most exchanges have none.
        var where_: String { "\(client) → \(server)" }
        let target = url(for: request.head, server: server)
        let recordedRequest = RecordedRequest(
            method: request.head.method, url: target, httpVersion: request.head.version,
            headers: request.head.headers, body: request.body)
        if !request.complete {
            diagnostics.append(Diagnostic(.requestIncomplete, message: "request \(where_): " + request.problems.joined(separator: "; ")))
        }
        for oddity in request.oddities { diagnostics.append(Self.diagnostic(oddity, at: "request \(where_)")) }
        if request.bodyTruncated {
            diagnostics.append(Diagnostic(.requestBodyLimit, message: "request \(where_): body kept up to \(options.httpLimits.maxBodyBytes) of \(request.bodyLength) bytes (--max-body-bytes)"))
        }
        var recordedResponse = RecordedResponse(status: 0)
        var wire: (bytes: Data, coding: String)?
        // The memo's entry whose decoded bytes the response holds.
        var shared: Decoding?
        var end = request.endTime
        // When the response's first byte came: its head, and its Set-Cookie, arrived then.
        var responseStartTime: Double?
        if let response = item.parts.response.take() {
            end = response.endTime
            responseStartTime = response.startTime
            var body = response.body
            var oddities = response.oddities
            // The decoded body, when an earlier exchange's decoding gave it.
            var reused: Data?
            // Repeated Content-Encoding fields are one list (RFC 9110 section 5.3), as both
            // engines read them.
            let coding = response.head.combined("Content-Encoding")
            let memoKey = decodings.budget > 0 && !coding.isEmpty && body.count >= RecentBodies<Decoding>.smallest ? RecentBodies<Decoding>.key(body) : nil
            if let memoKey, response.complete, !response.bodyTruncated, let earlier = decodings.value(for: body, key: memoKey), earlier.coding == coding {
                wire = (body, coding)
                reused = earlier.decoded
                shared = earlier
            } else if !coding.isEmpty, !body.isEmpty {
                do {
                    // A value that names no coding (`identity`) leaves the body as it is.
                    if let decoded = try options.decoder.decodeIfEncoded([UInt8](body), contentEncoding: coding) {
                        // Read back, these bytes must decode as they did here: only a clean
                        // decoding of a complete body qualifies.
                        if decoded.oddities.isEmpty, decoded.limited == nil, !decoded.codings.isEmpty, response.complete, !response.bodyTruncated, decoded.bytes.count > body.count {
                            wire = (body, coding)
                            if let memoKey {
                                let bytes = Data(decoded.bytes)
                                let decoding = Decoding(coding: coding, decoded: bytes)
                                decodings.keep(body, decoding, key: memoKey, valueBytes: bytes.count)
                                shared = decoding
                                reused = bytes
                            }
                        }
                        body = reused ?? Data(decoded.bytes)
                        oddities += decoded.oddities
                        if let limited = decoded.limited {
                            diagnostics.append(Diagnostic(.decodedBodyLimit, message: "response \(where_): \(limited)"))
                        }
                    }
                } catch {
                    diagnostics.append(Diagnostic(.contentDecodingFailed, message: "response \(where_): \(error.description); the body is kept as sent"))
                    if let oddity = error.oddity { oddities.append(oddity) }
                }
            }
            for oddity in oddities { diagnostics.append(Self.diagnostic(oddity, at: "response \(where_)")) }
            recordedResponse = RecordedResponse(
                status: response.head.status, statusText: response.head.reason, httpVersion: response.head.version,
                headers: response.head.headers, body: reused ?? body,
                encodedLength: response.bodyLength, bodyMissing: !response.complete && response.body.isEmpty && response.bodyLength > 0)
            if !response.complete {
                diagnostics.append(Diagnostic(.responseIncomplete, message: "response \(where_): " + response.problems.joined(separator: "; ")))
            }
            if response.bodyTruncated {
                diagnostics.append(Diagnostic(.responseBodyLimit, message: "response \(where_): body kept up to \(options.httpLimits.maxBodyBytes) of \(response.bodyLength) bytes (--max-body-bytes)"))
            }
        } else {
            diagnostics.append(Diagnostic(.noResponse, message: "request \(where_): no response in the capture"))
        }
        let startedAt = min(item.issuedAt ?? request.startTime, request.startTime)
        let exchange = Exchange(
            sequence: 0, startedAt: startedAt, duration: max(0, end - startedAt),
            connectionID: item.names.connection, serverAddress: item.names.server,
            request: consume recordedRequest, response: consume recordedResponse,
            evidenceGap: request.complete ? nil : .requestCut,
            responseStart: responseStartTime.map { max(0, $0 - startedAt) })
        return Collected(exchange: exchange, client: item.names.client, diagnostics: diagnostics, wireResponse: wire, decoding: shared)
    }
}
