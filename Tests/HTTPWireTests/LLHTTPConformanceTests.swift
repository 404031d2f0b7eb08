import Foundation
import Testing
@testable import HTTPWire

/// Runs the llhttp Markdown cases in ../shared/conformance/llhttp-md-tests through the strict
/// parser, as that folder's README.txt describes, and compares accept or reject, method,
/// URL, status, headers, body bytes and message boundaries with each case's expected log.
/// Every case runs twice: the whole input at once, and one byte at a time.
@Suite("HTTP/1.1 parser conformance: llhttp")
struct LLHTTPConformanceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let suite = root.appendingPathComponent("../shared/conformance/llhttp-md-tests/test").standardizedFileURL
    static var present: Bool { FileManager.default.fileExists(atPath: suite.path) }

    struct Case {
        var name: String
        var type: String
        var meta: [String: Any]
        var input: [UInt8]
        var log: [String]
    }

    struct Expected: Equatable, CustomStringConvertible {
        struct Message: Equatable {
            var method = ""
            var url = ""
            var status = ""
            var reason = ""
            var headers: [String] = []
            var body: [UInt8] = []
        }
        var messages: [Message] = []
        var rejected = false
        var upgraded = false

        var description: String {
            let m = messages.map { "\($0.method)\($0.status) \($0.reason)\($0.url) headers=\($0.headers) body=\($0.body.count)B" }
            return "\(rejected ? "rejected" : upgraded ? "upgraded" : "accepted") \(m)"
        }
    }

    // MARK: - Reading the Markdown

    static func cases() throws -> [Case] {
        var out: [Case] = []
        for folder in ["request", "response"] {
            let dir = suite.appendingPathComponent(folder)
            for file in try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() where file.hasSuffix(".md") {
                let text = try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8)
                out += parse(text, file: "\(folder)/\(file)", defaultType: folder)
            }
        }
        return out
    }

    static func parse(_ text: String, file: String, defaultType: String) -> [Case] {
        var out: [Case] = []
        let lines = text.components(separatedBy: "\n")
        var heading = ""
        var meta: [String: Any] = [:]
        var pendingInput: [UInt8]?
        var i = 0
        while i < lines.count {
            let line = lines[i]
            if line.hasPrefix("#") {
                heading = line.trimmingCharacters(in: CharacterSet(charactersIn: "# "))
                meta = [:]
            } else if line.hasPrefix("<!-- meta="), let json = line.dropFirst("<!-- meta=".count).components(separatedBy: " -->").first,
                let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
            {
                meta = object
            } else if line == "```http" || line == "```log" {
                var block: [String] = []
                i += 1
                while i < lines.count, lines[i] != "```" {
                    block.append(lines[i])
                    i += 1
                }
                if line == "```http" {
                    pendingInput = normalise(block.joined(separator: "\n") + "\n")
                } else if let input = pendingInput {
                    let type = meta["type"] as? String ?? defaultType
                    out.append(Case(name: "\(file) \(heading)", type: type, meta: meta, input: input, log: block))
                    pendingInput = nil
                }
            }
            i += 1
        }
        return out
    }

    /// The upstream harness's normalisation: drop one trailing newline, remove
    /// backslash-newline, newlines become CRLF, then `\r \n \t \f \xHH \NNN` escapes.
    static func normalise(_ raw: String) -> [UInt8] {
        var text = raw
        if text.hasSuffix("\n") { text.removeLast() }
        text = text.replacingOccurrences(of: "\\\n", with: "")
        text = text.replacingOccurrences(of: "\n", with: "\r\n")
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        var k = 0
        while k < bytes.count {
            let c = bytes[k]
            guard c == 0x5C, k + 1 < bytes.count else {
                out.append(c)
                k += 1
                continue
            }
            let e = bytes[k + 1]
            switch e {
            case UInt8(ascii: "r"): out.append(0x0D); k += 2
            case UInt8(ascii: "n"): out.append(0x0A); k += 2
            case UInt8(ascii: "t"): out.append(0x09); k += 2
            case UInt8(ascii: "f"): out.append(0x0C); k += 2
            case UInt8(ascii: "x"):
                let hex = String(decoding: bytes[(k + 2)..<min(k + 4, bytes.count)], as: UTF8.self)
                if let v = UInt8(hex, radix: 16) { out.append(v); k += 4 } else { out.append(c); k += 1 }
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                var j = k + 1
                var v = 0
                while j < bytes.count, j < k + 4, bytes[j] >= 0x30, bytes[j] <= 0x37 {
                    v = v * 8 + Int(bytes[j] - 0x30)
                    j += 1
                }
                out.append(UInt8(truncatingIfNeeded: v))
                k = j
            default:
                out.append(c)
                k += 1
            }
        }
        return out
    }

    /// A span's quoted text with the log's escapes (`\t \f \r \n`) undone.
    static func unquote(_ s: Substring) -> [UInt8] {
        var out: [UInt8] = []
        let bytes = Array(s.utf8)
        var k = 0
        while k < bytes.count {
            if bytes[k] == 0x5C, k + 1 < bytes.count {
                switch bytes[k + 1] {
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "n"): out.append(0x0A)
                default:
                    // Other backslashes are the input's own bytes.
                    out.append(bytes[k])
                    k += 1
                    continue
                }
                k += 2
            } else {
                out.append(bytes[k])
                k += 1
            }
        }
        return out
    }

    static func expected(_ log: [String]) -> Expected {
        var result = Expected()
        var current = Expected.Message()
        var field: [UInt8] = []
        var value: [UInt8] = []
        for line in log {
            if line.contains("error code=") {
                if line.contains("Pause on CONNECT/Upgrade") || line.contains("Pause on PRI/Upgrade") {
                    result.upgraded = true
                } else {
                    result.rejected = true
                }
                break
            }
            if line.hasPrefix("/") { continue }
            // A span of one CR or LF is written bare: `span[body]=lf`.
            if let spanStart = line.range(of: "span["), let close = line.range(of: "]=", range: spanStart.upperBound..<line.endIndex),
                line[close.upperBound...] == "lf" || line[close.upperBound...] == "cr"
            {
                let byte: UInt8 = line[close.upperBound...] == "lf" ? 0x0A : 0x0D
                switch line[spanStart.upperBound..<close.lowerBound] {
                case "body": current.body.append(byte)
                case "header_value": value.append(byte)
                default: break
                }
                continue
            }
            if let spanStart = line.range(of: "span["), let close = line.range(of: "]=\"", range: spanStart.upperBound..<line.endIndex) {
                let kind = line[spanStart.upperBound..<close.lowerBound]
                let text = unquote(line[close.upperBound..<line.index(before: line.endIndex)])
                switch kind {
                case "method": current.method += String(decoding: text, as: UTF8.self)
                case "url": current.url += String(decoding: text, as: UTF8.self)
                case "status": current.reason += String(decoding: text, as: UTF8.self)
                case "header_field": field += text
                case "header_value": value += text
                case "body": current.body += text
                default: break
                }
                continue
            }
            if let range = line.range(of: "headers complete status=") {
                current.status = String(line[range.upperBound...].prefix { $0 != " " })
            }
            if line.hasSuffix("header_value complete") {
                current.headers.append(header(field, value))
                field = []
                value = []
            } else if line.hasSuffix("message complete") {
                result.messages.append(current)
                current = Expected.Message()
            } else if line.hasSuffix("message begin") {
                current = Expected.Message()
            }
        }
        return result
    }

    static func header(_ name: [UInt8], _ value: [UInt8]) -> String {
        let trimmedValue = String(decoding: value, as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
        return String(decoding: name, as: UTF8.self).lowercased() + ": " + trimmedValue
    }

    // MARK: - Running

    static func run(_ c: Case, byteByByte: Bool) -> Expected {
        let kind: HTTPParser.Kind = c.type.hasPrefix("request") ? .request : .response
        var parser = HTTPParser(kind: kind, strictness: .strict)
        if c.meta["skipBody"] as? Bool == true { parser.skipBodies = true }
        if byteByByte {
            for byte in c.input { parser.feed([byte], time: 0) }
        } else {
            parser.feed(c.input, time: 0)
        }
        if c.type.hasSuffix("-finish") { parser.finish(time: 0) }
        var result = Expected()
        for m in parser.completed where m.complete {
            result.messages.append(Expected.Message(
                method: m.head.method, url: m.head.target, status: m.head.status == 0 ? "" : String(m.head.status), reason: m.head.reason,
                headers: m.head.headers.map { header(Array($0.name.utf8), Array($0.value.utf8)) } + m.trailers.map { header(Array($0.name.utf8), Array($0.value.utf8)) },
                body: [UInt8](m.body)))
        }
        result.rejected = parser.error != nil
        result.upgraded = parser.isTunnel
        return result
    }

    /// Strict cases: the types without a lenient flag.
    static func isStrict(_ c: Case) -> Bool { ["request", "response", "request-finish", "response-finish"].contains(c.type) }

    @Test("at least 95% of the strict request and response cases agree with llhttp", .enabled(if: present, "../shared/conformance is not here"))
    func conformance() throws {
        let all = try Self.cases()
        let strict = all.filter(Self.isStrict)
        var failures: [String] = []
        for c in strict {
            let want = Self.expected(c.log)
            for byteByByte in [false, true] {
                let got = Self.run(c, byteByByte: byteByByte)
                if got != want {
                    failures.append("\(c.name)\(byteByByte ? " (byte by byte)" : ""):\n    expected \(want)\n    got      \(got)")
                    break
                }
            }
        }
        let passed = strict.count - failures.count
        let percent = Double(passed) * 100 / Double(max(strict.count, 1))
        print("llhttp conformance: \(passed) of \(strict.count) strict cases pass (\(String(format: "%.1f", percent))%); \(all.count - strict.count) lenient cases not counted")
        for f in failures { print("  " + f) }
        // The suite's size is pinned so that a parsing slip cannot shrink it unnoticed.
        #expect(strict.count >= 200)
        #expect(percent >= 95, "\(failures.count) strict cases fail")
        // 213 of 214 pass today. The one difference is deliberate: after `HTTP/1.1 200 OK`
        // and an empty line, the end of the stream completes a response with an empty body
        // read until close; llhttp reports no message there.
        #expect(passed >= 213, "the pass count fell below 213")
    }
}
