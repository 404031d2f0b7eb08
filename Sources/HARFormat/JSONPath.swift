/// A JSON value read by `JSONReader`, with the path it was reached by, so that every type
/// error names its place. The path is kept as steps and spelt out only for an error.
struct JSONNode {
    let value: JSONValue?
    let steps: PathSteps
    let context: ImportContext

    init(value: JSONValue?, path: String, context: ImportContext) {
        self.value = value
        self.steps = PathSteps(parent: nil, key: path, index: nil)
        self.context = context
    }

    init(value: JSONValue?, steps: PathSteps, context: ImportContext) {
        self.value = value
        self.steps = steps
        self.context = context
    }

    var path: String { steps.description }

    func fail(_ problem: String) -> HARImportError {
        HARImportError(file: context.file, entryIndex: context.entryIndex, field: path, problem: problem)
    }

    var isMissing: Bool {
        switch value {
        case nil, .null?: return true
        default: return false
        }
    }

    subscript(key: String) -> JSONNode {
        var member: JSONValue?
        if case .object(let object)? = value { member = object[key] }
        return JSONNode(value: member, steps: PathSteps(parent: steps, key: key, index: nil), context: context)
    }

    @discardableResult
    func object() throws -> JSONObject {
        guard case .object(let object)? = value else { throw fail(isMissing ? "missing (an object is required)" : "expected an object, found \(typeName)") }
        return object
    }

    func array() throws -> [JSONNode] {
        guard case .array(let items)? = value else { throw fail(isMissing ? "missing (an array is required)" : "expected an array, found \(typeName)") }
        return items.enumerated().map { JSONNode(value: $1, steps: PathSteps(parent: steps, key: nil, index: $0), context: context) }
    }

    func optionalArray() throws -> [JSONNode] {
        if isMissing { return [] }
        return try array()
    }

    func string() throws -> String {
        guard case .string(let s)? = value else { throw fail(isMissing ? "missing (a string is required)" : "expected a string, found \(typeName)") }
        return s
    }

    func optionalString() throws -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let s)?: return s
        // Some exporters write numbers where strings belong (a header value, a port).
        case .number(let n)?: return JSONValue.text(of: n)
        default: throw fail("expected a string, found \(typeName)")
        }
    }

    /// A number; exporters write -1 or leave it out when unknown, which gives nil.
    func optionalNumber() throws -> Double? {
        switch value {
        case nil, .null?: return nil
        case .number(let n)?: return n
        case .string(let s)?:
            if let d = Double(s) { return d }
            throw fail("expected a number, found \(typeName)")
        default: throw fail("expected a number, found \(typeName)")
        }
    }

    /// The value when it is a number (a boolean is not one).
    var number: Double? {
        if case .number(let n)? = value { return n }
        return nil
    }

    var bool: Bool? {
        if case .bool(let b)? = value { return b }
        return nil
    }

    var typeName: String { value?.typeName ?? "null" }
}

extension JSONValue {
    /// A number as text, as exporters mean it: integers without a fraction.
    static func text(of n: Double) -> String {
        if n == n.rounded(), abs(n) < 1e15 { return String(Int64(n)) }
        return String(n)
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
