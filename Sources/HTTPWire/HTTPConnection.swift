/// Both directions of one HTTP/1.x connection, pairing requests with responses in order
/// (RFC 9112 section 9.3: responses come in the order of the requests, pipelined or not).
///
/// Interim 1xx responses (100 Continue) are not paired; 101 pairs with its request and
/// ends the HTTP stream, as a 2xx answer to CONNECT does.
public struct HTTPConnection: Sendable {
    public struct Exchange: Sendable {
        /// Nil when the capture has a response whose request it missed (a mid-stream start).
        public var request: HTTPMessage?
        /// Nil when the request got no response before the stream ended.
        public var response: HTTPMessage?
        /// Interim responses (1xx) seen before the final one.
        public var interim: [Int] = []
    }

    public var requests: HTTPParser
    public var responses: HTTPParser
    /// Paired exchanges, in request order. The caller empties it.
    public var completed: [Exchange] = []

    var waitingRequests: [HTTPMessage] = []

    /// The connection has left HTTP/1.1: the server switched protocols (101, a CONNECT's
    /// 2xx), or the client did with nothing left to answer (the HTTP/2 preface, an upgrade
    /// the server declined). A client's Upgrade alone waits for the server's answer, so a
    /// WebSocket handshake pairs with its 101.
    public var leftHTTP: Bool {
        responses.isTunnel || (requests.isTunnel && waitingRequests.isEmpty && !requests.inMessage)
    }
    var waitingResponses: [HTTPMessage] = []
    var interim: [Int] = []

    public init(strictness: HTTPParser.Strictness = .tolerant, limits: HTTPLimits = .default, midStream: Bool = false) {
        requests = HTTPParser(kind: .request, strictness: strictness, limits: limits, midStream: midStream)
        responses = HTTPParser(kind: .response, strictness: strictness, limits: limits, midStream: midStream)
    }

    public mutating func clientData(_ bytes: UnsafeRawBufferPointer, time: Double) {
        requests.feed(bytes, time: time)
        collect()
    }

    public mutating func serverData(_ bytes: UnsafeRawBufferPointer, time: Double) {
        forwardMethods()
        responses.feed(bytes, time: time)
        collect()
    }

    public mutating func clientGap(_ length: Int, time: Double) {
        requests.gap(length, time: time)
        collect()
    }

    public mutating func serverGap(_ length: Int, time: Double) {
        responses.gap(length, time: time)
        collect()
    }

    /// The connection ended: delivers every message in progress and every request that
    /// got no answer.
    public mutating func finish(time: Double) {
        requests.finish(time: time)
        forwardMethods()
        responses.finish(time: time)
        collect()
        for request in waitingRequests { completed.append(Exchange(request: request, response: nil, interim: [])) }
        waitingRequests = []
        for response in waitingResponses { completed.append(Exchange(request: nil, response: response, interim: [])) }
        waitingResponses = []
    }

    /// The start of the earliest request on this connection not yet delivered in
    /// `completed`: one waiting for its response, or the one being read. A streaming
    /// importer orders exchanges by start time and may emit only those that began before it.
    public var earliestUndeliveredRequestStart: Double? {
        waitingRequests.first?.startTime ?? requests.currentStartTime
    }

    mutating func forwardMethods() {
        guard !requests.startedMethods.isEmpty else { return }
        for method in requests.startedMethods { responses.expectResponse(to: method) }
        requests.startedMethods.removeAll(keepingCapacity: true)
    }

    mutating func collect() {
        forwardMethods()
        if !requests.completed.isEmpty {
            if waitingRequests.isEmpty {
                swap(&waitingRequests, &requests.completed)
            } else {
                waitingRequests.append(contentsOf: requests.completed)
                requests.completed.removeAll(keepingCapacity: true)
            }
        }
        if !responses.completed.isEmpty {
            // Each message moved, not copied (a dozen references: its head, body and lists):
            // popped from the end of the reversed list, where a loop over it copied each.
            var arrived: [HTTPMessage] = []
            swap(&arrived, &responses.completed)
            // Through the buffer: the array's `reverse()` copies each message it moves.
            arrived.withUnsafeMutableBufferPointer { $0.reverse() }
            while let response = arrived.popLast() {
                let status = response.head.status
                if status >= 100, status < 200, status != 101 {
                    interim.append(status)
                    continue
                }
                waitingResponses.append(response)
            }
            swap(&arrived, &responses.completed)
        }
        pair()
    }

    /// Pairs the waiting messages, reading only the fields it decides on and moving each
    /// message into its exchange.
    mutating func pair() {
        while !waitingResponses.isEmpty {
            guard !waitingRequests.isEmpty else {
                // The request may still be arriving (an early answer such as 413): wait for it,
                // unless the client has nothing in progress and the response began first.
                if requests.inMessage { return }
                if waitingResponses[0].complete || responses.current == nil {
                    completed.append(Exchange(request: nil, response: waitingResponses.takeFirst(), interim: interim))
                    interim = []
                    continue
                }
                return
            }
            if waitingRequests[0].startTime > waitingResponses[0].startTime {
                // The response started before this request was sent: its own request was
                // before the capture began.
                completed.append(Exchange(request: nil, response: waitingResponses.takeFirst(), interim: interim))
                interim = []
                continue
            }
            completed.append(Exchange(request: waitingRequests.takeFirst(), response: waitingResponses.takeFirst(), interim: interim))
            interim = []
        }
    }
}

extension Array {
    /// The first element, moved out: `removeFirst` copies it before closing the gap, and a
    /// connection's queue usually holds one message, which `removeLast` moves.
    mutating func takeFirst() -> Element {
        count == 1 ? removeLast() : removeFirst()
    }
}
