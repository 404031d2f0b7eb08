// h5replay: the command line. One file per subcommand (import, record, serve, ca, replay,
// report, gate, merge, show, export, presets), each parsing its options with ArgumentParser
// and handing the work to the library modules.

import ArgumentParser
import Foundation
import Pipeline

/// The h5replay command line: thin commands over the library modules.
@main
struct H5Replay: AsyncParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "h5replay",
        abstract: "Record hybrid-app H5 traffic, replay it through emulated WKWebView interception strategies side by side, and report every body loss, redirect loss and cookie drift.",
        discussion: """
            Typical use:
              h5replay import session.har          # store a recording (HAR, pcap)
              h5replay record --proxy              # or record HTTPS through a proxy
              h5replay record -i lo --duration 30s # or capture plain HTTP live
              h5replay serve session --tls         # or check it against a real app
              h5replay ca show                     # how to trust h5replay's CA for HTTPS
              h5replay replay session              # replay it under every built-in preset
              h5replay report --format json        # the latest run's findings, for scripts
              h5replay gate --baseline main        # exit 1 on new findings (CI)
            With no arguments, `h5replay replay` replays the bundled Recordings/ folder.

            Exit codes: 0 success, 1 gate failed, 2 usage or input error, 3 internal error.
            """,
        version: version,
        subcommands: [Import.self, Record.self, Serve.self, Replay.self, Report.self, Gate.self, Show.self, Export.self, Merge.self, Presets.self, Advise.self, CA.self]
    )

    /// Runs the command, mapping every error to the documented exit codes.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as InputError {
            // Input errors may quote a URL: secret query values stay hidden here too.
            FileHandle.standardError.write(Data("h5replay: error: \(SecretNames.configured().redactText(error.message))\n".utf8))
            Foundation.exit(2)
        } catch let error as ExitCode {
            Foundation.exit(error.rawValue)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                exit(withError: error)
            }
            // Usage errors from argument parsing exit 2, as documented; anything else is internal.
            let message = fullMessage(for: error)
            if code == .validationFailure || error is ValidationError || code.rawValue == 64 {
                FileHandle.standardError.write(Data("\(message)\n".utf8))
                Foundation.exit(2)
            }
            FileHandle.standardError.write(Data("h5replay: internal error: \(message.isEmpty ? String(describing: error) : message)\n".utf8))
            Foundation.exit(3)
        }
    }
}

