import Foundation

/// Infers what the wire does not say: initiator, frame and body kind (docs/model.md,
/// "Request and body kinds"), and links redirect hops into chains. Every importer (HAR, pcap) runs this.
public enum ExchangeClassifier {
    /// Fills `initiator`, `frame`, `bodyKind` and `redirect` on every exchange, in place.
    /// `exchanges` must already be in time order with sequences 0..<n.
    /// Returns the recording-level diagnostics classification gives (`Stream.diagnostics`).
    @discardableResult
    /// `allNative`: a recording a tool that is no browser made (a REST client): every
    /// request is the tool's (NC1), whatever its headers say.
    public static func classify(_ exchanges: inout [Exchange], allNative: Bool = false) -> [Diagnostic] {
        var stream = Stream()
        for i in exchanges.indices {
            var traits = Traits(&exchanges[i])
            if allNative { traits.initiator = .native }
            for revision in stream.add(&exchanges[i], traits: traits) {
                revision.apply(to: &exchanges)
            }
        }
        return stream.diagnostics
    }

    // MARK: - Initiator

    /// First rule that matches wins (docs/model.md, "Request and body kinds").
    public static func initiator(of exchange: Exchange) -> Initiator {
        let request = exchange.request
        // The browser's own favicon fetch: its chrome, not the page's traffic. A web view
        // never makes it (NC1: compared with nothing).
        if isFavicon(exchange) { return .native }
        // 1. The exporter's `_resourceType`.
        if let type = exchange.resourceType?.asciiLowercased, let byType = initiator(resourceType: type, request: request) {
            return byType
        }
        let headers = InitiatorHeaders(request.headers)
        // 2. Sec-Fetch-Dest / Sec-Fetch-Mode.
        if let byDestination = initiator(fetchMetadata: headers, request: request) { return byDestination }
        // NC1, after the marks only engines send: a User-Agent that is no browser engine's
        // is the app's native code or another program. Every engine's, a web view's
        // included, starts "Mozilla/" (old Opera "Opera/"); NSURLSession's names the app
        // and CFNetwork.
        if headers.userAgentIsEngine == false { return .native }
        // A WebSocket's handshake asks to upgrade the connection (RFC 6455 section 4.1).
        if request.method == "GET", headers.upgrade?.caseInsensitiveEquals("websocket") == true { return .websocket }
        // NC1 again: every request a page makes carries an Accept (the Fetch standard
        // gives one to each that has none; XHR has sent "*/*" since the 2000s), and a
        // Referer or an Origin unless a policy withholds the Referer. An engine's request
        // with none of the three is the browser's own service: Chrome's autofill query in
        // pcap2har's github.pcap, its safe-browsing and sync calls.
        if headers.userAgentIsEngine != nil, headers.acceptIsDocument == nil, !headers.hasReferer, !headers.hasOrigin {
            return .native
        }
        if isEventSource(request) { return .eventSource }
        // 3. X-Requested-With and Purpose.
        if headers.requestedWithXHR { return .xhr }
        if headers.purposeIsPrefetch ?? headers.secPurposeIsPrefetch == true { return .prefetch }
        // 4. Accept: text/html, or what a browser of before 2012 sent for a document.
        if headers.acceptIsDocument == true {
            if request.method == "GET" { return .navigation }
            if isFormPost(request) { return sentByScript(request) ? .ajax : .formSubmission }
        }
        // 5. Path extension, else an ajax request of unknown API.
        if let byExtension = initiator(pathExtension: request, headers: headers) { return byExtension }
        // 6 to 8. A GET: what was loaded, by its answer's type, a JSONP call or the Accept.
        if request.method == "GET", let byLoad = initiator(loaded: exchange) { return byLoad }
        // 9. A GET to another origin than the page's (its Referer's) without an Origin was
        //    no XHR or fetch: a cross-origin XHR or fetch is a CORS request, and carries
        //    Origin in every engine that can send one. It is an element's no-cors load
        //    (a script, an image, a frame): no CORS, no bridge.
        if request.method == "GET", !headers.hasOrigin, isCrossOriginToReferer(request) { return .other }
        return .ajax
    }

    /// Rule 2: what Sec-Fetch-Dest and Sec-Fetch-Mode say; nil when they say nothing.
    @inline(__always) static func initiator(fetchMetadata headers: InitiatorHeaders, request: RecordedRequest) -> Initiator? {
        guard let dest = headers.fetchDest?.asciiLowercased else { return nil }
        let mode = headers.fetchMode?.asciiLowercased
        switch dest {
        case "document", "iframe", "frame":
            if mode == nil || mode == "navigate" { return isFormPost(request) ? .formSubmission : .navigation }
        case "empty":
            // No site for a request with no destination: the browser's own (its sync, an
            // extension's background fetch), not a page's, which always has one (NC1).
            if headers.fetchSite?.caseInsensitiveEquals("none") == true { return .native }
            // An ajax request; rule 3's X-Requested-With tells XHR from an unknown API,
            // and EventSource's own headers an EventSource (ES1).
            if mode == "cors" || mode == "same-origin" || mode == "no-cors" {
                if isEventSource(request) { return .eventSource }
                return headers.requestedWithXHR ? .xhr : .ajax
            }
        case "script", "worker", "sharedworker", "serviceworker": return .script
        case "style", "xslt": return .stylesheet
        case "image": return .image
        case "font": return .font
        case "audio", "video", "track": return .media
        case "report": return .beacon
        case "websocket": return .websocket
        default: break
        }
        return nil
    }

