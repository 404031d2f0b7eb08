import Foundation

/// Infers what the wire does not say: initiator, frame and body kind (BEHAVIOUR.md
/// section 2), and links redirect hops into chains. Every importer (HAR, pcap) runs this.
public enum ExchangeClassifier {
    /// Fills `initiator`, `frame`, `bodyKind` and `redirect` on every exchange, in place.
    /// `exchanges` must already be in time order with sequences 0..<n.
    public static func classify(_ exchanges: inout [Exchange]) {
        for i in exchanges.indices {
            exchanges[i].initiator = initiator(of: exchanges[i])
            // A detached body was classified before it left (the importer did it).
            if !exchanges[i].request.bodyDetached { exchanges[i].bodyKind = bodyKind(of: exchanges[i].request) }
        }
        linkRedirects(&exchanges)
        assignFrames(&exchanges)
    }

    // MARK: - Initiator

    /// First rule that matches wins (BEHAVIOUR.md section 2, "Initiator").
    public static func initiator(of exchange: Exchange) -> Initiator {
        let request = exchange.request
        let headers = request.headers
        // 1. The exporter's `_resourceType`.
        if let type = exchange.resourceType?.asciiLowercased, let byType = initiator(resourceType: type, request: request) {
            return byType
        }
        // 2. Sec-Fetch-Dest / Sec-Fetch-Mode.
        if let dest = headers.first("Sec-Fetch-Dest")?.asciiLowercased {
            let mode = headers.first("Sec-Fetch-Mode")?.asciiLowercased
            switch dest {
            case "document", "iframe", "frame":
                if mode == nil || mode == "navigate" { return isFormPost(request) ? .formSubmission : .navigation }
            case "empty":
                // An ajax request; rule 3's X-Requested-With tells XHR from an unknown API.
                if mode == "cors" || mode == "same-origin" || mode == "no-cors" {
                    return headers.first("X-Requested-With")?.caseInsensitiveEquals("XMLHttpRequest") == true ? .xhr : .ajax
                }
            case "script", "worker", "sharedworker", "serviceworker": return .script
            case "style": return .stylesheet
            case "image": return .image
            case "font": return .font
            case "audio", "video", "track": return .media
            case "report": return .beacon
            default: break
            }
        }
        // 3. X-Requested-With and Purpose.
        if headers.first("X-Requested-With")?.caseInsensitiveEquals("XMLHttpRequest") == true { return .xhr }
        if let purpose = headers.first("Purpose") ?? headers.first("Sec-Purpose"), purpose.asciiLowercased.hasPrefix("prefetch") { return .prefetch }
        // 4. Accept: text/html.
        let acceptsHTML = headers.first("Accept")?.asciiLowercased.hasPrefix("text/html") == true
        if acceptsHTML {
            if request.method == "GET" { return .navigation }
            if isFormPost(request) { return .formSubmission }
        }
        // 5. Path extension, else an ajax request of unknown API.
        if let path = request.target?.path.asciiLowercased, let dot = path.lastIndex(of: "."), !path[dot...].contains("/") {
            switch path[path.index(after: dot)...] {
            case "js", "mjs": return .script
            case "css": return .stylesheet
            case "png", "jpg", "jpeg", "gif", "webp", "svg", "ico", "bmp", "avif": return .image
            case "woff", "woff2", "ttf", "otf", "eot": return .font
            case "mp4", "webm", "mp3", "m4a", "ogg", "wav", "m3u8", "ts", "mov": return .media
            case "html", "htm": return request.method == "GET" ? .navigation : .ajax
            default: break
            }
        }
        return .ajax
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
        default: return nil  // "other", "manifest", "websocket"...: fall through to the headers.
        }
    }

    static func isFormPost(_ request: RecordedRequest) -> Bool {
        guard request.method == "POST" else { return false }
        let type = request.headers.first("Content-Type")?.asciiLowercased ?? ""
        return type.hasPrefix("application/x-www-form-urlencoded") || type.hasPrefix("multipart/form-data") || type.hasPrefix("text/plain")
    }

    // MARK: - Body kind

    /// What JavaScript passed to `send`/`fetch` (BEHAVIOUR.md section 2, "Body kind").
    public static func bodyKind(of request: RecordedRequest) -> BodyKind {
        guard !request.body.isEmpty else { return .none }
        let type = (request.headers.first("Content-Type") ?? "").asciiLowercased
        if type.hasPrefix("multipart/form-data") {
            return multipartHasFile(request.body) ? .formDataWithFile : .formData
        }
        if type.hasPrefix("application/x-www-form-urlencoded") { return .urlEncoded }
        let binaryTypes = ["application/octet-stream", "image/", "audio/", "video/", "application/zip", "application/x-protobuf", "application/protobuf", "application/vnd.google.protobuf", "application/pdf", "application/gzip"]
        if binaryTypes.contains(where: { type.hasPrefix($0) }) { return .binary }
        if type.hasPrefix("text/") || type.contains("json") || type.contains("xml") { return .text }
        return String(validatingUTF8: request.body) == nil ? .binary : .text
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

    // MARK: - Redirect chains

    /// Links each 3xx response to the later request for its Location: hop 0 is the
    /// request the page issued, hop n the n-th redirect target.
    public static func linkRedirects(_ exchanges: inout [Exchange]) {
        // Requests by normalised URL, in time order, so each 3xx finds its target in one
        // lookup rather than a scan.
        var byURL: [String: [Int]] = [:]
        var hasRedirect = false
        for i in exchanges.indices {
            if exchanges[i].response.isRedirect { hasRedirect = true }
        }
        guard hasRedirect else { return }
        for i in exchanges.indices { byURL[normalize(exchanges[i].request.url), default: []].append(i) }
        var claimed = Set<Int>()
        // Per URL, where the search for the next unclaimed later request starts: a flow that
        // redirects to the same page thousands of times stays linear.
        var cursor: [String: Int] = [:]
        for i in exchanges.indices where exchanges[i].response.isRedirect {
            guard let location = exchanges[i].response.location,
                let target = RequestTarget.resolve(location, against: exchanges[i].request.url)
            else { continue }
            let wantedMethod = exchanges[i].response.preservesMethod ? exchanges[i].request.method : nil
            let key = normalize(target)
            var next: Int?
            if let candidates = byURL[key] {
                var c = cursor[key] ?? 0
                while c < candidates.count, candidates[c] <= i || claimed.contains(candidates[c]) { c += 1 }
                cursor[key] = c
                next = candidates[c...].first { j in
                    !claimed.contains(j) && (wantedMethod == nil || exchanges[j].request.method == wantedMethod)
                }
            }
            let start = exchanges[i].redirect?.chainStart ?? i
            let hop = exchanges[i].redirect?.hop ?? 0
            guard let j = next else {
                exchanges[i].redirect = RedirectLink(chainStart: start, hop: hop, next: nil)
                continue
            }
            claimed.insert(j)
            exchanges[i].redirect = RedirectLink(chainStart: start, hop: hop, next: j)
            exchanges[j].redirect = RedirectLink(chainStart: start, hop: hop + 1, next: nil)
            // A redirect target inherits the initiator of the request that started the chain.
            exchanges[j].initiator = exchanges[start].initiator == .formSubmission ? .navigation : exchanges[start].initiator
        }
    }

    /// URL comparison that ignores the fragment and the default port.
    static func normalize(_ url: String) -> String {
        guard let t = RequestTarget(url) else { return url }
        return t.origin + t.pathAndQuery
    }

    // MARK: - Frames

    /// Main frame unless `Sec-Fetch-Dest: iframe`; iframes' subresources are found through
    /// the Referer; third party when the request's site is not the top document's site.
    public static func assignFrames(_ exchanges: inout [Exchange]) {
        let topSite = Recording(name: "", sourceFormat: "", exchanges: exchanges).topLevelSite
        var iframeDocuments = Set<String>()
        for i in exchanges.indices {
            let e = exchanges[i]
            var kind = Frame.Kind.main
            let dest = e.request.headers.first("Sec-Fetch-Dest")?.asciiLowercased
            if dest == "iframe" || dest == "frame" || e.resourceType?.asciiLowercased == "sub_frame" {
                kind = .iframe
                iframeDocuments.insert(ExchangeClassifier.normalize(e.request.url))
            } else if !iframeDocuments.isEmpty, let referer = e.request.headers.first("Referer"), iframeDocuments.contains(ExchangeClassifier.normalize(referer)) {
                kind = .iframe
            } else if let start = e.redirect?.chainStart, start != i {
                kind = exchanges[start].frame.kind
            }
            let site = e.request.target?.site
            exchanges[i].frame = Frame(kind: kind, thirdParty: topSite != nil && site != nil && site != topSite)
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
