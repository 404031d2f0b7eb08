import Testing
@testable import Findings

@Suite("Finding details: kept as parts, rendered when shown")
struct FindingDetailTests {
    static let label = "The XHR POST shop.example/api/order"

    @Test("every form renders its sentence from its values", arguments: [
        (FindingDetail(.requestFailedNoSNI, [label, "https://203.0.113.9/a.png"]), "The XHR POST shop.example/api/order fails before any server answers: it goes to 203.0.113.9/a.png without SNI, and that IP serves several names"),
        (FindingDetail(.requestFailedCertificate, [label, "https://203.0.113.7/"]), "The XHR POST shop.example/api/order fails before any server answers: it goes to 203.0.113.7/, whose certificate names the host, not the IP"),
        (FindingDetail(.requestStalled, [label]), "The XHR POST shop.example/api/order is never sent"),
        (FindingDetail(.urlMutated, [label, "app://localhost/api/order?KKJSBridge-RequestId=1"]), "The XHR POST shop.example/api/order reaches the server as app://localhost/api/order?KKJSBridge-RequestId=1"),
        (FindingDetail(.headerLost, [label, "Origin"]), "The XHR POST shop.example/api/order reaches the server without the Origin header the page sent"),
        (FindingDetail(.headerAdded, [label, "X-Body"]), "The XHR POST shop.example/api/order reaches the server with a X-Body header the page did not send"),
        (FindingDetail(.preflightAdded, [label]), "The XHR POST shop.example/api/order now needs a CORS preflight (an extra OPTIONS request) because a custom header makes it non-simple"),
        (FindingDetail(.bodyTooLargeForHeader, [label, "3145728"]), "The XHR POST shop.example/api/order moves a 3145728-byte body into a header, more than anyone has measured to work"),
        (FindingDetail(.bodyStreamOnly, [label]), "The XHR POST shop.example/api/order hands its body to the scheme handler only as a stream; a handler that reads HTTPBody sees nothing"),
        (FindingDetail(.responseFromPackage, [label]), "The XHR POST shop.example/api/order is served the offline package's file, not what the server sent"),
        (FindingDetail(.responseMangled, [label]), "The XHR POST shop.example/api/order gets its binary response mangled by the JSON bridge"),
        (FindingDetail(.corsBlocked, [label, "the response carries no Access-Control-Allow-Origin"]), "The XHR POST shop.example/api/order is sent from the app's own origin, and the page may not read its response: the response carries no Access-Control-Allow-Origin"),
        (FindingDetail(.corsUnverified, [label, "check it"]), "The XHR POST shop.example/api/order is sent from the app's own origin; whether the page may read its response is not in the recording: check it"),
        (FindingDetail(.thirdPartyIntercepted, [label]), "The XHR POST shop.example/api/order belongs to a third-party site but goes through the app's interceptor"),
        (FindingDetail(.cookieCrossSiteAccepted, [label, "partner"]), "Before the XHR POST shop.example/api/order a script set the cookie partner for another site, and the native setter hook accepted it"),
        (FindingDetail(.redirectMethodChanged, [label, "307", "POST", "empty"]), "The XHR POST shop.example/api/order follows a 307 redirect that must keep its method and body, but is re-issued as POST with an empty body"),
        (FindingDetail(.redirectMethodChanged, [label, "308", "GET", "other"]), "The XHR POST shop.example/api/order follows a 308 redirect that must keep its method and body, but is re-issued as GET with another body"),
        (FindingDetail(.bodyLost, [label, "52"]), "The XHR POST shop.example/api/order reaches the server with an empty body (52 bytes recorded)"),
        (FindingDetail(.bodyLost, [label, "52", "the bridge does not cover it"]), "The XHR POST shop.example/api/order reaches the server with an empty body (52 bytes recorded), because the bridge does not cover it"),
        (FindingDetail(.bodyReencoded, [label, "60", "52"]), "The XHR POST shop.example/api/order reaches the server with the same fields in other bytes (60 bytes instead of 52)"),
        (FindingDetail(.bodyMutated, [label, "60", "52", "it is rebuilt"]), "The XHR POST shop.example/api/order reaches the server with a different body (60 bytes instead of 52), because it is rebuilt"),
        (FindingDetail(.redirectHiddenDocument, ["The document GET shop.example/", "https://shop.example/", "https://shop.example/home"]), "After the document GET shop.example/ the page stays at shop.example/ instead of following the redirect to shop.example/home"),
        (FindingDetail(.redirectHidden, [label, "https://cdn.example/a"]), "The XHR POST shop.example/api/order is redirected to cdn.example/a without the page knowing"),
        (FindingDetail(.cookieMissing, [label, "sid", "it was Set-Cookie on exchange 0 in NativeJar only"]), "The XHR POST shop.example/api/order is sent without the cookie sid, which the recording carried: it was Set-Cookie on exchange 0 in NativeJar only"),
        (FindingDetail(.redirectCookieLost, [label, "a", "why A", "b", "why B", "c", "why A"]), "The XHR POST shop.example/api/order is sent without 3 cookies a redirect response set and the recording carried (a, b, c): a, c: why A; b: why B"),
        (FindingDetail(.cookieExtra, [label, "a", "why", "b", "why"]), "The XHR POST shop.example/api/order carries 2 cookies the recording did not (a, b): why"),
        (FindingDetail(.cookieStale, [label, "ab", "written late"]), "The XHR POST shop.example/api/order carries an older value of the cookie ab: written late"),
        (FindingDetail(.jarDiverged, ["sid", "shop.example", "/", "native", "set late"]), "At the end of the flow only NativeJar holds the cookie sid (shop.example/) (set late)"),
        (FindingDetail(.jarDiverged, ["sid", "shop.example", "/", "both", "set late"]), "At the end of the flow NativeJar and WebJar hold different values of the cookie sid (shop.example/) (set late)"),
        (FindingDetail(.jarDiverged, ["a", "x.example", "/", "web", "w", "b", "x.example", "/p", "native", "n"]), "At the end of the flow NativeJar and WebJar disagree on 2 cookies: a (x.example/; only WebJar holds; w); b (x.example/p; only NativeJar holds; n)"),
        (FindingDetail(text: "Written whole."), "Written whole."),
    ])
    func renders(_ detail: FindingDetail, _ text: String) {
        #expect(detail.text == text)
    }