    /// Rule 5: what the path's extension names; nil when it names nothing.
    @inline(__always) static func initiator(pathExtension request: RecordedRequest, headers: InitiatorHeaders) -> Initiator? {
        // The last "." byte: an extension with any non-ASCII in it matches no case below,
        // so a dot a combining mark follows makes no difference.
        guard let path = request.target?.path.asciiLowercased, let dot = path.utf8.lastIndex(of: 0x2E), !path.utf8[dot...].contains(0x2F) else { return nil }
        switch path[path.utf8.index(after: dot)...] {
        case "js", "mjs": return .script
        // An XSLT stylesheet is fetched by the document's `<?xml-stylesheet?>`.
        case "css", "xsl", "xslt": return .stylesheet
        case "png", "jpg", "jpeg", "gif", "webp", "svg", "ico", "bmp", "avif": return .image
        case "woff", "woff2", "ttf", "otf", "eot": return .font
        case "mp4", "webm", "mp3", "m4a", "ogg", "wav", "m3u8", "ts", "mov": return .media
        // A page's path, unless the request asked for something else: every engine
        // since about 2012 and the older ones rule 4 knows send a document's Accept
        // with a navigation, so under another Accept (a script's `*/*`, an old Android
        // browser's `text/xml, text/html, ..., */*;q=0.8`) the rules below decide.
        case "html", "htm":
            if request.method != "GET" { return .ajax }
            if headers.acceptIsDocument != false { return .navigation }
        default: break
        }
        return nil
    }

    /// Rules 6 to 8, for a GET: what was loaded, by its answer's type, a JSONP call or the
    /// Accept an element sends; nil when none says.
    @inline(__always) static func initiator(loaded exchange: Exchange) -> Initiator? {
        // 6. A GET with no script marker whose answer is an image, a stylesheet, a script, a
        //    font or media was loaded by the element that shows it (an ad's `<img src=imgad?id=>`),
        //    not by an XHR: an ajax guess there would blame the JS bridge for what an image
        //    tag does. Old captures, without Sec-Fetch headers, need this most.
        if let type = exchange.response.headers.first("Content-Type")?.asciiLowercased {
            if type.hasPrefix("image/") { return .image }
            if type.hasPrefix("text/css") || type.hasPrefix("text/xsl") || type.hasPrefix("application/xslt+xml") { return .stylesheet }
            if type.hasPrefix("font/") || type.hasPrefix("application/font") { return .font }
            if type.hasPrefix("video/") || type.hasPrefix("audio/") { return .media }
            if type.containsBytes("javascript") || type.hasPrefix("text/ecmascript") { return .script }
        }
        // 7. JSONP: an answer that calls the function its query named (`?callback=cb`
        //    answered `cb({...})`) was loaded by a `<script src>`, whatever its Content-Type
        //    (Twitter's said application/json): no CORS, no XHR or fetch bridge.
        if isJSONPAnswer(exchange) { return .script }
        // 8. What the element asked for: browsers send an image's or a stylesheet's own
        //    Accept ("image/webp,*/*;q=0.8", "text/css,*/*;q=0.1"); XHR and fetch send "*/*"
        //    or what the script set.
        if let accept = exchange.request.headers.first("Accept")?.asciiLowercased {
            if accept.hasPrefix("image/") { return .image }
            if accept.hasPrefix("text/css") { return .stylesheet }
        }
        return nil
    }

    /// Whether a response is an HTML document: its Content-Type says so, or, without one,
    /// its body starts with `<`.
    static func isHTML(_ response: RecordedResponse) -> Bool {
        if let type = response.headers.first("Content-Type") { return type.asciiLowercased.contains("html") }
        return response.body.first == UInt8(ascii: "<")
    }

    /// A GET for an icon (`.ico`, or answered as one): the browser's favicon.
    /// Read in place: it is asked of every exchange.
    static func isFavicon(_ exchange: Exchange) -> Bool {
        guard exchange.request.method == "GET", let target = exchange.request.target else { return false }
        let path = target.path.utf8
        if path.count >= 4, path.suffix(4).elementsEqual(".ico".utf8, by: { $0 | 0x20 == $1 }) { return true }
        return exchange.response.headers.firstValue("Content-Type") { type in
            type.hasCaseInsensitivePrefix("image/x-icon") || type.hasCaseInsensitivePrefix("image/vnd.microsoft.icon")
        } ?? false
    }

    /// The request's origin differs from its Referer's.
    static func isCrossOriginToReferer(_ request: RecordedRequest) -> Bool {
        guard let from = request.refererTarget, let to = request.target else { return false }
        return !from.hasSameOrigin(as: to)
    }

    /// What `initiator(of:)` reads of the request's headers, each from the first field of
    /// its name, found in one pass over the list's bytes: a dozen lookups by name, each a
    /// scan of every field, were half of what telling a captured exchange's initiator cost.
    /// The short tokens are kept as text (strings of 15 bytes or fewer are made without an
    /// allocation); of the long values, only what the rules ask.
    struct InitiatorHeaders {
        var fetchDest, fetchMode, fetchSite, upgrade: String?
        var requestedWithXHR = false
        /// Nil without a User-Agent; else whether it is a browser engine's.
        var userAgentIsEngine: Bool?
        /// Nil without an Accept; else whether it is a document's.
        var acceptIsDocument: Bool?
        var hasReferer = false, hasOrigin = false
        /// Purpose's, else Sec-Purpose's, value starts "prefetch".
        var purposeIsPrefetch: Bool?, secPurposeIsPrefetch: Bool?

        init(_ fields: HeaderList) {
            // A field of each name is read once, the first: its bit in `seen`.
            var seen: UInt16 = 0
            fields.forEach { name, value in
                guard let slot = Self.slot(of: name), seen & (1 << slot) == 0 else { return }
                seen |= 1 << slot
                switch slot {
                case 0: acceptIsDocument = ExchangeClassifier.isDocumentAccept(value)
                case 1: hasOrigin = true
                case 2: hasReferer = true
                case 3: upgrade = String(decoding: value, as: UTF8.self)
                case 4: purposeIsPrefetch = value.hasCaseInsensitivePrefix("prefetch")
                case 5: userAgentIsEngine = ExchangeClassifier.isEngineUserAgent(value)
                case 6: secPurposeIsPrefetch = value.hasCaseInsensitivePrefix("prefetch")
                case 7: fetchDest = String(decoding: value, as: UTF8.self)
                case 8: fetchMode = String(decoding: value, as: UTF8.self)
                case 9: fetchSite = String(decoding: value, as: UTF8.self)
                default: requestedWithXHR = value.equalsCaseInsensitive("xmlhttprequest")
                }
            }
        }

