import Foundation
import Reports

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

/// How wide the terminal matrix may be: `COLUMNS` when set, else the terminal's own width
/// when standard output is one, else the report's default (a file or a CI log).
enum TerminalWidth {
    static func current() -> Int {
        if let text = ProcessInfo.processInfo.environment["COLUMNS"], let columns = Int(text), columns > 0 { return columns }
        var size = winsize()
        if isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return TableReport.defaultWidth
    }
}
