import Foundation

/// A progress line on standard error, redrawn in place, shown only on a terminal.
final class Progress: @unchecked Sendable {
    let enabled: Bool
    var shown = false

    init(enabled: Bool) { self.enabled = enabled }

    static func line() -> Progress { Progress(enabled: isatty(2) == 1) }

    func show(_ text: String) {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8))
        shown = true
    }

    func end() {
        guard enabled, shown else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        shown = false
    }
}
