/// A value on a `JSONTape`, able to name its place for an error. The place is worked out
/// from the token's position only when an error needs it, so that reading a value costs no
/// allocation.
struct JSONNode {
    /// A missing member's name: the literal looked for, made text only when an error names
    /// the place (most lookups of optional members miss, and are never reported).
    enum MissingName {
        case none
        case key(StaticString)
        /// A member of a missing member: the names from the first missing one.
        case path(String)

        var text: String {
            switch self {
            case .none: return ""
            case .key(let key): return key.description
            case .path(let path): return path
            }
        }
    }

    let view: JSONView
    /// The token, or -1 when the member is missing.
    let index: Int
    /// A missing member: the token it was looked for in (-1 when that is missing too) and
    /// its name, with the names of missing parents before it.
    let parent: Int
    let missingKey: MissingName
    unowned(unsafe) let context: ImportContext

    init(view: JSONView, index: Int, context: ImportContext) {
        self.view = view
        self.index = index
        self.parent = -1
        self.missingKey = .none
        self.context = context
    }

    init(view: JSONView, index: Int, parent: Int, missingKey: MissingName, context: ImportContext) {
        self.view = view
        self.index = index
        self.parent = parent
        self.missingKey = missingKey
        self.context = context
    }

    var path: String {
        func join(_ a: String, _ b: String) -> String { a.isEmpty ? b : b.isEmpty ? a : b.hasPrefix("[") ? a + b : a + "." + b }
        if index >= 0 { return join(context.basePath, view.path(to: index)) }
        let above = parent >= 0 ? join(context.basePath, view.path(to: parent)) : context.basePath
        return join(above, missingKey.text)
    }

    func fail(_ problem: String) -> HARImportError {
        HARImportError(file: context.file, entryIndex: context.entryIndex, field: path, problem: problem)
    }

    var kind: JSONTape.Kind? { index < 0 ? nil : view.tokens[index].kind }

    var isMissing: Bool { kind == nil || kind == .null }

    subscript(key: StaticString) -> JSONNode {
        if index >= 0 {
            if view.tokens[index].kind == .object, let member = view.member(index, key) {
                return JSONNode(view: view, index: member, context: context)
            }
            return JSONNode(view: view, index: -1, parent: index, missingKey: .key(key), context: context)
        }
        let above = missingKey.text
        return JSONNode(view: view, index: -1, parent: parent, missingKey: .path((above.isEmpty ? "" : above + ".") + key.description), context: context)
    }

    /// Checks that the value is an object.
    func object() throws {
        guard kind == .object else { throw fail(isMissing ? "missing (an object is required)" : "expected an object, found \(typeName)") }
    }

    func array() throws -> [JSONNode] {
        guard kind == .array else { throw fail(isMissing ? "missing (an array is required)" : "expected an array, found \(typeName)") }
        return view.children(index).map { JSONNode(view: view, index: $0, context: context) }
    }

    func optionalArray() throws -> [JSONNode] {
        if isMissing { return [] }
        return try array()
    }

    /// The elements of an array, none when it is missing or null, one at a time: the
    /// same as `optionalArray` without building the list.
    func forEachOptionalElement(_ body: (JSONNode) throws -> Void) throws {
        if isMissing { return }
        guard kind == .array else { throw fail("expected an array, found \(typeName)") }
        var child = index + 1
        let end = view.tokens[index].next
        while child < end {
            try body(JSONNode(view: view, index: child, context: context))
            child = view.tokens[child].next
        }
    }

    /// The number of elements of an array or members of an object; 0 otherwise.
    var count: Int {
        guard index >= 0, kind == .array || kind == .object else { return 0 }
        var n = 0
        var child = index + 1
        let end = view.tokens[index].next
        let isObject = kind == .object
        while child < end {
            if isObject { child += 1 }
            n += 1
            child = view.tokens[child].next
        }
        return n
    }

    func string() throws -> String {
        guard kind == .string else { throw fail(isMissing ? "missing (a string is required)" : "expected a string, found \(typeName)") }
        return view.string(index)
    }

    func optionalString() throws -> String? {
        switch kind {
        case nil, .null?: return nil
        case .string?: return view.string(index)
        // Some exporters write numbers where strings belong (a header value, a port).
        case .number?: return JSONValue.text(of: view.tokens[index].number)
        default: throw fail("expected a string, found \(typeName)")
        }
    }

    /// A number; exporters write -1 or leave it out when unknown, which gives nil.
    func optionalNumber() throws -> Double? {
        switch kind {
        case nil, .null?: return nil
        case .number?: return view.tokens[index].number
        case .string?:
            if let d = Double(view.string(index)) { return d }
            throw fail("expected a number, found \(typeName)")
        default: throw fail("expected a number, found \(typeName)")
        }
    }

    /// The value when it is a number (a boolean is not one).
    var number: Double? { kind == .number ? view.tokens[index].number : nil }

    var bool: Bool? { kind == .bool ? view.tokens[index].flag : nil }

    var typeName: String {
        switch kind {
        case nil, .null?: return "null"
        case .bool?: return "a boolean"
        case .number?: return "a number"
        case .string?: return "a string"
        case .array?: return "an array"
        case .object?: return "an object"
        }
    }
}

final class ImportContext {
    let file: String
    var entryIndex: Int? {
        didSet { basePath = entryIndex.map { "log.entries[\($0)]" } ?? "" }
    }
    /// The path of the value token 0 stands for: the entry being read, or the root.
    private(set) var basePath = ""
    init(file: String) { self.file = file }
}
