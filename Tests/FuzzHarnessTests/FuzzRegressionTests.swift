import Foundation
import FuzzHarness
import Testing

/// Every input kept in Regressions/TARGET/ (crashes the fuzzers found, and seeds) runs
/// through its fuzz target's harness: a crash found once stays fixed.
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Regressions")

    static func inputs(_ target: String) -> [URL] {
        let dir = folder.appendingPathComponent(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { !$0.hasPrefix(".") && $0 != "README.md" }.sorted().map { dir.appendingPathComponent($0) }
    }

    @Test("every kept input runs through its harness without a crash", arguments: ["http", "tcp", "har", "setcookie"])
    func regressions(target: String) throws {
        let harness = try #require(FuzzHarness.targets[target])
        let files = Self.inputs(target)
        #expect(!files.isEmpty, "Regressions/\(target) holds no input")
        for file in files { harness(Array(try Data(contentsOf: file))) }
    }
}
