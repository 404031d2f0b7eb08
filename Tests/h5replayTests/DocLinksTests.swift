import Foundation
import Testing

/// The README and docs/ cite files of the repository by relative links: each must name a
/// file a reader who cloned it can open.
@Suite("Doc links")
struct DocLinksTests {
    static let root = ModuleGraphTests.root

    /// README.md and every Markdown file under docs/, by path from the root.
    static var documents: [String] {
        let docs = FileManager.default.enumerator(atPath: root.appendingPathComponent("docs").path)?.compactMap { $0 as? String } ?? []
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    /// The relative targets of `[text](target)` links in `markdown`, without their anchors:
    /// not a URL with a scheme, not an anchor in the same page.
    static func relativeLinks(_ markdown: String) -> [String] {
        markdown.matches(of: /\]\(([^)\s]+)\)/).compactMap { match in
            let target = String(match.1)
            guard target.firstMatch(of: /^[a-z]+:/) == nil, !target.hasPrefix("#") else { return nil }
            let path = String(target.prefix { $0 != "#" })
            return path.isEmpty ? nil : path
        }
    }

    @Test("every relative link in README.md and docs/ names a file or folder of the repository")
    func linksResolve() throws {
        var checked = 0
        for document in Self.documents {
            let url = Self.root.appendingPathComponent(document)
            for link in Self.relativeLinks(try String(contentsOf: url, encoding: .utf8)) {
                let target = url.deletingLastPathComponent().appendingPathComponent(link).standardizedFileURL
                #expect(FileManager.default.fileExists(atPath: target.path), "\(document) links to \(link), which is not in the repository")
                checked += 1
            }
        }
        #expect(checked > 100, "only \(checked) links found: the README and docs cite the code by links")
    }

    @Test("a link to a missing file is caught: the link reader finds relative targets and leaves URLs and anchors alone")
    func readerFindsTargets() {
        let links = Self.relativeLinks("see [a](../Sources/A.swift#L3), [b](https://example.com/x), [c](#here) and [d](docs/missing.md)")
        #expect(links == ["../Sources/A.swift", "docs/missing.md"])
    }

    @Test("nothing in the code, the rules data or the docs cites a file outside the repository: no BEHAVIOUR.md, DESIGN.md or FRAMEWORKS.md, no article by its number")
    func noOutsideCitations() throws {
        let outside = ["BEHAVIOUR.md", "DESIGN.md", "FRAMEWORKS.md", "seed 0"]
        var read = 0
        for folder in ["Sources", "docs", "Tools"] {
            let base = Self.root.appendingPathComponent(folder)
            for file in FileManager.default.enumerator(atPath: base.path)?.compactMap({ $0 as? String }) ?? [] where [".swift", ".md", ".json", ".sh"].contains(where: file.hasSuffix) {
                let text = try String(contentsOf: base.appendingPathComponent(file), encoding: .utf8)
                for name in outside { #expect(!text.contains(name), "\(folder)/\(file) cites \(name)") }
                read += 1
            }
        }
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        for name in outside { #expect(!readme.contains(name), "README.md cites \(name)") }
        #expect(read > 100)
    }
}