    @Test("every form has a case above, and a form's raw value reads back as the form")
    func everyForm() {
        #expect(FindingDetail.Form.allCases.count == 27)
        for form in FindingDetail.Form.allCases { #expect(FindingDetail.Form(rawValue: form.rawValue) == form) }
    }

    @Test("a grouped cookie sentence names eight cookies and counts the rest")
    func namedCookies() {
        let values = [Self.label] + (1...10).flatMap { ["c\($0)", "why"] }
        #expect(FindingDetail(.cookieMissing, values).text == "The XHR POST shop.example/api/order is sent without 10 cookies the recording carried (c1, c2, c3, c4, c5, c6, c7, c8 and 2 more): why")
    }

    @Test("redaction passes through every value of a finding's detail")
    func redaction() {
        var finding = Finding(code: .corsBlocked, severity: .error, preset: "p", recording: "r", sequence: 0, method: "GET", url: "https://a.example/?token=s3cret",
            subject: nil, rules: ["A1"], confidence: .measured, expected: [:], actual: [:], detail: FindingDetail(.urlMutated, ["The fetch GET a.example/?token=s3cret", "https://a.example/?token=s3cret&x=1"]))
        finding.mapText { $0.replacingOccurrences(of: "s3cret", with: "[redacted]") }
        #expect(!finding.detail.contains("s3cret") && finding.detail.contains("token=[redacted]"))
        #expect(!finding.message.contains("s3cret"))
    }
}