        /// Which of the read headers a field name is, nil for the others; most are ruled
        /// out by their length.
        static func slot(of name: UnsafeBufferPointer<UInt8>) -> UInt16? {
            switch name.count {
            case 6: return name.equalsCaseInsensitive("accept") ? 0 : name.equalsCaseInsensitive("origin") ? 1 : nil
            case 7: return name.equalsCaseInsensitive("referer") ? 2 : name.equalsCaseInsensitive("upgrade") ? 3 : name.equalsCaseInsensitive("purpose") ? 4 : nil
            case 10: return name.equalsCaseInsensitive("user-agent") ? 5 : nil
            case 11: return name.equalsCaseInsensitive("sec-purpose") ? 6 : nil
            case 14:
                return name.equalsCaseInsensitive("sec-fetch-dest") ? 7 : name.equalsCaseInsensitive("sec-fetch-mode") ? 8 : name.equalsCaseInsensitive("sec-fetch-site") ? 9 : nil
            case 16: return name.equalsCaseInsensitive("x-requested-with") ? 10 : nil
            default: return nil
            }
        }
    }

    /// Whether the response body calls, as its first statement, a function named by one of
    /// the query's values: JSONP. An optional `/**/` before it, as many servers write.
    static func isJSONPAnswer(_ exchange: Exchange) -> Bool {
        guard let query = exchange.request.target?.query, !query.isEmpty, !exchange.response.body.isEmpty else { return false }
        return exchange.response.body.prefix(512).withUnsafeBytes { raw -> Bool in
            var body = raw.bindMemory(to: UInt8.self)[...]
            func skipSpace() { while let b = body.first, b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D { body = body.dropFirst() } }
            skipSpace()
            if body.starts(with: "/**/".utf8) { body = body.dropFirst(4); skipSpace() }
            for pair in query.utf8.split(separator: UInt8(ascii: "&")) {
                guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { continue }
                let name = pair[pair.index(after: equals)...]
                // A JavaScript name, dotted or not, not a number.
                guard (1...128).contains(name.count), let first = name.first, !(0x30...0x39).contains(first),
                    name.allSatisfy({ b in (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) || b == 0x5F || b == 0x24 || b == 0x2E })
                else { continue }
                guard body.starts(with: name) else { continue }
                var rest = body.dropFirst(name.count)
                while let b = rest.first, b == 0x20 || b == 0x09 { rest = rest.dropFirst() }
                if rest.first == UInt8(ascii: "(") { return true }
            }
            return false
        }
    }

    /// Whether a request is an engine's CORS preflight: OPTIONS naming the method to come.
    /// A script's or a CORS-mode load's request (not a document's) whose `Origin` names
    /// another origin than the request's own, sent without a Cookie header (E6).
    public static func omittedCredentials(_ exchange: Exchange) -> Bool {
        guard !exchange.initiator.isDocument, exchange.initiator != .native, let target = exchange.request.target else { return false }
        let headers = exchange.request.headers
        // The Cookie looked up in place (a page's carries many cookies), the Origin read
        // only when there is none.
        guard headers.firstValue("Cookie", { _ in true }) == nil, let origin = headers.first("Origin")?.trimmingOWS, !origin.isEmpty else { return false }
        return origin.lowercased() != target.origin.lowercased()
    }

    public static func isPreflight(_ request: RecordedRequest) -> Bool {
        request.method == "OPTIONS" && request.headers.first("Access-Control-Request-Method") != nil
    }

    /// Whether a request is an `EventSource`'s (ES1): a GET with exactly the headers
    /// engines give it (WebKit's and Chromium's EventSource: `Accept: text/event-stream`
    /// and `Cache-Control: no-cache`, `Last-Event-ID` on a reconnection) and no script
    /// marker. A fetch-based event-stream library sends the Accept alone.
    static func isEventSource(_ request: RecordedRequest) -> Bool {
        let headers = request.headers
        guard request.method == "GET", request.bodyFingerprint.isEmpty,
            headers.firstValue("Accept", { $0.owsTrimmedBytes.equalsCaseInsensitive("text/event-stream") }) == true,
            !headers.contains("X-Requested-With")
        else { return false }
        return headers.firstValue("Cache-Control", { $0.owsTrimmedBytes.equalsCaseInsensitive("no-cache") }) == true || headers.contains("Last-Event-ID")
    }

    /// Whether a User-Agent is a browser engine's: "Mozilla/..." (every engine and web
    /// view since the 1990s, wherever the app appends its own name) or "Opera/..." (Presto).
    /// An empty value says nothing.
    static func isEngineUserAgent(_ agent: UnsafeBufferPointer<UInt8>) -> Bool {
        let bytes = UnsafeBufferPointer(rebasing: agent[agent.owsTrimmed(0..<agent.count)])
        if bytes.isEmpty || bytes.containsBytes("Mozilla/") { return true }
        return bytes.hasBytePrefix("Opera/") || bytes.hasBytePrefix("Opera ")
    }

    static func initiator(resourceType: String, request: RecordedRequest) -> Initiator? {
        switch resourceType {
        case "document", "main_frame", "sub_frame", "iframe": return isFormPost(request) ? .formSubmission : .navigation
        case "xhr", "xmlhttprequest": return .xhr
        case "fetch": return .fetch
        case "ping", "beacon", "csp_violation_report": return .beacon
        case "script": return .script
        case "stylesheet": return .stylesheet
        case "image", "imageset": return .image
        case "font": return .font
        case "media": return .media
        case "prefetch": return .prefetch
        case "websocket": return .websocket
        case "eventsource": return .eventSource
        default: return nil  // "other", "manifest"...: fall through to the headers.
        }
    }

