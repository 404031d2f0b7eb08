import ArgumentParser
import Foundation
import Pipeline
import Reports

/// `--keep-going`, for `import` and `replay` of many files: a file that cannot be read is
/// named with the reason and skipped, and the others go on.
struct CorpusOptions: ParsableArguments {
    @Flag(help: "Skip a file that cannot be read (not HAR or a capture, malformed, over a limit), naming it and why on stderr, and go on with the others; the last line counts the skipped files. Without it the first such file stops the command with exit code 2.")
    var keepGoing = false

    /// Where the files skipped are kept, or nil when the first one stops the command.
    func skippedFiles() -> SkippedFiles? { keepGoing ? SkippedFiles() : nil }
}

/// The files a `--keep-going` command skipped, told on stderr as they go by.
final class SkippedFiles {
    private(set) var paths: Set<String> = []
    private(set) var count = 0

    func add(_ path: String, _ error: InputError) {
        paths.insert(path)
        count += 1
        // The message names the file; a message whole without it gets the path in front.
        let message = error.file == nil && !error.message.hasPrefix(path) ? "\(path): \(error.message)" : error.message
        FileHandle.standardError.write(Data("h5replay: skipped: \(SecretNames.configured().redactText(message))\n".utf8))
    }

    /// Hands each file the pipeline cannot read to `add`.
    var handler: (String, InputError) -> Void { { [self] path, error in add(path, error) } }

    /// What `read` gives for the file at `path`; nil when `skipped` took the file as one
    /// that cannot be read. Without `--keep-going` (no `skipped`) the error goes on.
    static func reading<T>(_ path: String, skipped: SkippedFiles?, _ read: () throws -> T) throws -> T? {
        do {
            return try read()
        } catch let error as InputError {
            guard let skipped else { throw error }
            skipped.add(path, error)
            return nil
        }
    }

    /// "skipped 2 file(s) that could not be read", or nil when none was.
    var summary: String? {
        count == 0 ? nil : "skipped \(count) file(s) that could not be read; each is named above on stderr"
    }
}

/// `--db PATH`, shared by every command.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The h5replay database (SQLite). Created with mode 0600 when missing.", valueName: "path"))
    var db: String = "h5replay.sqlite"

    /// Opens or creates the database; `bulk` for a command whose first transaction is large
    /// (an import, a run, a merge), which then writes a new file with a rollback journal
    /// (`ReportStore.NewFile`).
    func open(bulk: Bool = false) throws -> ReportStore {
        do {
            return try ReportStore.openForPipeline(path: db, newFile: bulk ? .rollbackJournal : .wal)
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
    @Option(name: .long, help: ArgumentHelp("The iOS version to emulate: \(IOSVersion.supported.map(\.description).joined(separator: ", ")), or a point release of one (18.1); the default is the newest.", valueName: "version"))
    var ios: String = IOSVersion.newest.description

    @Flag(name: .long, help: "Emulate the simulator instead of a device (document.cookie writes never reach NativeJar, J3).")
    var simulator = false

    func validate() throws {
        guard let version = IOSVersion(ios), version.isKnown else {
            throw ValidationError("--ios \(ios) is not a version the model knows; use one of \(IOSVersion.supported.map(\.description).joined(separator: ", "))")
        }
    }

    @Option(name: .customLong("profile-file"), help: ArgumentHelp("A JSON profile overriding any number: jarSyncDelay, jarDeletionDelay, scriptWriteDelay (null: never), cookieStoreSyncDelay, cookieSetterHookDelay, itp, ios, simulator.", valueName: "file"))
    var profileFile: String?

    /// The profile: --ios and --simulator, then the profile file's numbers.
    func profile() throws -> Profile {
        let base = Profile(ios: IOSVersion(ios) ?? .newest, simulator: simulator)
        guard let profileFile else { return base }
        return try Self.applying(file: profileFile, to: base)
    }

    /// `base` with a profile file's numbers, every problem naming the file.
    static func applying(file profileFile: String, to base: Profile) throws -> Profile {
        do {
            guard let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: profileFile))) as? [String: Any] else {
                throw InputError("\(profileFile): expected a JSON object")
            }
            return base.applying(try ProfileOverride.parse(object, file: profileFile))
        } catch let error as InputError {
            throw error
        } catch {
            throw InputError("\(profileFile): cannot read the profile: \((error as NSError).localizedDescription)")
        }
    }
}

