import Foundation
import Testing
@testable import TrafficModel

@Suite("Secrets in request bodies")
struct BodySecretsTests {
    func request(_ type: String, _ body: String) -> RecordedRequest {
        RecordedRequest(method: "POST", url: "https://a.example/login", headers: [HeaderField("Content-Type", type), HeaderField("Content-Length", String(body.utf8.count))], body: Data(body.utf8))
    }

    @Test("a multipart field named for a secret loses its value, the other parts and the boundary stay, and Content-Length follows the body")
    func multipart() {
        let body = "--XyZ\r\nContent-Disposition: form-data; name=\"user\"\r\n\r\nann\r\n--XyZ\r\nContent-Disposition: form-data; name=\"otp_code\"\r\n\r\n493021\r\n--XyZ--\r\n"
        var r = request("multipart/form-data; boundary=XyZ", body)
        SecretNames.default.redactBodySecrets(&r)
        let text = String(decoding: r.body, as: UTF8.self)
        #expect(!text.contains("493021") && text.contains("name=\"user\"\r\n\r\nann\r\n") && text.contains("name=\"otp_code\"\r\n\r\n\(SecretNames.token(for: "493021"))\r\n--XyZ--"))
        #expect(r.headers.first("Content-Length") == String(r.body.count))
    }

    @Test("equal secrets get equal stand-ins that name their length; a body with no secret, or of another type, is left as it was")
    func identity() {
        var a = request("application/x-www-form-urlencoded", "password=same&x=1"), b = request("application/json", #"{"sessionId":"same","n":1}"#)
        SecretNames.default.redactBodySecrets(&a)
        SecretNames.default.redactBodySecrets(&b)
        let token = SecretNames.token(for: "same")
        #expect(token.hasPrefix("redacted-4-"))
        #expect(String(decoding: a.body, as: UTF8.self) == "password=\(token)&x=1" && String(decoding: b.body, as: UTF8.self).contains("\"sessionId\":\"\(token)\""))
        for (type, body) in [("application/x-www-form-urlencoded", "q=tea&page=2"), ("text/plain", "password=plain-text-is-not-parsed")] {
            var r = request(type, body)
            SecretNames.default.redactBodySecrets(&r)
            #expect(r.body == Data(body.utf8))
        }
    }
}