    /// What a form's submission never carries but a script's request may: a header of the
    /// page's own (`X-IsAJAXForm`; not the `X-Forwarded-*` a proxy adds), or a charset on a
    /// URL-encoded or plain-text body (the browser sends a form's type bare; jQuery and
    /// Firefox's XHR add `;charset=UTF-8`). An old browser's XHR sent a document's Accept.
    static func sentByScript(_ request: RecordedRequest) -> Bool {
        var scripted = false
        request.headers.forEach { name, value in
            if name.hasCaseInsensitivePrefix("x-") && !name.hasCaseInsensitivePrefix("x-forwarded-") && !name.equalsCaseInsensitive("x-real-ip") { scripted = true }
            if name.equalsCaseInsensitive("content-type"), !value.hasCaseInsensitivePrefix("multipart/"), value.containsCaseInsensitive("charset=") { scripted = true }
        }
        return scripted
    }

    static func isFormPost(_ request: RecordedRequest) -> Bool {
        guard request.method == "POST" else { return false }
        return request.headers.firstValue("Content-Type") { type in
            type.hasCaseInsensitivePrefix("application/x-www-form-urlencoded") || type.hasCaseInsensitivePrefix("multipart/form-data") || type.hasCaseInsensitivePrefix("text/plain")
        } ?? false
    }

    // MARK: - Body kind

    /// What JavaScript passed to `send`/`fetch` (docs/model.md, "Request and body kinds").
    public static func bodyKind(of request: RecordedRequest) -> BodyKind {
        guard !request.body.isEmpty else { return .none }
        // The Content-Type read in place; none reads as an empty one.
        enum Said { case multipart, urlEncoded, binary, text, unknown }
        let said = request.headers.firstValue("Content-Type") { type -> Said in
            if type.hasCaseInsensitivePrefix("multipart/form-data") { return .multipart }
            if type.hasCaseInsensitivePrefix("application/x-www-form-urlencoded") { return .urlEncoded }
            if isBinaryType(type) { return .binary }
            if type.hasCaseInsensitivePrefix("text/") || type.containsCaseInsensitive("json") || type.containsCaseInsensitive("xml") { return .text }
            return .unknown
        } ?? .unknown
        switch said {
        case .multipart: return multipartHasFile(request.body) ? .formDataWithFile : .formData
        case .urlEncoded: return .urlEncoded
        case .binary: return .binary
        case .text: return .text
        case .unknown: return String(validatingUTF8: request.body) == nil ? .binary : .text
        }
    }

    /// Content types whose bodies are bytes, not text, by prefix.
    static func isBinaryType(_ type: UnsafeBufferPointer<UInt8>) -> Bool {
        type.hasCaseInsensitivePrefix("application/octet-stream") || type.hasCaseInsensitivePrefix("image/") || type.hasCaseInsensitivePrefix("audio/")
            || type.hasCaseInsensitivePrefix("video/") || type.hasCaseInsensitivePrefix("application/zip") || type.hasCaseInsensitivePrefix("application/x-protobuf")
            || type.hasCaseInsensitivePrefix("application/protobuf") || type.hasCaseInsensitivePrefix("application/vnd.google.protobuf")
            || type.hasCaseInsensitivePrefix("application/pdf") || type.hasCaseInsensitivePrefix("application/gzip")
    }

    /// Whether any part header of a multipart body has `filename=`.
    static func multipartHasFile(_ body: Data) -> Bool {
        // Part headers are ASCII; a file part says `Content-Disposition: form-data; name="x"; filename="y"`.
        let needle = Array("filename=".utf8)
        let bytes = [UInt8](body)
        guard bytes.count >= needle.count else { return false }
        var i = 0
        while i <= bytes.count - needle.count {
            var match = true
            for j in 0..<needle.count {
                let b = bytes[i + j]
                let lower = (b >= 65 && b <= 90) ? b | 0x20 : b
                if lower != needle[j] { match = false; break }
            }
            if match { return true }
            i += 1
        }
        return false
    }

    /// Rule 4's Accept of a document load: one that starts with `text/html` (every browser
    /// since about 2012), and the document Accept values of older engines a capture from
    /// then holds: WebKit before 2011 (Safari 3-5, Chrome before 10, Android 2's browser)
    /// sent `application/xml,application/xhtml+xml,text/html;q=0.9,...`, Gecko before
    /// Firefox 3 (Mozilla 1.x, Firefox 1 and 2) the same after `text/xml,`, and Internet
    /// Explorer 7 and 8 a list of image and `application/x-ms-application` types. No
    /// script's request sends these by default. Android 2's browser asks for an image with
    /// `text/xml, text/html, application/xhtml+xml, image/png, ...`, so naming those types
    /// is not enough.
    static func isDocumentAccept(_ value: UnsafeBufferPointer<UInt8>) -> Bool {
        value.hasCaseInsensitivePrefix("text/html") || value.hasCaseInsensitivePrefix("application/xml,application/xhtml+xml,text/html")
            || value.hasCaseInsensitivePrefix("text/xml,application/xml,application/xhtml+xml,text/html") || value.containsCaseInsensitive("application/x-ms-application")
    }

    /// URL comparison that ignores the fragment and the default port.
    static func normalize(_ url: String) -> String {
        normalize(RequestTarget(url), else: url)
    }

    /// `normalize` of a request's URL, from the target it already holds.
    static func normalize(_ request: RecordedRequest) -> String {
        normalize(request.target, else: request.url)
    }

    /// `normalize` of a parsed URL; `url` itself when it did not parse.
    static func normalize(_ target: RequestTarget?, else url: String) -> String {
        guard let t = target else { return url }
        return t.origin + t.pathAndQuery
    }

    static func site(of exchange: Exchange) -> String? {
        exchange.request.target.map { Site.of(host: $0.host) }
    }

    /// What classification reads from one exchange alone: worked out where exchanges are
    /// built, on every core, so that the thread that orders them does only what needs the
    /// exchanges before. Working it out sets the exchange's body kind, which needs the
    /// request body: it comes before the body is detached for a streaming import.
    public struct Traits: Sendable {
        /// The initiator the exchange itself tells (`initiator(of:)`); a redirect chain's
        /// may override it.
        public var initiator: Initiator
        /// The registrable domain of the request's host, nil when its URL does not parse.
        public var site: String?
        /// `Sec-Fetch-Dest`, lowercased.
        public var destination: String?
        /// A document's inline script calls, read while its body is at hand (a capture
        /// import detaches bodies before classifying).
        var pageCalls: PageScriptCalls?