/// `--preset` and `--preset-file`: the columns of the matrix.
struct PresetOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Presets to replay, comma-separated names or * globs: `capacitor*` picks a framework's family (default: all built-in and those of --preset-file; see `h5replay presets`).", valueName: "a,b*"))
    var preset: String?

    @Option(name: .customLong("preset-file"), help: ArgumentHelp("A JSON preset file describing your app (a strategy, mitigations, a profile); repeatable.", valueName: "file"))
    var presetFiles: [String] = []

    func available() throws -> [Preset] { try Self.available(presetFiles) }

    /// The built-in presets and those of the given preset files.
    static func available(_ presetFiles: [String]) throws -> [Preset] {
        var all = Preset.builtIn
        for file in presetFiles {
            let data: Data
            do { data = try Data(contentsOf: URL(fileURLWithPath: file)) } catch {
                throw InputError("\(file): cannot read the preset file: \((error as NSError).localizedDescription)")
            }
            do {
                var notes: [String] = []
                defer { for note in notes { FileHandle.standardError.write(Data("h5replay: note: \(note)\n".utf8)) } }
                for p in try PresetFile.load(data, file: file, notes: &notes) {
                    guard !all.contains(where: { $0.name == p.name }) else { throw InputError("\(file): preset \(p.name) is already defined; give it another name") }
                    all.append(p)
                }
            } catch let error as PresetFile.Error {
                throw InputError(error.description)
            }
        }
        return all
    }

    /// The presets of this run, in matrix order.
    func selected() throws -> [Preset] {
        let all = try available()
        guard let preset else { return all }
        var out: [Preset] = []
        for name in preset.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !name.isEmpty {
            let matched: [Preset]
            do {
                let selection = try Preset.selecting(name, in: all)
                matched = selection.presets
                for note in selection.notes { FileHandle.standardError.write(Data("h5replay: note: \(note)\n".utf8)) }
            } catch let error as Preset.VersionRequest {
                throw InputError("--preset \(name): \(error)")
            }
            guard !matched.isEmpty else {
                let bare = name.split(separator: "@").first.map(String.init) ?? name
                let guess = bare.contains("*") ? nil : Suggestion.closest(to: bare, among: all.map(\.name))
                throw InputError("\(bare.contains("*") ? "no preset matches" : "unknown preset") \(bare)\(guess.map { " (did you mean \($0)?)" } ?? ""); known: \(all.map(\.name).joined(separator: ", "))")
            }
            for p in matched where !out.contains(where: { $0.name == p.name }) { out.append(p) }
        }
        if out.isEmpty { throw InputError("--preset names no preset") }
        return out
    }
}

/// `--show-secrets`.
struct SecretOptions: ParsableArguments {
    @Flag(name: .long, help: "Show cookie values, Authorization and other secrets instead of redacting them.")
    var showSecrets = false

    @Option(name: .long, help: ArgumentHelp("Another header whose value is a secret (repeatable; also H5REPLAY_SECRET_HEADERS, comma-separated).", valueName: "name"))
    var secretHeader: [String] = []

    @Option(name: .long, help: ArgumentHelp("Another query parameter whose value is a secret (repeatable; also H5REPLAY_SECRET_QUERY).", valueName: "name"))
    var secretQuery: [String] = []

    var names: SecretNames { .configured(headers: secretHeader, queryParameters: secretQuery) }
    var redactor: Redactor { Redactor(showSecrets: showSecrets, names: names) }
}

