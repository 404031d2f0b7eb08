import Foundation

/// Set by SIGINT and SIGTERM once `StopSignal.install()` ran; long-running commands
/// (`record`, `serve`) check it between steps and then finish cleanly.
nonisolated(unsafe) private var stopRequested: sig_atomic_t = 0

enum StopSignal {
    /// Catches Ctrl-C and SIGTERM. A parent may start us with these signals blocked (some
    /// process launchers do), so they are unblocked too.
    static func install() {
        stopRequested = 0
        signal(SIGINT) { _ in stopRequested = 1 }
        signal(SIGTERM) { _ in stopRequested = 1 }
        var wanted = sigset_t()
        sigemptyset(&wanted)
        sigaddset(&wanted, SIGINT)
        sigaddset(&wanted, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &wanted, nil)
    }

    /// Back to the default: the next Ctrl-C ends the process.
    static func uninstall() {
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }

    static var requested: Bool { stopRequested != 0 }
}
