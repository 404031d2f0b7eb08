import Foundation

/// A HAR `postData.params` entry, and the two encodings a browser gives a form.
struct FormField {
    var name: String
    var value: String
    var fileName: String?
    var contentType: String?

    /// `application/x-www-form-urlencoded`, as the URL standard's serializer writes it.
    static func urlEncoded(_ fields: [FormField]) -> Data {
        Data(fields.map { formEncode($0.name) + "=" + formEncode($0.value) }.joined(separator: "&").utf8)
    }

    static func formEncode(_ s: String) -> String {
        var out = ""
        for byte in s.utf8 {
            switch byte {
            case 0x2A, 0x2D, 0x2E, 0x5F, 0x30...0x39, 0x41...0x5A, 0x61...0x7A: out.unicodeScalars.append(UnicodeScalar(byte))
            case 0x20: out.append("+")
            default: out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    /// `multipart/form-data` with the given boundary.
    static func multipart(_ fields: [FormField], boundary: String) -> Data {
        var body = ""
        for field in fields {
            body += "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(field.name)\""
            if let fileName = field.fileName { body += "; filename=\"\(fileName)\"" }
            body += "\r\n"
            if let type = field.contentType { body += "Content-Type: \(type)\r\n" }
            body += "\r\n\(field.value)\r\n"
        }
        body += "--\(boundary)--\r\n"
        return Data(body.utf8)
    }

    static func boundary(in contentType: String) -> String? {
        guard let range = contentType.range(of: "boundary=", options: .caseInsensitive) else { return nil }
        let raw = contentType[range.upperBound...].prefix { $0 != ";" }
        return raw.trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
    }
}