/// Named limits on what an import reads.
struct LimitOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Largest HAR file read whole into memory (replay, serve), in bytes; import streams a HAR of any size.", valueName: "bytes"))
    var maxHarBytes: Int = ImportLimits().maxHarBytes

    @Option(name: .long, help: ArgumentHelp("Captures: largest HTTP start line and header section, in bytes.", valueName: "bytes"))
    var maxHeaderBytes: Int = ImportLimits().maxHeaderBytes

    @Option(name: .long, help: ArgumentHelp("Captures: most header fields in one HTTP message.", valueName: "n"))
    var maxHeaderCount: Int = ImportLimits().maxHeaderCount

    @Option(name: .long, help: ArgumentHelp("Captures: body bytes kept per HTTP message; the rest is counted and the exchange marked.", valueName: "bytes"))
    var maxBodyBytes: Int = ImportLimits().maxBodyBytes

    @Option(name: .long, help: ArgumentHelp("Captures: largest body after gzip, deflate or br decoding, in bytes.", valueName: "bytes"))
    var maxDecodedBytes: Int = ImportLimits().maxDecodedBytes

    @Option(name: .long, help: ArgumentHelp("Captures: most decoded bytes per encoded byte (a guard against decompression bombs).", valueName: "ratio"))
    var maxDecodeRatio: Int = ImportLimits().maxDecodeRatio

    @Option(name: .long, help: ArgumentHelp("Captures: TCP connections tracked at once; past it the least recently active is closed.", valueName: "n"))
    var maxOpenFlows: Int = ImportLimits().maxOpenFlows

    @Option(name: .long, help: ArgumentHelp("Compressed recordings (.zhar, .har.gz, .pcap.gz): largest size one may inflate to, in bytes; the inflated copy is written to the temporary folder (TMPDIR) while it is read.", valueName: "bytes"))
    var maxInflatedBytes: Int = ImportLimits().maxInflatedBytes

    @Flag(name: .long, help: ArgumentHelp("Captures: refuse every HTTP framing oddity (bare LF, obs-fold, odd chunk sizes, odd Content-Length...) as llhttp's strict mode does, instead of decoding what Chromium or WebKitGTK decode and noting it (framing-tolerated, framing-ambiguous)."))
    var strictHttp = false

    func validate() throws {
        for (flag, value) in [("--max-har-bytes", maxHarBytes), ("--max-header-bytes", maxHeaderBytes), ("--max-header-count", maxHeaderCount), ("--max-body-bytes", maxBodyBytes), ("--max-decoded-bytes", maxDecodedBytes), ("--max-decode-ratio", maxDecodeRatio), ("--max-open-flows", maxOpenFlows), ("--max-inflated-bytes", maxInflatedBytes)] where value <= 0 {
            throw ValidationError("\(flag) must be positive")
        }
    }

    var importLimits: ImportLimits {
        var limits = ImportLimits()
        limits.maxHarBytes = maxHarBytes
        limits.maxHeaderBytes = maxHeaderBytes
        limits.maxHeaderCount = maxHeaderCount
        limits.maxBodyBytes = maxBodyBytes
        limits.maxDecodedBytes = maxDecodedBytes
        limits.maxDecodeRatio = maxDecodeRatio
        limits.maxOpenFlows = maxOpenFlows
        limits.maxInflatedBytes = maxInflatedBytes
        limits.strictHTTP = strictHttp
        return limits
    }

    /// The import pipeline with these limits, drawing its progress on `progress`.
    func pipeline(_ progress: Progress) -> ImportPipeline {
        ImportPipeline(limits: importLimits, progress: { [progress] line in progress.show(line) })
    }
}

