import Foundation
import Testing
@testable import WebViewEmulation

/// B5's rebuilt body, searched by bytes, against the same rebuild written over Swift
/// strings (the way it was first written): equal for every body whose boundaries and
/// quotes are not followed by a combining mark, which no multipart body has.
@Suite("B5: KKJSBridge's FormData rebuild")
struct MultipartRebuildTests {
    /// The rebuild over strings, as a reference.
    static func reference(_ body: Data, contentType: String?) -> Data? {
        guard let type = contentType, let range = type.range(of: "boundary=") else { return nil }
        let boundary = type[range.upperBound...].prefix { $0 != ";" }.trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        let text = String(decoding: body, as: UTF8.self)
        var parts: [String: String] = [:]
        for chunk in text.components(separatedBy: "--" + boundary) {
            guard let nameRange = chunk.range(of: "name=\""), let end = chunk[nameRange.upperBound...].firstIndex(of: "\"") else { continue }
            parts[String(chunk[nameRange.upperBound..<end])] = chunk
        }
        var out = ""
        for key in parts.keys.sorted() { out += "------KKJSBridgeFormBoundary" + parts[key]! }
        out += "------KKJSBridgeFormBoundary--\r\n"
        return Data(out.utf8)
    }

    /// A multipart body of `fields` parts whose values come from `pieces` (text in several
    /// scripts, quotes, dashes, bytes that are not UTF-8), some names given twice.
    static func body(boundary: String, fields: Int, _ random: inout SystemRandomNumberGenerator) -> Data {
        let pieces: [[UInt8]] = [
            Array("abc".utf8), Array("--".utf8), Array("\"".utf8), Array("name=".utf8), Array("\r\n".utf8), Array("王小明".utf8),
            Array("é".utf8), Array("😀".utf8), [0xFF], [0xC3], [0x00], Array("--\(boundary)".utf8), Array("name=\"x".utf8),
        ]
        var out: [UInt8] = []
        for _ in 0..<fields {
            let name = ["a", "b", "file", "王", "x y", ""].randomElement(using: &random)!
            out += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n".utf8)
            for _ in 0..<Int.random(in: 0..<12, using: &random) { out += pieces.randomElement(using: &random)! }
            out += Array("\r\n".utf8)
        }
        if Bool.random(using: &random) { out += Array("--\(boundary)--\r\n".utf8) }
        return Data(out)
    }

    @Test("the byte search rebuilds every body as the string search does")
    func matchesTheStringRebuild() {
        var random = SystemRandomNumberGenerator()
        for round in 0..<400 {
            let boundary = ["X", "----WebKitFormBoundary7MA4YWxkTrZu0gW", "a-b", "--"].randomElement(using: &random)!
            let body = Self.body(boundary: boundary, fields: Int.random(in: 0..<6, using: &random), &random)
            for type in ["multipart/form-data; boundary=\(boundary)", "multipart/form-data; boundary=\"\(boundary)\"; charset=utf-8", "multipart/form-data"] {
                let rebuilt = BodyBridge.rebuildMultipart(body, contentType: type)
                #expect(rebuilt == Self.reference(body, contentType: type), "round \(round), \(type): \(Array(body))")
            }
        }
    }

    @Test("duplicate names keep the last part, in sorted order, under the bridge's boundary")
    func lastPartWins() {
        let body = Data("--X\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\n1\r\n--X\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n2\r\n--X\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\n3\r\n--X--\r\n".utf8)
        let rebuilt = BodyBridge.rebuildMultipart(body, contentType: "multipart/form-data; boundary=X")!
        #expect(String(decoding: rebuilt, as: UTF8.self) == "------KKJSBridgeFormBoundary\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n2\r\n------KKJSBridgeFormBoundary\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\n3\r\n------KKJSBridgeFormBoundary--\r\n")
        #expect(BodyBridge.rebuildMultipart(body, contentType: "multipart/form-data") == nil)
    }
}
