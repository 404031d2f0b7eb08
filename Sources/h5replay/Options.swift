import ArgumentParser
import Foundation
import HARFormat
import ReportStore
import WebViewEmulation

/// `--db PATH`, shared by every command.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The h5replay database (SQLite). Created with mode 0600 when missing.", valueName: "path"))
    var db: String = "h5replay.sqlite"

    func open() throws -> ReportStore {
        do {
            return try ReportStore.open(path: db)
        } catch {
            throw InputError("\(db): cannot open the database: \(error)")
        }
    }

    /// Opens the database only when it exists: read-only commands do not create one.
    func openExisting() throws -> ReportStore {
        guard FileManager.default.fileExists(atPath: db) else {
            throw InputError("\(db): no such database; run `h5replay import FILE` or `h5replay replay` first, or pass --db")
        }
        return try open()
    }
}

/// `--ios` and `--simulator`: the platform a replay emulates.
struct ProfileOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The iOS version to emulate: 11.0, 11.3, 12 ... 18.", valueName: "version"))
    var ios: String = IOSVersion.newest.description

    @Flag(name: .long, help: "Emulate the simulator instead of a device (document.cookie writes never reach NativeJar, J3).")
    var simulator = false

    func validate() throws {
        guard let version = IOSVersion(ios), IOSVersion.supported.contains(version) else {
            throw ValidationError("--ios \(ios) is not a version the model knows; use one of \(IOSVersion.supported.map(\.description).joined(separator: ", "))")
        }
    }

    var profile: Profile { Profile(ios: IOSVersion(ios) ?? .newest, simulator: simulator) }
}

/// `--show-secrets`.
struct SecretOptions: ParsableArguments {
    @Flag(name: .long, help: "Show cookie values and other secrets instead of redacting them.")
    var showSecrets = false
}

/// Named limits on what an import reads.
struct LimitOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Largest HAR file read, in bytes.", valueName: "bytes"))
    var maxHarBytes: Int = HARImporter.defaultMaxFileBytes

    func validate() throws {
        if maxHarBytes <= 0 { throw ValidationError("--max-har-bytes must be positive") }
    }

    var harImporter: HARImporter { HARImporter(maxFileBytes: maxHarBytes) }
}