        public init(_ exchange: inout Exchange) {
            if !exchange.request.bodyDetached { exchange.bodyKind = ExchangeClassifier.bodyKind(of: exchange.request) }
            initiator = ExchangeClassifier.initiator(of: exchange)
            site = ExchangeClassifier.site(of: exchange)
            destination = exchange.request.headers.first("Sec-Fetch-Dest")?.asciiLowercased
            if initiator.isDocument, !exchange.response.isRedirect, ExchangeClassifier.isHTML(exchange.response) {
                let calls = PageScriptCalls(html: exchange.response.body, url: exchange.request.url)
                pageCalls = calls.isEmpty ? nil : calls
            }
        }
    }


    // MARK: - One exchange at a time

    /// The classifier for exchanges that arrive one at a time in time order, as a streaming
    /// import delivers them (docs/model.md, "Request and body kinds": initiator, body kind, frame, redirect
    /// chains): memory holds the redirects still waiting for their target and the iframe
    /// documents, never the exchanges.
    ///
    /// `add` settles an exchange's initiator, body kind, frame and redirect membership at
    /// once, but three facts are only known later; each comes back as a `Revision` of an
    /// exchange already added:
    /// - a 3xx learns its `redirect.next` when the request for its Location arrives;
    /// - the top-level site is the first main-frame document's site (`Recording.topLevelSite`);
    ///   until one arrives the site of the page the first exchange from the web view names
    ///   (its Referer or Origin), else that exchange's own site, stands in, and
    ///   the exchanges before the document are revised against the document's site. From
    ///   then on it follows the main frame: that document's redirect hops, and each document
    ///   the engine names top-level (`Sec-Fetch-Dest: document`), move it for what follows;
    /// - a document without Sec-Fetch-Dest is the main frame's until the page before it and
    ///   then the document itself go on loading side by side, or the page goes on loading
    ///   past a document nothing named as its page (`followMainFrame`): it, and the
    ///   requests it referred, were an iframe's.
    ///
    /// Exchanges come in as imported, without redirect links or frames of their own. The
    /// result is the same as classifying the whole list at once: each 3xx is followed by
    /// the first later unclaimed request for its Location (with the method when 307/308 keep
    /// it), earlier 3xx first; a redirect target inherits the chain's initiator and frame.
    public struct Stream: Sendable {
        public enum Revision: Sendable, Hashable {
            /// The 3xx at `sequence` was followed by the request at `next`.
            case redirectNext(sequence: Int, next: Int)
            /// The top-level site is `site`: exchanges before `before` are third party when
            /// their site differs from it.
            case topSite(String?, before: Int)
            /// The exchanges at `sequences` were an iframe's: a document read as the main
            /// frame's next page, whose page went on loading, and the requests it referred.
            case iframe(sequences: [Int])

            /// Applies the revision to exchanges held in memory.
            public func apply(to exchanges: inout [Exchange]) {
                switch self {
                case .redirectNext(let sequence, let next):
                    exchanges[sequence].redirect?.next = next
                case .topSite(let top, let before):
                    for k in 0..<before {
                        exchanges[k].frame.thirdParty = Stream.isThirdParty(ExchangeClassifier.site(of: exchanges[k]), top: top)
                    }
                case .iframe(let sequences):
                    for k in sequences { exchanges[k].frame.kind = .iframe }
                }
            }
        }

        /// A 3xx whose Location has not been requested yet.
        struct Awaiting: Sendable {
            var sequence: Int
            /// 307 and 308 keep the method: only a request with it follows.
            var method: String?
            var chainStart: Int
            var hop: Int
            var chainInitiator: Initiator
            var chainFrame: Frame.Kind
            /// The Location's path, nil when it did not parse (`awaitingPaths`).
            var path: String?
        }

        /// Waiting 3xx by the normalised URL of their Location, oldest first.
        var awaiting: [String: [Awaiting]] = [:]
        /// How many waiting 3xx each Location path has, and how many Locations did not
        /// parse: a request whose path none waits for is no redirect target, and its
        /// normalised URL need not be built.
        var awaitingPaths: [String: Int] = [:]
        var awaitingUnparsed = 0
        var iframeDocuments = Set<String>()
        /// A document the main frame loaded, as far as the requests after it tell: the URL
        /// they refer to it by (its last hop's), its exchanges, when it ended, and the
        /// requests that referred to it.
        struct MainDocument: Sendable {
            var url: String
            var sequences: [Int]
            /// When its load (the first hop of its chain) started.
            var startedAt: Double
            var endedAt: Double
            var referrers: [Int] = []
            /// The engine said what loaded it (Sec-Fetch-Dest or the exporter's resource
            /// type): a main frame's document for certain, never revised to an iframe's.
            var destinationNamed = false
            /// The page whose Referer it carried, normalized.
            var referer: String? = nil
            /// Whether a Referer names this document. Some browsers (Android 2's) send the
            /// document's `%20` as spaces: a Referer with a space is compared decoded.
            func isReferred(by from: String, decoded fromDecoded: inout String?) -> Bool {
                if url == from { return true }
                guard from.containsByte(0x20) else { return false }
                if fromDecoded == nil { fromDecoded = from.removingPercentEncoding ?? from }
                return (url.removingPercentEncoding ?? url) == fromDecoded
            }
        }
        /// The main frame's documents, latest last (`followMainFrame`).
        var pages: [MainDocument] = []
        /// Documents read as the main frame's that an earlier page went on loading past.
        var suspects: [MainDocument] = []
        /// The page that last loaded documents at once (iframes), and until when the last
        /// of them was in flight.
        var framesLoading: (referer: String, until: Double)?
        /// The calls the current main-frame document's inline script makes.
        var pageCalls: PageScriptCalls?
        /// Documents of either list kept, and requests remembered as referred by each.
        static let documentsKept = 8
        static let referrersKept = 4096
        /// The site exchanges are compared with for `thirdParty`.
        public private(set) var topSite: String?
        /// A document has settled `topSite`.
        var topSiteSettled = false
        /// The recorder keeps `Origin`: an earlier request carried one.
        var recordsOrigin = false
        /// The first exchange from the web view has stood in for the document's site.
        var topSiteGuessed = false
        /// The first hop of the main-frame document load that set `topSite`.
        var topSiteChain: Int?
        /// The last Referer normalized, and its normalized form: a page's requests name the
        /// same page one after another, and parsing it again for each was a third of
        /// following the main frame.
        var lastReferer: (raw: String, normalized: String)?
        /// Exchanges added so far.
        public private(set) var count = 0
        /// Exchanges classified native (NC1), and the first few User-Agents among them.
        public private(set) var nativeCount = 0
        /// Requests read as https that were recorded as http (`TerminatedTLS`).
        var terminated = TerminatedTLS()
        /// Responses the recording browser had cached: 304s, and those its cache served (E3).
        var notModified = 0, fromCache = 0
        var nativeAgents: [String] = []

