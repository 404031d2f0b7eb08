import CookieJar
import Foundation
import TrafficModel
import WebViewEmulation

/// What a recording cannot say, read from files: a scenario, an offline package's
/// resource map (and its files) and a prefetch config, given for a whole run or beside a
/// recording as `NAME.scenario.json`, `NAME.resourcemap.json` (with `NAME.package/`) and
/// `NAME.prefetch.json`.
public enum Sidecars {
    /// The cookies of a Netscape cookies.txt (`--native-cookies`, `--web-cookies`), naming
    /// the file in every error.
    public static func cookies(_ path: String) throws -> [Cookie] {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw InputError("\(path): cannot read the cookies file: \((error as NSError).localizedDescription)")
        }
        do {
            return try CookieFile.parse(text, creation: 0)
        } catch let error as CookieFile.ParseError {
            throw InputError("\(path): \(error.description)")
        }
    }

    /// The scenario of the files beside `recordingPath`, nil when there are none.
    public static func scenario(for recordingPath: String?) throws -> Scenario? {
        guard let recordingPath else { return nil }
        let base = URL(fileURLWithPath: recordingPath).deletingPathExtension()
        func beside(_ suffix: String) -> String? {
            let path = base.path + suffix
            return FileManager.default.fileExists(atPath: path) ? path : nil
        }
        let scenarioFile = beside(".scenario.json"), map = beside(".resourcemap.json"), prefetch = beside(".prefetch.json")
        guard scenarioFile != nil || map != nil || prefetch != nil else { return nil }
        var scenario = try scenarioFile.map(loadScenario) ?? Scenario()
        if let map { scenario.offlinePackage = try offlinePackage(map, packageDir: beside(".package")) }
        if let prefetch { scenario.prefetch = try prefetchConfig(prefetch) }
        return scenario
    }

    public static func loadScenario(_ path: String) throws -> Scenario {
        do {
            return try Scenario.load(Data(contentsOf: URL(fileURLWithPath: path)), file: path)
        } catch let error as InputError {
            throw error
        } catch {
            throw InputError(file: path, problem: "cannot read the scenario: \((error as NSError).localizedDescription)")
        }
    }

    /// A resource map; with `packageDir`, the package's files, each named by its download
    /// URL (percent-encoded) or by the download URL's last path component.
    public static func offlinePackage(_ path: String, packageDir: String?) throws -> OfflinePackage {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw InputError(file: path, problem: "cannot read the resource map: \((error as NSError).localizedDescription)")
        }
        var package = try OfflinePackage.load(data, file: path)
        guard let packageDir else { return package }
        var files: [String: BodyFingerprint] = [:]
        for resource in package.resources.values {
            guard let download = resource.download else { continue }
            let names = [download.addingPercentEncoding(withAllowedCharacters: .alphanumerics), URL(string: download)?.lastPathComponent].compactMap { $0 }
            for name in names {
                let file = URL(fileURLWithPath: packageDir).appendingPathComponent(name)
                if let bytes = try? Data(contentsOf: file) {
                    files[download] = BodyFingerprint(bytes)
                    break
                }
            }
        }
        package.files = files
        return package
    }

    public static func prefetchConfig(_ path: String) throws -> PrefetchConfig {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw InputError(file: path, problem: "cannot read the prefetch config: \((error as NSError).localizedDescription)")
        }
        return try PrefetchConfig.load(data, file: path)
    }
}
