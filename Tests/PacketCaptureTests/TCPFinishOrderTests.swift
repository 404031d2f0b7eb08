import Testing
@testable import PacketCapture

@Suite("The end of a capture closes its open connections in the order they opened")
struct TCPFinishOrderTests {
    /// What a reassembler told its sink of closes.
    struct Closes: TCPStreamSink {
        var closed: [(flow: TCPFlowID, reason: TCPCloseReason)] = []
        mutating func opened(_ flow: TCPFlowID, client: Endpoint, server: Endpoint, midStream: Bool, time: Double) {}
        mutating func established(_ flow: TCPFlowID, time: Double) {}
        mutating func data(_ flow: TCPFlowID, fromClient: Bool, _ bytes: UnsafeRawBufferPointer, time: Double) {}
        mutating func gap(_ flow: TCPFlowID, fromClient: Bool, length: Int, time: Double) {}
        mutating func closed(_ flow: TCPFlowID, reason: TCPCloseReason, time: Double) { closed.append((flow, reason)) }
    }

    @Test("forty connections left open, each a SYN from its own port, close oldest first")
    func oldestFirst() {
        var reassembler = TCPReassembler(sink: Closes())
        let server = Endpoint(address: IPAddress(v4: 10, 0, 0, 1), port: 80)
        // Ports in an order unlike the opening order, so that neither the ports nor a
        // dictionary's order can stand in for it.
        for k in 0..<40 {
            let client = Endpoint(address: IPAddress(v4: 10, 0, 0, 2), port: UInt16(50_000 + (k * 17) % 40))
            reassembler.add(TCPSegment(source: client, destination: server, sequence: UInt32(1_000 * k), acknowledgment: 0, flags: TCPSegment.syn, payload: UnsafeRawBufferPointer(start: nil, count: 0), time: Double(k)))
        }
        reassembler.finish()
        let closed = reassembler.sink.closed
        #expect(closed.count == 40)
        #expect(closed.map(\.flow) == closed.map(\.flow).sorted())
        #expect(closed.allSatisfy { $0.reason == .endOfCapture })
    }
}