        /// What classification tells of the recording as a whole: how many of its requests
        /// no browser engine sent (NC1), and whether any request is left for a web view.
        public var diagnostics: [Diagnostic] {
            var tls = terminated.diagnostic.map { [$0] } ?? []
            if notModified + fromCache > 0 {
                let parts = [notModified > 0 ? "\(notModified) answered 304 Not Modified" : nil, fromCache > 0 ? "\(fromCache) served from the browser's cache" : nil].compactMap { $0 }
                tls.append(Diagnostic(.warmCache, message: "recorded with a warm cache: of \(count) request(s), \(parts.joined(separator: " and ")); the recording holds no body for them, so `serve` gives a fresh client none"))
            }
            guard nativeCount > 0 else { return tls }
            let agents = nativeAgents.map { "`\($0)`" }.joined(separator: ", ")
            let pinning = "a web view whose User-Agent does not start with Mozilla/ needs a scenario sidecar that pins its requests' initiators"
            if nativeCount == count {
                return tls + [Diagnostic(.noPageRequests, message: "none of the \(count) request(s) came from a page (User-Agent \(agents)): each is replayed outside the web view and compared with nothing (NC1); \(pinning)")]
            }
            return tls + [Diagnostic(.nativeRequests, message: "\(nativeCount) of \(count) request(s) were not a page's (User-Agent \(agents)): the app's native code, a tool or the browser itself sent them; they are replayed outside the web view and compared with nothing (NC1)")]
        }

        public init() {}

        /// The number of 3xx responses still waiting for the request of their Location.
        public var awaitingRedirects: Int { awaiting.values.reduce(0) { $0 + $1.count } }

        public static func isThirdParty(_ site: String?, top: String?) -> Bool {
            top != nil && site != nil && site != top
        }

        /// Classifies the next exchange (its `sequence` must be the number added before it)
        /// and returns what it changes about earlier ones. `traits`: the exchange's own,
        /// when the importer worked them out already (and with them its body kind).
        public mutating func add(_ exchange: inout Exchange, traits: Traits? = nil) -> [Revision] {
            let sequence = count
            count += 1
            var revisions: [Revision] = []
            let inputFrame = exchange.frame.kind
            let traits = traits ?? Traits(&exchange)
            exchange.initiator = traits.initiator
            _ = terminated.upgrade(&exchange)
            if exchange.response.status == 304 { notModified += 1 } else if exchange.evidenceGap == .fromCache { fromCache += 1 }

            let claimedBy = claimRedirect(&exchange, sequence: sequence, revisions: &revisions)

            if exchange.initiator == .native { countNative(exchange) }
            // E5: the engine's CORS preflight carries no cookies, whatever the jar holds.
            if exchange.evidenceGap == nil, ExchangeClassifier.isPreflight(exchange.request) { exchange.evidenceGap = .corsPreflight }
            // E6: a CORS-mode request to another origin that carried no cookie at all.
            if exchange.evidenceGap == nil, ExchangeClassifier.omittedCredentials(exchange) { exchange.evidenceGap = .credentialsOmitted }

            // The frame: an iframe document, a request an iframe document referred, or the
            // frame of the chain a redirect target belongs to.
            var kind = Frame.Kind.main
            let dest = traits.destination
            if dest == "iframe" || dest == "frame" || exchange.resourceType?.asciiLowercased == "sub_frame" {
                kind = .iframe
                iframeDocuments.insert(ExchangeClassifier.normalize(exchange.request))
            } else if !iframeDocuments.isEmpty, let referer = exchange.request.headers.firstValue("Referer", { normalizedReferer($0) }), iframeDocuments.contains(referer) {
                kind = .iframe
            } else if let claimedBy {
                kind = claimedBy.chainFrame
            }

            let site = traits.site
            followTopSite(exchange, site: site, sequence: sequence, inputFrame: inputFrame, frame: kind, destination: dest, chainStart: claimedBy?.chainStart, revisions: &revisions)
            exchange.frame = Frame(kind: kind, thirdParty: Self.isThirdParty(site, top: topSite))
            // Rule 9 without a Referer: a script's request to another site than the page's
            // is a CORS request and carries Origin in every engine that sends one; where the
            // recorder kept Origin on earlier requests, one to another site without it was
            // an element's no-cors load (a JSONP script in an ad's frame), no XHR or fetch.
            let hasOrigin = exchange.request.headers.first("Origin") != nil
            if exchange.initiator == .ajax, recordsOrigin, !hasOrigin, exchange.frame.thirdParty, exchange.request.method == "GET" {
                exchange.initiator = .other
            }
            if hasOrigin { recordsOrigin = true }
            if kind == .main && exchange.initiator != .native {
                revisions += followMainFrame(&exchange, sequence: sequence, chainStart: claimedBy?.chainStart)
                kind = exchange.frame.kind
            }
            readPageScript(&exchange, frame: kind, traits: traits)

            // A 3xx waits for the request of its Location.
            if exchange.response.isRedirect, let location = exchange.response.location,
                let target = RequestTarget.resolve(location, against: exchange.request.url)
            {
                let start = exchange.redirect?.chainStart ?? sequence
                let hop = exchange.redirect?.hop ?? 0
                exchange.redirect = RedirectLink(chainStart: start, hop: hop, next: nil)
                let parsed = RequestTarget(target)
                let waiting = Awaiting(
                    sequence: sequence, method: exchange.response.preservesMethod ? exchange.request.method : nil,
                    chainStart: start, hop: hop,
                    chainInitiator: claimedBy?.chainInitiator ?? exchange.initiator,
                    chainFrame: claimedBy?.chainFrame ?? kind, path: parsed?.path)
                awaiting[ExchangeClassifier.normalize(parsed, else: target), default: []].append(waiting)
                countAwaiting(at: parsed?.path, by: 1)
            }
            return revisions
        }

