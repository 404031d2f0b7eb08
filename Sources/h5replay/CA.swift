import ArgumentParser
import Foundation
import Pipeline
import ReplayServer

/// `--ca-dir`: where the local CA's files are.
struct CAOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The folder of h5replay's CA files (default: the database's folder, or $H5REPLAY_CA_DIR).", valueName: "dir"))
    var caDir: String?

    func files(database: String) -> LocalCA.Files { LocalCA.Files.beside(database: database, directory: caDir) }
}

extension H5Replay {
    struct CA: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ca",
            abstract: "h5replay's local root CA, for serving and recording HTTPS.",
            discussion: """
                `serve --tls` and `record --proxy` present, for each host a client asks for, a
                certificate this CA signs on the fly. A client trusts them once it trusts the
                CA: `h5replay ca show` says how on each platform. The key is created readable
                by its owner alone (0600) and is never printed or exported.

                Examples:
                  h5replay ca init
                  h5replay ca show
                  h5replay ca export --pem h5replay-ca.pem
                """,
            subcommands: [Init.self, Show.self, Export.self])

        struct Init: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Make the CA (certificate and 0600 key) beside the database.")
            @OptionGroup var database: DatabaseOptions
            @OptionGroup var location: CAOptions
            @Flag(help: "Replace an existing CA (clients that trust the old one must trust the new one).")
            var replace = false

            func run() throws {
                let files = location.files(database: database.db)
                let ca = try LocalCA.create(files, replace: replace)
                print("made the h5replay CA: \(files.certificate) (key \(files.key), mode 0600)")
                print("SHA-256 fingerprint: \(ca.fingerprint)")
                print("`h5replay ca show` says how to trust it")
            }
        }

        struct Show: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "The CA's fingerprint, validity, and how to trust it on each platform.")
            @OptionGroup var database: DatabaseOptions
            @OptionGroup var location: CAOptions

            func run() throws {
                let files = location.files(database: database.db)
                let ca = try LocalCA.load(files)
                print(CA.trustGuide(ca))
            }
        }

        struct Export: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Write the CA certificate (never its key) as PEM or DER.")
            @OptionGroup var database: DatabaseOptions
            @OptionGroup var location: CAOptions
            @Option(help: ArgumentHelp("Write PEM (text) to this file.", valueName: "file"))
            var pem: String?
            @Option(help: ArgumentHelp("Write DER (binary; what an iOS profile or Android takes) to this file.", valueName: "file"))
            var der: String?

            func validate() throws {
                if (pem == nil) == (der == nil) { throw ValidationError("give one of --pem FILE or --der FILE") }
            }

            func run() throws {
                let ca = try LocalCA.load(location.files(database: database.db))
                let (path, data) = pem.map { ($0, Data(ca.pem.utf8)) } ?? (der!, Data(ca.derBytes))
                do {
                    try data.write(to: URL(fileURLWithPath: path), options: .atomic)
                } catch {
                    throw InputError(file: path, problem: "cannot write: \(error.localizedDescription)")
                }
                print("wrote the CA certificate to \(path) (\(data.count) bytes)")
            }
        }

        static func trustGuide(_ ca: LocalCA) -> String {
            let dates = ISO8601DateFormatter()
            let pem = ca.files.certificate
            return """
                h5replay CA: \(ca.subject)
                certificate: \(pem)
                SHA-256 fingerprint: \(ca.fingerprint)
                valid: \(dates.string(from: ca.notValidBefore)) to \(dates.string(from: ca.notValidAfter))

                Trust it (only on machines and devices you test with):
                  iOS simulator: xcrun simctl keychain booted add-root-cert \(pem)
                  iOS device:    h5replay ca export --der h5replay-ca.cer; AirDrop or mail it, install the
                                 profile (Settings > General > VPN & Device Management), then turn on full
                                 trust (Settings > General > About > Certificate Trust Settings)
                  macOS:         sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain \(pem)
                  Debian/Ubuntu: sudo cp \(pem) /usr/local/share/ca-certificates/h5replay-ca.crt && sudo update-ca-certificates
                  Chromium:      certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n h5replay -i \(pem)
                  Firefox:       Settings > Privacy & Security > Certificates > Import
                  curl:          curl --cacert \(pem) ...
                """
        }
    }
}
