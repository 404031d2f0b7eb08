import Findings
import Foundation
import Testing
import TrafficModel
@testable import Pipeline

@Suite("Observed runs: what reached serve, against the recording")
struct ObservedRunTests {
    /// A login POST answered by 302 to /home, then /home, then an API call with the cookie.
    static var recording: Recording {
        var exchanges = [
            Exchange(sequence: 0, startedAt: 0,
                     request: RecordedRequest(method: "POST", url: "https://shop.example.com/login", headers: [HeaderField("Content-Type", "application/x-www-form-urlencoded"), HeaderField("Sec-Fetch-Dest", "document"), HeaderField("Sec-Fetch-Mode", "navigate")], body: Data("user=alice".utf8)),
                     response: RecordedResponse(status: 302, headers: [HeaderField("Location", "/home"), HeaderField("Set-Cookie", "sid=1; Path=/")])),
            Exchange(sequence: 1, startedAt: 1,
                     request: RecordedRequest(method: "GET", url: "https://shop.example.com/home", headers: [HeaderField("Cookie", "sid=1"), HeaderField("Sec-Fetch-Dest", "document"), HeaderField("Sec-Fetch-Mode", "navigate")]),
                     response: RecordedResponse(status: 200, body: Data("home".utf8))),
            Exchange(sequence: 2, startedAt: 2,
                     request: RecordedRequest(method: "GET", url: "https://shop.example.com/api/me", headers: [HeaderField("Cookie", "sid=1")]),
                     response: RecordedResponse(status: 200)),
        ]
        ExchangeClassifier.classify(&exchanges)
        return Recording(name: "login", sourceFormat: "har", exchanges: exchanges)
    }

    static func arrival(_ sequence: Int, _ method: String, _ target: String, body: String = "", cookie: String? = nil) -> ObservedRun.Arrival {
        (matched: ObservedRun.Ref(recording: 0, sequence: sequence), method: method, headers: cookie.map { [HeaderField("Cookie", $0)] } ?? [], body: Data(body.utf8))
    }

    static func codes(_ arrivals: [ObservedRun.Arrival]) -> [String] {
        ObservedRun.build(recordings: [recording], arrivals: arrivals).flatMap(\.findings).map { "\($0.code.rawValue) #\($0.sequence)" }.sorted()
    }

    @Test("a client that sends everything as recorded gives no finding")
    func faithful() {
        #expect(Self.recording.exchanges[0].redirect?.next == 1)
        #expect(Self.codes([Self.arrival(0, "POST", "/login", body: "user=alice"), Self.arrival(1, "GET", "/home", cookie: "sid=1"), Self.arrival(2, "GET", "/api/me", cookie: "sid=1")]) == [])
    }

    @Test("a redirect hop not followed, a missing request, a lost body and a missing cookie each give their finding")
    func deviations() {
        let codes = Self.codes([Self.arrival(0, "POST", "/login")])
        #expect(codes == ["BODY_LOST #0", "REDIRECT_HIDDEN #0", "REQUEST_STALLED #2"])
        let cookies = Self.codes([Self.arrival(0, "POST", "/login", body: "user=alice"), Self.arrival(1, "GET", "/home"), Self.arrival(2, "GET", "/api/me", cookie: "sid=2")])
        #expect(cookies == ["COOKIE_MISSING #1", "COOKIE_STALE #2"])
    }

    @Test("a request the app's native code sent (NC1) is no page's: a browser on `serve` never asks for it, and that is no finding")
    func nativeRequestNotExpected() {
        var exchanges = Self.recording.exchanges
        exchanges.append(Exchange(sequence: 3, startedAt: 3,
            request: RecordedRequest(method: "GET", url: "https://shop.example.com/v1/messages", headers: [HeaderField("User-Agent", "ShopApp/3.1 CFNetwork/1568.100.1 Darwin/24.0.0")]),
            response: RecordedResponse(status: 200)))
        ExchangeClassifier.classify(&exchanges)
        #expect(exchanges[3].initiator == .native)
        let withNative = Recording(name: "login", sourceFormat: "har", exchanges: exchanges)
        let arrivals = [Self.arrival(0, "POST", "/login", body: "user=alice"), Self.arrival(1, "GET", "/home", cookie: "sid=1"), Self.arrival(2, "GET", "/api/me", cookie: "sid=1")]
        #expect(ObservedRun.build(recordings: [withNative], arrivals: arrivals).flatMap(\.findings).isEmpty)
    }
}