/// `--scenario`, `--native-cookies`, `--web-cookies`: what the recording cannot say.
struct ScenarioOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A scenario file for every recording of the run (JSON: preexistingCookies native|web|both, binaryBodies blob|arraybuffer). Without it, NAME.scenario.json beside a recording file is used.", valueName: "file"))
    var scenario: String?

    @Option(help: ArgumentHelp("NativeJar at session start, as a Netscape cookies.txt (a native login).", valueName: "file"))
    var nativeCookies: String?

    @Option(help: ArgumentHelp("WebJar at session start, as a Netscape cookies.txt.", valueName: "file"))
    var webCookies: String?

    @Option(help: ArgumentHelp("An offline package's resource map (JSON: resourcemap of URL to version, md5, download, ctype; the config API's code/data envelope or none): presets that intercept serve from it; a coverage section says what it served, missed and broke. Without it, NAME.resourcemap.json beside a recording is used.", valueName: "file"))
    var offlinePackage: String?

    @Option(help: ArgumentHelp("The package's files, named by download URL, to compare what it serves with what the server sent (default: the resource map's md5).", valueName: "dir"))
    var packageDir: String?

    @Option(help: ArgumentHelp("HTTPDNS IP-direct for every preset whose strategy sends natively: HOST=IP pairs, comma-separated (the certificate checked against the name, SNI set; a scenario's httpdns says otherwise).", valueName: "host=ip,..."))
    var httpdns: String?

    @Option(help: ArgumentHelp("A prefetch config (JSON: config of page url to interfaces with api, method, urlParam, bodyParam, body): which prefetched API calls the page's own calls meet. Without it, NAME.prefetch.json beside a recording is used.", valueName: "file"))
    var prefetchConfig: String?

    /// Reads a scenario file, naming the file in every error.
    static func loadScenario(_ path: String) throws -> Scenario { try Sidecars.loadScenario(path) }

    /// The scenario given on the command line, or nil when none is.
    func explicitScenario() throws -> Scenario? {
        guard scenario != nil || nativeCookies != nil || webCookies != nil || offlinePackage != nil || prefetchConfig != nil || httpdns != nil else { return nil }
        if packageDir != nil && offlinePackage == nil { throw InputError("--package-dir needs --offline-package") }
        var result = try scenario.map(Self.loadScenario) ?? Scenario()
        if let offlinePackage { result.offlinePackage = try Sidecars.offlinePackage(offlinePackage, packageDir: packageDir) }
        if let prefetchConfig { result.prefetch = try Sidecars.prefetchConfig(prefetchConfig) }
        if let httpdns {
            var hosts: [String: String] = [:]
            for pair in httpdns.split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2, !parts[0].isEmpty, Scenario.isIP(parts[1]) else { throw InputError("--httpdns: \"\(pair)\" is not HOST=IP (an IPv4 or IPv6 address)") }
                hosts[parts[0]] = parts[1]
            }
            result.httpdns = HTTPDNS(hosts: hosts)
        }
        if let nativeCookies { result.nativeCookies = try Sidecars.cookies(nativeCookies) }
        if let webCookies { result.webCookies = try Sidecars.cookies(webCookies) }
        return result
    }

    /// The sidecar `NAME.scenario.json` beside a recording file, when there is one.
}

/// `--run latest|ID`: which stored run a command reads.
enum RunSelector: ExpressibleByArgument, CustomStringConvertible {
    case latest
    case id(Int64)

    init?(argument: String) {
        if argument == "latest" { self = .latest } else if let id = Int64(argument), id > 0 { self = .id(id) } else { return nil }
    }

    /// The run id to load, nil for the latest.
    var id: Int64? { if case .id(let id) = self { return id } else { return nil } }
    var description: String { id.map(String.init) ?? "latest" }
    static var defaultCompletionKind: CompletionKind { .list(["latest"]) }

    /// The error for a run `store` does not hold, naming the runs it does (the latest ten).
    func notFound(in store: ReportStore, db: String) throws -> InputError {
        guard id != nil else { return InputError("\(db) holds no run yet; `h5replay replay` makes one") }
        let (runs, total) = try store.latestRuns(limit: 10)
        guard !runs.isEmpty else { return InputError("\(db) has no run \(self): it holds no run yet; `h5replay replay` makes one") }
        let listed = runs.map { run in
            "\(run.id ?? 0)\(run.label.map { " (\($0))" } ?? ""), \(run.startedAt.prefix(16).replacingOccurrences(of: "T", with: " ")), \(run.recordingCount) recording(s)"
        }
        let more = total > runs.count ? "; and \(total - runs.count) older" : ""
        return InputError("\(db) has no run \(self); its runs, newest first: \(listed.joined(separator: "; "))\(more)")
    }
}

/// `--split client`: one recording per client address of a capture.
enum SplitMode: String, ExpressibleByArgument, CaseIterable {
    case client
}

/// `--shard i/n`: slice i of n (1-based) of the sorted recordings.
struct ShardSlice: ExpressibleByArgument {
    var index: Int
    var count: Int

    init?(argument: String) {
        let parts = argument.split(separator: "/")
        guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]), n >= 1, i >= 1, i <= n else { return nil }
        (index, count) = (i - 1, n)
    }
}

/// `--min-likelihood P`: a probability from 0 to 1.
struct Likelihood: ExpressibleByArgument {
    var value: Double

    init?(argument: String) {
        let text = argument.hasSuffix("%") ? String(argument.dropLast()) : argument
        guard let number = Double(text) else { return nil }
        let value = argument.hasSuffix("%") ? number / 100 : number
        guard value >= 0, value <= 1 else { return nil }
        self.value = value
    }

    init(_ value: Double) { self.value = value }
}

/// "Did you mean ...?": the one the preset files' kinds use too.
typealias Suggestion = NameSuggestion
