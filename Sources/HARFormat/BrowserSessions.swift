import Foundation
import TrafficModel

/// The browser sessions a HAR holds. A page-test tool writes each of its runs into one
/// file: WebPagetest's "Run 1, First View", "Run 2, First View"... (pages `page_1_0`,
/// `page_2_0`), Browsertime's "... run 1", "... run 2". Each run starts a fresh browser
/// profile, with no cookie and no cache, and runs may overlap in time (WebPagetest runs
/// them on several agents). Read as one session, one run's Set-Cookie would be another's
/// cookie and every run switch a script's write or deletion; so each run is replayed as a
/// recording of its own. A run's repeat view (WebPagetest's `page_1_1`, "Repeat View")
/// comes after the tool restarted the browser on the run's profile: session cookies are
/// gone, persistent ones and the cache stay, and the page loads again from the top. Read
/// inside its run, the restart would be a script deleting every session cookie and the
/// reload a navigation; so the repeat view is a recording of its own too, in which the
/// persistent cookies are there from the start, as they are for an app launched again.
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
    /// entry's `pageref` and time. An entry whose page names no run joins the session of
    /// the latest page that started at or before it.
    init(root: JSONTape, context: ImportContext, pagerefs: [String?], times: [Double]) {
        let pages: [(id: String, view: View?, start: Double)] = withExtendedLifetime(context) {
            root.withView { view in
                let log = JSONNode(view: view, index: 0, context: context)["log"]
                let creator = (try? log["creator"]["name"].optionalString()) ?? nil
                var out: [(String, View?, Double)] = []
                try? log["pages"].forEachOptionalElement { page in
                    guard let id = (try? page["id"].optionalString()) ?? nil else { return }
                    let title = (try? page["title"].optionalString()) ?? nil
                    let start = ((try? page["startedDateTime"].optionalString()) ?? nil).flatMap(ISODate.parse) ?? .infinity
                    out.append((id, Self.view(title: title, id: id, creator: creator), start))
                }
                return out
            }
        }
        let views = Set(pages.compactMap(\.view)).sorted()
        guard views.count > 1 else {
            self = .single(entries: pagerefs.count)
            return
        }
        let viewOfPage = Dictionary(pages.compactMap { p in p.view.map { (p.id, $0) } }, uniquingKeysWith: { a, _ in a })
        let byStart = pages.compactMap { p in p.view.map { (p.start, $0) } }.sorted { $0.0 < $1.0 }
        let index = Dictionary(uniqueKeysWithValues: views.enumerated().map { ($1, $0) })
        labels = views.map(\.label)
        sessionOfEntry = zip(pagerefs, times).map { pageref, time in
            if let pageref, let view = viewOfPage[pageref] { return index[view]! }
            let view = byStart.last(where: { $0.0 <= time })?.1 ?? byStart.first!.1
            return index[view]!
        }
    }

    private init(labels: [String], sessionOfEntry: [Int]) {
        self.labels = labels
        self.sessionOfEntry = sessionOfEntry
    }

    /// One browser session of a page-test tool: a run, and whether it is the run's repeat
    /// view (the browser restarted on the run's profile).
    struct View: Hashable, Comparable {
        var run: Int
        var repeated: Bool

        static func < (a: View, b: View) -> Bool { (a.run, a.repeated ? 1 : 0) < (b.run, b.repeated ? 1 : 0) }
        var label: String { repeated ? "run \(run) repeat view" : "run \(run)" }
    }

    /// The session a page belongs to: "Run 2, First View for ..." / "Run 2, Repeat View
    /// for ..." (WebPagetest), "... run 2" (Browsertime) in its title, or WebPagetest's page
    /// id `page_RUN_VIEW[_STEP]` (view 1 is the repeat view).
    static func view(title: String?, id: String, creator: String?) -> View? {
        let lowered = title?.lowercased() ?? ""
        let wptParts = creator?.lowercased().contains("webpagetest") == true && id.hasPrefix("page_") ? id.dropFirst(5).split(separator: "_") : []
        let wptID = wptParts.count >= 2 && wptParts.allSatisfy { $0.allSatisfy(\.isASCIIDigit) }
        let repeated = lowered.contains("repeat view") || wptID && wptParts[1] == "1"
        if let run = number(after: "run ", in: lowered) { return View(run: run, repeated: repeated) }
        guard wptID, let run = Int(wptParts[0]) else { return nil }
        return View(run: run, repeated: repeated)
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
        let restart = labels[session].hasSuffix("repeat view") ? "; a repeat view follows a browser restart, so only the run's persistent cookies are there from its start" : ""
        return Diagnostic(.browserSessions, message: "the file holds \(labels.count) browser sessions of a page-test tool, each run in a fresh browser (\(labels.joined(separator: ", "))); this recording is \(labels[session]) (\(entries) entries), replayed on its own\(restart)")
    }
}

// swift-format-ignore: NoAccessLevelOnExtensionDeclaration
private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
