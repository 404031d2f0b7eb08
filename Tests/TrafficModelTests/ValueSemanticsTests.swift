import Foundation
import Testing
import TrafficModel

/// An exchange keeps its fields behind one shared reference; it must still behave as a
/// value: a change to a copy never reaches the original, and it encodes as before.
@Suite("Exchange: a value, however its fields are kept")
struct ExchangeValueSemanticsTests {
    static func sample() -> Exchange {
        Exchange(
            sequence: 3, startedAt: 1_700_000_000, duration: 0.25,
            request: RecordedRequest(method: "POST", url: "https://shop.example/api/order?id=7", headers: [HeaderField("Content-Type", "application/json")], body: Data(#"{"sku":1}"#.utf8)),
            response: RecordedResponse(status: 302, headers: [HeaderField("Location", "/done")]),
            initiator: .xhr, bodyKind: .text)
    }

    @Test("a copy changed in any field leaves the original as it was")
    func copiesAreIndependent() {
        let original = Self.sample()
        var copy = original
        copy.initiator = .fetch
        copy.request.headers.append(HeaderField("X-Trace", "1"))
        copy.response.status = 200
        copy.sequence = 9
        #expect(original.initiator == .xhr)
        #expect(original.request.headers.count == 1)
        #expect(original.response.status == 302)
        #expect(original.sequence == 3)
        #expect(copy != original)
        var same = original
        same.duration = 0.25  // written, not changed
        #expect(same == original)
        #expect(same.hashValue == original.hashValue)
    }

    @Test("it encodes to the same JSON keys and decodes back equal")
    func codableRoundTrip() throws {
        let original = Self.sample()
        let data = try JSONEncoder().encode(original)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(object.keys).isSuperset(of: ["sequence", "startedAt", "duration", "request", "response", "initiator", "frame", "bodyKind"]))
        #expect(try JSONDecoder().decode(Exchange.self, from: data) == original)
    }
}
