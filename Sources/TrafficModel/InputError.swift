/// A problem with what the user gave (a file, a name, an option): the file, the place in
/// it (an offset, a packet number, a HAR entry path), what is wrong and, where one is
/// known, how to fix it. The CLI exits 2 with its message.
public struct InputError: Error, CustomStringConvertible, Sendable, Equatable {
    public var file: String?
    public var place: String?
    public var problem: String
    public var fix: String?

    public init(file: String?, place: String? = nil, problem: String, fix: String? = nil) {
        self.file = file
        self.place = place
        self.problem = problem
        self.fix = fix
    }

    /// A message already whole ("FILE: PLACE: problem").
    public init(_ message: String) {
        self.init(file: nil, problem: message)
    }

    /// "FILE: PLACE: problem (fix)".
    public var message: String {
        [file, place].compactMap { $0 }.map { $0 + ": " }.joined() + problem + (fix.map { " (\($0))" } ?? "")
    }

    public var description: String { message }
}