        /// A redirect target: the first waiting 3xx for this URL whose method fits claims it;
        /// the exchange joins its chain, and the 3xx learns what came next.
        @inline(__always) mutating func claimRedirect(_ exchange: inout Exchange, sequence: Int, revisions: inout [Revision]) -> Awaiting? {
            guard !awaiting.isEmpty, mayBeAwaited(exchange.request) else { return nil }
            let key = ExchangeClassifier.normalize(exchange.request)
            guard var list = awaiting[key], let k = list.firstIndex(where: { $0.method == nil || $0.method == exchange.request.method }) else { return nil }
            let from = list.remove(at: k)
            awaiting[key] = list.isEmpty ? nil : list
            countAwaiting(at: from.path, by: -1)
            exchange.redirect = RedirectLink(chainStart: from.chainStart, hop: from.hop + 1, next: nil)
            exchange.initiator = from.chainInitiator == .formSubmission ? .navigation : from.chainInitiator
            revisions.append(.redirectNext(sequence: from.sequence, next: sequence))
            return from
        }

        /// The top-level page's site: guessed from the first page request, settled by the
        /// first main-frame document, moved on by a later one the engine names top-level.
        @inline(__always) mutating func followTopSite(
            _ exchange: borrowing Exchange, site: String?, sequence: Int, inputFrame: Frame.Kind, frame kind: Frame.Kind, destination dest: String?, chainStart: Int?, revisions: inout [Revision]
        ) {
            // The app's native requests (NC1) say nothing of the page's site.
            if !topSiteSettled && exchange.initiator != .native {
                if !topSiteGuessed {
                    topSite = exchange.request.issuingPage.map { Site.of(host: $0.host) } ?? site
                    topSiteGuessed = true
                }
                if exchange.initiator.isDocument && inputFrame == .main {
                    topSiteSettled = true
                    if sequence > 0 && site != topSite { revisions.append(.topSite(site, before: sequence)) }
                    topSite = site
                    topSiteChain = chainStart ?? sequence
                }
            } else if topSiteSettled, site != nil, exchange.initiator.isDocument, inputFrame == .main, kind == .main {
                // The main frame moved on: by a redirect of the document that set the top
                // site (a sign-in page's 302 to the app), or to a document the engine names
                // as the top-level one. A document without Sec-Fetch-Dest may be an ad's
                // iframe read as the main frame's, so it does not move the top site.
                let start = chainStart ?? sequence
                if start == topSiteChain || dest == "document" {
                    topSite = site
                    topSiteChain = start
                }
            }
        }

        /// A main-frame document's inline script names the API of its calls
        /// (`PageScriptCalls`); a request of that page whose API the headers left unknown
        /// takes the one named for its URL.
        mutating func readPageScript(_ exchange: inout Exchange, frame: Frame.Kind, traits: Traits) {
            if exchange.initiator.isDocument, frame == .main, !exchange.response.isRedirect {
                pageCalls = traits.pageCalls
            } else if exchange.initiator == .ajax, let calls = pageCalls, let target = exchange.request.target, let api = calls.api(for: target) {
                exchange.initiator = api
            }
        }

        /// How long after a document ended a request from the page before it shows that page
        /// still loading: past the old page's unload, whose beacons and pings go out as the
        /// next document arrives.
        static let pageGoneAfter = 0.5

        /// The least time between a page's navigation to another and its return (a back
        /// navigation restoring it from the back-forward cache): the new page must be shown
        /// and the person act. An earlier page loading again sooner never left.
        static let backNavigationTakes = 1.5

