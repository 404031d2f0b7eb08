import Foundation
import TrafficModel

/// The browser sessions a HAR holds. A page-test tool writes each of its runs into one
/// file: WebPagetest's "Run 1, First View", "Run 2, First View"... (pages `page_1_0`,
/// `page_2_0`), Browsertime's "... run 1", "... run 2". Each run starts a fresh browser
/// profile, with no cookie and no cache, and runs may overlap in time (WebPagetest runs
/// them on several agents). Read as one session, one run's Set-Cookie would be another's
/// cookie and every run switch a script's write or deletion; so each run is replayed as a
/// recording of its own. A run's repeat view (WebPagetest's `page_1_1`) keeps the run's
/// profile, so it stays in its run.
///
/// A file whose pages name no run (a developer tool's export with "preserve log", where
/// one browser visited several pages) is one session.
public struct BrowserSessions: Sendable {
    /// Each session's label ("run 2"), in run order.
    public let labels: [String]
    /// Per entry (in file order), the index into `labels` of its session.
    public let sessionOfEntry: [Int]

    public var isSplit: Bool { labels.count > 1 }

    /// One session: nothing to split.
    static func single(entries: Int) -> BrowserSessions {
        BrowserSessions(labels: [""], sessionOfEntry: [Int](repeating: 0, count: entries))
    }

    /// The sessions of a file from its pages (`log.pages`, read from `root`) and each
    /// entry's `pageref` and time. An entry whose page names no run joins the run of the
    /// latest page that started at or before it.
    init(root: JSONTape, context: ImportContext, pagerefs: [String?], times: [Double]) {
        let pages: [(id: String, run: Int?, start: Double)] = withExtendedLifetime(context) {
            root.withView { view in
                let log = JSONNode(view: view, index: 0, context: context)["log"]
                let creator = (try? log["creator"]["name"].optionalString()) ?? nil
                var out: [(String, Int?, Double)] = []
                try? log["pages"].forEachOptionalElement { page in
                    guard let id = (try? page["id"].optionalString()) ?? nil else { return }
                    let title = (try? page["title"].optionalString()) ?? nil
                    let start = ((try? page["startedDateTime"].optionalString()) ?? nil).flatMap(ISODate.parse) ?? .infinity
                    out.append((id, Self.run(title: title, id: id, creator: creator), start))
                }
                return out
            }
        }
        let runs = Set(pages.compactMap(\.run)).sorted()
        guard runs.count > 1 else {
            self = .single(entries: pagerefs.count)
            return
        }
        let runOfPage = Dictionary(pages.compactMap { p in p.run.map { (p.id, $0) } }, uniquingKeysWith: { a, _ in a })
        let byStart = pages.compactMap { p in p.run.map { (p.start, $0) } }.sorted { $0.0 < $1.0 }
        let index = Dictionary(uniqueKeysWithValues: runs.enumerated().map { ($1, $0) })
        labels = runs.map { "run \($0)" }
        sessionOfEntry = zip(pagerefs, times).map { pageref, time in
            if let pageref, let run = runOfPage[pageref] { return index[run]! }
            let run = byStart.last(where: { $0.0 <= time })?.1 ?? byStart.first!.1
            return index[run]!
        }
    }

    private init(labels: [String], sessionOfEntry: [Int]) {
        self.labels = labels
        self.sessionOfEntry = sessionOfEntry
    }

    /// The run a page belongs to: "Run 2, First View for ..." (WebPagetest), "... run 2"
    /// (Browsertime) in its title, or WebPagetest's page id `page_RUN_VIEW[_STEP]`.
    static func run(title: String?, id: String, creator: String?) -> Int? {
        if let title, let run = number(after: "run ", in: title.lowercased()) { return run }
        guard creator?.lowercased().contains("webpagetest") == true, id.hasPrefix("page_") else { return nil }
        let parts = id.dropFirst(5).split(separator: "_")
        guard parts.count >= 2, parts.allSatisfy({ $0.allSatisfy(\.isASCIIDigit) }) else { return nil }
        return Int(parts[0])
    }

    /// The number right after the first `word` that starts a word in `text` and is
    /// followed by digits that end a word.
    static func number(after word: String, in text: String) -> Int? {
        var rest = text[...]
        while let found = rest.range(of: word) {
            let startsWord = found.lowerBound == text.startIndex || !text[text.index(before: found.lowerBound)].isLetter
            let digits = text[found.upperBound...].prefix(while: \.isASCIIDigit)
            let after = digits.endIndex
            let endsWord = after == text.endIndex || !text[after].isLetter && !text[after].isNumber
            if startsWord, !digits.isEmpty, endsWord, digits.count < 7 { return Int(digits) }
            rest = text[found.upperBound...]
        }
        return nil
    }

    /// The recording name of a session: the file's name, then the run.
    public func recordingName(_ name: String, session: Int) -> String {
        isSplit ? "\(name)-\(labels[session].replacingOccurrences(of: " ", with: "-"))" : name
    }

    /// The note each session's recording carries.
    public func note(session: Int) -> Diagnostic {
        let entries = sessionOfEntry.lazy.filter { $0 == session }.count
        return Diagnostic(.browserSessions, message: "the file holds \(labels.count) runs of a page-test tool, each in a fresh browser (\(labels.joined(separator: ", "))); this recording is \(labels[session]) (\(entries) entries), replayed on its own")
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
