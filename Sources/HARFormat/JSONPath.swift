import Foundation

/// A JSON value from `JSONSerialization` with the path it was reached by, so that every
/// type error names its place. The path is kept as steps and spelt out only for an error.
struct JSONNode {
    let value: Any?
    let steps: PathSteps
    let context: ImportContext

    init(value: Any?, path: String, context: ImportContext) {
        self.value = value
        self.steps = PathSteps(parent: nil, key: path, index: nil)
        self.context = context
    }

    init(value: Any?, steps: PathSteps, context: ImportContext) {
        self.value = value
        self.steps = steps
        self.context = context
    }

    var path: String { steps.description }

    func fail(_ problem: String) -> HARImportError {
        HARImportError(file: context.file, entryIndex: context.entryIndex, field: path, problem: problem)
    }

    var isMissing: Bool { value == nil || value is NSNull }

    subscript(key: String) -> JSONNode {
        let dict = value as? [String: Any]
        return JSONNode(value: dict?[key], steps: PathSteps(parent: steps, key: key, index: nil), context: context)
    }

    func object() throws -> [String: Any] {
        guard let dict = value as? [String: Any] else { throw fail(isMissing ? "missing (an object is required)" : "expected an object, found \(typeName)") }
        return dict
    }

    func array() throws -> [JSONNode] {
        guard let items = value as? [Any] else { throw fail(isMissing ? "missing (an array is required)" : "expected an array, found \(typeName)") }
        return items.enumerated().map { JSONNode(value: $1, steps: PathSteps(parent: steps, key: nil, index: $0), context: context) }
    }

    func optionalArray() throws -> [JSONNode] {
        if isMissing { return [] }
        return try array()
    }

    func string() throws -> String {
        guard let s = value as? String else { throw fail(isMissing ? "missing (a string is required)" : "expected a string, found \(typeName)") }
        return s
    }

    func optionalString() throws -> String? {
        if isMissing { return nil }
        if let s = value as? String { return s }
        // Some exporters write numbers where strings belong (a header value, a port).
        if let n = value as? NSNumber { return n.stringValue }
        throw fail("expected a string, found \(typeName)")
    }

    /// A number; exporters write -1 or leave it out when unknown, which gives nil.
    func optionalNumber() throws -> Double? {
        if isMissing { return nil }
        if let n = value as? NSNumber { return n.doubleValue }
        if let s = value as? String, let d = Double(s) { return d }
        throw fail("expected a number, found \(typeName)")
    }

    var typeName: String {
        switch value {
        case nil, is NSNull: return "null"
        case is String: return "a string"
        case is [Any]: return "an array"
        case is [String: Any]: return "an object"
        case is NSNumber: return "a number"
        default: return "\(type(of: value!))"
        }
    }
}

/// A JSON path as a chain of steps: `log.entries[3].request`.
final class PathSteps: CustomStringConvertible {
    let parent: PathSteps?
    let key: String?
    let index: Int?

    init(parent: PathSteps?, key: String?, index: Int?) {
        self.parent = parent
        self.key = key
        self.index = index
    }

    var description: String {
        let head = parent?.description ?? ""
        if let index { return "\(head)[\(index)]" }
        guard let key, !key.isEmpty else { return head }
        return head.isEmpty ? key : "\(head).\(key)"
    }
}

final class ImportContext {
    let file: String
    var entryIndex: Int?
    init(file: String) { self.file = file }
}