        /// Follows the main frame's documents. Without Sec-Fetch-Dest (older browsers and
        /// captures, cache hits) an iframe's document reads as the main frame's next page.
        /// A request from an earlier page, well after that document ended, shows that page
        /// still loading. A document no request named as its page was an iframe with nothing
        /// of its own to load. One that did load something is a suspect, an iframe's or a
        /// page left for a while (a back navigation restores a page from the back-forward
        /// cache without a request). A request the suspect refers to after that shows it
        /// loading beside the page: it was an iframe's, and so were the requests it
        /// referred. Returns the revision of those already added; `exchange` itself is then
        /// the iframe's.
        mutating func followMainFrame(_ exchange: inout Exchange, sequence: Int, chainStart: Int?) -> [Revision] {
            if exchange.initiator.isDocument {
                let url = ExchangeClassifier.normalize(exchange.request)
                if let chainStart, pages.last?.sequences.first == chainStart {
                    // The next hop of the document's redirect chain.
                    pages[pages.count - 1].sequences.append(sequence)
                    pages[pages.count - 1].url = url
                    pages[pages.count - 1].endedAt = exchange.endedAt
                } else {
                    let named = exchange.request.headers.contains("Sec-Fetch-Dest") || exchange.resourceType != nil
                    let referer = exchange.request.headers.firstValue("Referer", { normalizedReferer($0) })
                    if !named, let referer, let revised = loadedAtOnce(&exchange, url: url, referer: referer) { return revised }
                    pages.append(MainDocument(url: url, sequences: [sequence], startedAt: exchange.startedAt, endedAt: exchange.endedAt, destinationNamed: named, referer: referer))
                    if pages.count > Self.documentsKept { pages.removeFirst() }
                }
                return []
            }
            // The current page read in place: `pages.last` copied it (its URL and lists).
            guard let current = pages.indices.last, let from = exchange.request.headers.firstValue("Referer", { normalizedReferer($0) }) else { return [] }
            var fromDecoded: String?
            if pages[current].isReferred(by: from, decoded: &fromDecoded) {
                if pages[current].referrers.count < Self.referrersKept {
                    pages[current].referrers.append(sequence)
                } else {
                    // A document this busy is the page: memory stays bounded.
                    pages.removeFirst(pages.count - 1)
                }
                return []
            }
            if let k = pages.dropLast().lastIndex(where: { $0.isReferred(by: from, decoded: &fromDecoded) }) {
                guard exchange.initiator != .beacon && exchange.startedAt > pages[current].endedAt + Self.pageGoneAfter else { return [] }
                var revised: [Int] = []
                for document in pages[(k + 1)...] {
                    if document.referrers.isEmpty && !document.destinationNamed {
                        // Nothing ever named it as its page, and the page before went on
                        // loading past it: an iframe with nothing of its own to load (an ad's
                        // or a widget's frame). A page left and restored later would have
                        // been the page of something while it was shown.
                        revised += markIframe(document)
                    } else if !document.destinationNamed && exchange.startedAt - document.startedAt < Self.backNavigationTakes {
                        // The page before went on loading sooner than anyone navigates to a
                        // page and back: it never left, and this was an iframe's document
                        // loading its own things beside it (an ad tag's frame).
                        revised += markIframe(document)
                    } else {
                        suspects.append(document)
                    }
                }
                if suspects.count > Self.documentsKept { suspects.removeFirst(suspects.count - Self.documentsKept) }
                pages.removeSubrange((k + 1)...)
                return revised.isEmpty ? [] : [.iframe(sequences: revised)]
            }
            guard let j = suspects.lastIndex(where: { $0.isReferred(by: from, decoded: &fromDecoded) }) else { return [] }
            exchange.frame.kind = .iframe
            return [.iframe(sequences: markIframe(suspects.remove(at: j)))]
        }

        /// A document the page loads while another it loaded is still in flight: a main
        /// frame navigates once at a time, so both are its iframes (Safari's export names no
        /// destination; mitmproxy.org's four github-btn.html frames start in one
        /// millisecond), and so is each further one while they load. Nil when the document
        /// may be the main frame's.
        mutating func loadedAtOnce(_ exchange: inout Exchange, url: String, referer: String) -> [Revision]? {
            var decoded: String?
            if let loading = framesLoading, loading.referer == referer, exchange.startedAt < loading.until {
                framesLoading?.until = max(loading.until, exchange.endedAt)
                exchange.frame.kind = .iframe
                iframeDocuments.insert(url)
                return []
            }
            guard pages.count >= 2, let last = pages.last, !last.destinationNamed, last.sequences.count == 1, last.referer == referer,
                  exchange.startedAt < last.endedAt, pages[pages.count - 2].isReferred(by: referer, decoded: &decoded)
            else { return nil }
            pages.removeLast()
            exchange.frame.kind = .iframe
            iframeDocuments.insert(url)
            framesLoading = (referer, max(last.endedAt, exchange.endedAt))
            return [.iframe(sequences: markIframe(last))]
        }

        /// `ExchangeClassifier.normalize` of a Referer, reused while the Referer repeats.
        mutating func normalizedReferer(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
            // Compared as bytes with the last: the Referer is made a string only when it changed.
            if let last = lastReferer, last.raw.utf8.withContiguousStorageIfAvailable({ $0.elementsEqual(bytes) }) ?? last.raw.utf8.elementsEqual(bytes) {
                return last.normalized
            }
            let referer = String(decoding: bytes, as: UTF8.self)
            let normalized = ExchangeClassifier.normalize(referer)
            lastReferer = (referer, normalized)
            return normalized
        }

        /// Takes a document read as the main frame's for an iframe's: the requests that name
        /// it from now on are the iframe's. Returns the exchanges already added to revise:
        /// the document's and those that referred to it.
        mutating func markIframe(_ frame: MainDocument) -> [Int] {
            iframeDocuments.insert(frame.url)
            // Its requests to come may name it with spaces for `%20`, as this one may have.
            if let decoded = frame.url.removingPercentEncoding, decoded != frame.url { iframeDocuments.insert(decoded) }
            let revised = frame.sequences + frame.referrers
            // A redirect of the document still waiting for its next hop: that hop is the
            // iframe's too.
            for (key, list) in awaiting where list.contains(where: { revised.contains($0.chainStart) }) {
                awaiting[key] = list.map { waiting in
                    var waiting = waiting
                    if revised.contains(waiting.chainStart) { waiting.chainFrame = .iframe }
                    return waiting
                }
            }
            return revised
        }

        mutating func countNative(_ exchange: Exchange) {
            nativeCount += 1
            guard nativeAgents.count < 3, let agent = exchange.request.headers.first("User-Agent") else { return }
            let shown = agent.count > 80 ? String(agent.prefix(77)) + "..." : agent
            if !nativeAgents.contains(shown) { nativeAgents.append(shown) }
        }

        /// Whether a waiting 3xx may have this request's URL as its Location.
        func mayBeAwaited(_ request: RecordedRequest) -> Bool {
            guard let path = request.target?.path else { return true }
            return awaitingUnparsed > 0 || awaitingPaths[path] != nil
        }

        mutating func countAwaiting(at path: String?, by change: Int) {
            guard let path else {
                awaitingUnparsed += change
                return
            }
            let n = awaitingPaths[path, default: 0] + change
            awaitingPaths[path] = n > 0 ? n : nil
        }
    }
}

extension String {
    /// Decodes UTF-8, returning nil for invalid sequences.
    public init?(validatingUTF8 data: Data) {
        guard let s = String(bytes: data, encoding: .utf8) else { return nil }
        self = s
    }
}
