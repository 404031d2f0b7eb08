import CookieJar
import Foundation

/// What a recording cannot say about the app and page (BEHAVIOUR.md sections 2 and 8).
///
/// A scenario file (`--scenario FILE`, or `NAME.scenario.json` beside a recording) is a
/// JSON object:
/// `{"preexistingCookies": "native" | "web" | "both", "binaryBodies": "blob" | "arraybuffer"}`.
public struct Scenario: Sendable, Hashable {
    /// Where cookies that were there from the start lived.
    public enum PreexistingJar: String, Sendable, Hashable, Codable, CaseIterable { case native, web, both }

    public var preexisting: PreexistingJar
    /// Binary bodies count as Blob (the conservative default) or ArrayBuffer.
    public var binaryAsBlob: Bool
    /// NativeJar at session start (a native login), from a cookies.txt.
    public var nativeCookies: [Cookie]
    /// WebJar at session start, from a cookies.txt.
    public var webCookies: [Cookie]

    public init(preexisting: PreexistingJar = .both, binaryAsBlob: Bool = true, nativeCookies: [Cookie] = [], webCookies: [Cookie] = []) {
        self.preexisting = preexisting
        self.binaryAsBlob = binaryAsBlob
        self.nativeCookies = nativeCookies
        self.webCookies = webCookies
    }

    public struct FileError: Error, CustomStringConvertible, Sendable {
        public let file: String
        public let problem: String
        public var description: String { "\(file): \(problem)" }
    }

    /// Reads a scenario file; unknown keys are errors, so a typo does not pass silently.
    public static func load(_ data: Data, file: String) throws -> Scenario {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw FileError(file: file, problem: "not a JSON object")
        }
        var scenario = Scenario()
        for (key, value) in object {
            switch key {
            case "preexistingCookies":
                guard let text = value as? String, let jar = PreexistingJar(rawValue: text) else {
                    throw FileError(file: file, problem: "preexistingCookies: expected \"native\", \"web\" or \"both\"")
                }
                scenario.preexisting = jar
            case "binaryBodies":
                guard let text = value as? String, text == "blob" || text == "arraybuffer" else {
                    throw FileError(file: file, problem: "binaryBodies: expected \"blob\" or \"arraybuffer\"")
                }
                scenario.binaryAsBlob = text == "blob"
            case "comment", "description":
                continue
            default:
                throw FileError(file: file, problem: "unknown key \"\(key)\"; known keys: preexistingCookies, binaryBodies, comment")
            }
        }
        return scenario
    }
}
