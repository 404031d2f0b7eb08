import Findings
import Foundation
import ReportStore
import TrafficModel
import WebViewEmulation

/// One self-contained HTML file: no script, stylesheet, font or image from elsewhere, so it
/// opens from a CI artifact without network. It holds the side-by-side matrix, each finding
/// with expected vs actual, every redirect chain drawn with where each preset left the page,
/// and a timeline of both cookie jars per recording and preset.
public struct HTMLReport: Sendable {
    public var redactor: Redactor

    public init(showSecrets: Bool, secrets: SecretNames = .default) {
        self.redactor = Redactor(showSecrets: showSecrets, names: secrets)
    }

    /// What the HTML draws beyond the findings.
    public struct Context: Sendable {
        public var recordings: [String: Recording]
        /// Page URL after each redirecting load, keyed `recording|preset|sequence`.
        public var pageURLs: [String: String]
        /// Jar changes, keyed `recording|preset`.
        public var jarEvents: [String: [JarEvent]]

        public static func load(from store: ReportStore, model: ReportModel) throws -> Context {
            var recordings: [String: Recording] = [:]
            var events: [String: [JarEvent]] = [:]
            let run = model.run.id ?? 0
            for name in model.recordings {
                recordings[name] = try store.recording(named: name)
                for preset in model.presets { events["\(name)|\(preset)"] = try store.jarEvents(run: run, recording: name, preset: preset) }
            }
            return Context(recordings: recordings, pageURLs: try store.pageURLs(run: run), jarEvents: events)
        }
    }

    public func render(_ model: ReportModel, context: Context) -> String {
        let model = redactor.apply(model)
        let run = model.run
        var out = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>h5replay run \(run.id ?? 0)</title>
            <style>\(Self.style)</style></head><body>
            <header><h1>h5replay: run \(run.id ?? 0)\(run.label.map { " (\(h($0)))" } ?? "")</h1>
            <p>\(h(run.profile)) &middot; \(model.recordings.count) recording(s) &middot; \(run.exchangeCount) exchange(s) &middot; \(h(run.startedAt)) &middot; h5replay \(h(run.toolVersion))</p>
            <p class="totals"><span class="sev error">\(model.count(.error)) error(s)</span> <span class="sev warning">\(model.count(.warning)) warning(s)</span> <span class="sev info">\(model.count(.info)) info</span></p></header>

            """
        let byCell = model.findingsByCell()
        out += matrix(model, byCell)
        out += coverage(model)
        out += upgrades(model)
        out += advice(model)
        for recording in model.recordings {
            out += "<section class=\"recording\" id=\"\(anchor(recording))\"><h2>\(h(recording))</h2>\n"
            if let r = context.recordings[recording] { out += chains(r, model: model, context: context) }
            for preset in model.presets {
                let findings = byCell[ReportModel.cellKey(recording: recording, preset: preset)] ?? []
                let events = context.jarEvents["\(recording)|\(preset)"] ?? []
                let ordered = findings.sorted(by: Finding.moreImportant)
                let summary = findings.isEmpty ? "no findings" : "\(findings.count) finding(s): " + h(ReportModel.summary(of: findings))
                out += "<details class=\"preset\" id=\"\(anchor(recording + "-" + preset))\"\(findings.isEmpty ? "" : " open")><summary><b>\(h(preset))</b>: \(summary)</summary>\n"
                // The most important few open; the rest folded under one line.
                for f in ordered.prefix(TableReport.shownPerCode) { out += card(f) }
                if ordered.count > TableReport.shownPerCode {
                    out += "<details class=\"more\"><summary>\(ordered.count - TableReport.shownPerCode) more, less important</summary>\n"
                    for f in ordered.dropFirst(TableReport.shownPerCode) { out += card(f) }
                    out += "</details>\n"
                }
                if !events.isEmpty, let start = context.recordings[recording]?.exchanges.first?.startedAt {
                    out += timeline(events, start: start, recording: context.recordings[recording])
                }
                out += "</details>\n"
            }
            out += "</section>\n"
        }
        out += "<footer>Cookie values are \(redactor.showSecrets ? "shown (--show-secrets)" : "redacted; --show-secrets reveals them").</footer></body></html>\n"
        return out
    }

    // MARK: - Parts

    /// Per recording and preset, what the offline package and the prefetch did to each
    /// request, when the run had them.
    /// What each newer release of a preset the run replays at several fixes and breaks.
    private func upgrades(_ model: ReportModel) -> String {
        model.upgrades.map { upgrade in
            var out = "<section class=\"upgrade\"><h2>Upgrade \(h(upgrade.from)) to \(h(upgrade.to)): fixes \(upgrade.fixedCount), breaks \(upgrade.brokenCount)</h2>\n"
            if upgrade.recordings.isEmpty { return out + "<p>The same findings under both.</p></section>\n" }
            out += "<table><thead><tr><th>recording</th><th>fixes</th><th>breaks</th></tr></thead><tbody>\n"
            for change in upgrade.recordings {
                out += "<tr><td>\(h(change.recording))</td><td>\(h(Upgrade.summary(change.fixed)))</td><td>\(h(Upgrade.summary(change.broken)))</td></tr>\n"
            }
            return out + "</tbody></table></section>\n"
        }.joined()
    }

    /// Per preset, the changes advised, each proven by replay (`report --advise`).
    private func advice(_ model: ReportModel) -> String {
        guard !model.advice.isEmpty else { return "" }
        var out = "<section class=\"advice\"><h2>Advice, each change replayed on the run's recordings</h2>\n"
        for preset in model.presets {
            let lines = model.advice.filter { $0.preset == preset }
            guard !lines.isEmpty else { continue }
            out += "<h3>\(h(preset))</h3><table><thead><tr><th>kind</th><th>preset-file snippet</th><th>counted</th><th>change</th></tr></thead><tbody>\n"
            for a in lines {
                out += "<tr><td>\(h(a.kind))</td><td><code>\(h(a.snippet))</code></td><td>\(h(a.counted))</td><td>\(h(a.change))</td></tr>\n"
            }
            out += "</tbody></table>\n"
        }
        return out + "</section>\n"
    }

    private func coverage(_ model: ReportModel) -> String {
        let pairs = model.coveragePairs
        guard !pairs.isEmpty else { return "" }
        var out = "<section class=\"coverage\"><h2>Offline package and prefetch coverage</h2>\n"
        for (recording, preset) in pairs {
            let items = model.coverage[recording]?[preset] ?? []
            out += "<details><summary><b>\(h(recording))</b> / \(h(preset))</summary><table><tr><th>kind</th><th>#</th><th>verdict</th><th>request</th><th>why</th></tr>\n"
            for item in items {
                out += "<tr><td>\(h(item.kind.rawValue))</td><td>\(item.sequence)</td><td>\(h(item.verdict))</td><td>\(h(item.method)) \(h(item.url))</td><td>\(h(item.detail))</td></tr>\n"
            }
            out += "</table></details>\n"
        }
        return out + "</section>\n"
    }

    /// " (measured in WebKitGTK 2.50.6)" after a rule the lab measured.
    static func measured(_ rule: RuleID) -> String {
        guard let r = RuleCatalog.bundled[rule], r.confidence == .measured, let m = r.measurement else { return "" }
        return " <small>(measured in \(m.engine))</small>"
    }

    private func matrix(_ model: ReportModel, _ byCell: [String: [Finding]]) -> String {
        // The table scrolls sideways inside its box at readable widths rather than squeezing
        // eighteen presets and more into the page (a code never breaks mid-word).
        var out = "<section><h2>Side by side</h2><div class=\"matrix-scroll\"><table class=\"matrix\" id=\"matrix\"><thead><tr><th>recording</th>"
        for p in model.presets { out += "<th>\(h(p))</th>" }
        out += "</tr></thead><tbody>\n"
        for r in model.recordings {
            out += "<tr><th><a href=\"#\(anchor(r))\">\(h(r))</a></th>"
            for p in model.presets {
                let c = model.cell(recording: r, preset: p)
                let notCompared = model.notCompared(recording: r, preset: p)
                let cls = notCompared != nil ? "empty" : c.errors > 0 ? "error" : c.warnings > 0 ? "warning" : c.infos > 0 ? "info" : "ok"
                let text = notCompared ?? (c.isClean ? "ok" : [c.errors > 0 ? "\(c.errors) error" : nil, c.warnings > 0 ? "\(c.warnings) warning" : nil, c.infos > 0 ? "\(c.infos) info" : nil].compactMap { $0 }.joined(separator: ", "))
                let codes = Set((byCell[ReportModel.cellKey(recording: r, preset: p)] ?? []).map(\.code.rawValue)).sorted().joined(separator: " ")
                out += "<td class=\"cell \(cls)\"><a href=\"#\(anchor(r + "-" + p))\">\(text)</a>\(codes.isEmpty ? "" : "<small>\(h(codes))</small>")</td>"
            }
            out += "</tr>\n"
        }
        return out + "</tbody></table></div></section>\n"
    }

    private func card(_ f: Finding) -> String {
        var out = "<article class=\"finding \(f.severity.rawValue)\"><h4><span class=\"sev \(f.severity.rawValue)\">\(f.severity.rawValue)</span> \(f.code.rawValue) <small>#\(f.sequence) \(h(f.method)) \(h(f.url))</small></h4>\n"
        out += "<p>\(h(f.message))</p><p class=\"rules\">rules: \(f.rules.map { "<code>\(h($0.rawValue))</code>" + Self.measured($0) }.joined(separator: " ")) &middot; confidence \(f.confidence.rawValue) &middot; rank \(f.rank.rawValue)\(f.likelihood.map { " &middot; likelihood \(TableReport.percent($0))" } ?? "")</p>\n"
        let expected = redactor.fields(f.expected), actual = redactor.fields(f.actual)
        let keys = Set(expected.keys).union(actual.keys).sorted()
        out += "<table class=\"diff\"><tr><th></th><th>expected (recording)</th><th>actual (replay)</th></tr>"
        for k in keys {
            let e = expected[k] ?? "", a = actual[k] ?? ""
            out += "<tr\(e != a ? " class=\"differs\"" : "")><th>\(h(k))</th><td>\(h(e))</td><td>\(h(a))</td></tr>"
        }
        return out + "</table></article>\n"
    }

    /// Each redirect chain as boxes joined by arrows, then per preset where the page ended.
    private func chains(_ r: Recording, model: ReportModel, context: Context) -> String {
        var out = ""
        for head in r.exchanges where head.redirect?.hop == 0 && head.redirect?.next != nil {
            out += "<div class=\"chain\"><h3>Redirect chain from #\(head.sequence)</h3><div class=\"hops\">"
            var current: Exchange? = head
            var finalURL = head.request.url
            var first = true
            while let e = current {
                if !first { out += "<span class=\"arrow\">&rarr;</span>" }
                first = false
                finalURL = e.request.url
                out += "<div class=\"hop\"><b>#\(e.sequence) \(h(e.request.method))</b> \(h(RequestTarget.hostAndPath(redactor.url(e.request.url))))<br><span class=\"status\">\(e.response.status)</span>"
                if !e.response.headers.all("Set-Cookie").isEmpty { out += " <span class=\"cookie\">Set-Cookie &times;\(e.response.headers.all("Set-Cookie").count)</span>" }
                out += "</div>"
                current = e.redirect?.next.map { r.exchanges[$0] }
            }
            out += "</div><table class=\"landing\"><tr><th>preset</th><th>the page ends at</th></tr>"
            for p in model.presets {
                let page = context.pageURLs["\(r.name)|\(p)|\(head.sequence)"] ?? finalURL
                out += "<tr class=\"\(page == finalURL ? "ok" : "error")\"><td>\(h(p))</td><td>\(h(RequestTarget.hostAndPath(redactor.url(page))))\(page == finalURL ? " &#10003;" : " &#10007; (the redirect is hidden)")</td></tr>"
            }
            out += "</table></div>\n"
        }
        return out
    }

    /// Two lanes, NativeJar and WebJar; a mark where each cookie entered (or left) each
    /// jar, labelled with the cookie and the rule; the exchanges as ticks on the time axis.
    private func timeline(_ events: [JarEvent], start: Double, recording: Recording?) -> String {
        let times = events.map { $0.time - start } + (recording?.exchanges.map { $0.startedAt - start } ?? [])
        let span = max(times.max() ?? 1, 0.5)
        let width = 960.0, left = 90.0, lane = 46.0
        func x(_ t: Double) -> Double { left + max(0, t) / span * (width - left - 30) }
        var svg = "<svg class=\"timeline\" viewBox=\"0 0 \(Int(width)) \(Int(lane * 2 + 64))\" role=\"img\" aria-label=\"cookie jar timeline\">"
        for (i, jar) in [JarSide.native, .web].enumerated() {
            let y = 20 + Double(i) * lane
            svg += "<text x=\"4\" y=\"\(y + 5)\" class=\"lane\">\(jar.jarName)</text><line x1=\"\(left)\" y1=\"\(y)\" x2=\"\(width - 20)\" y2=\"\(y)\" class=\"lane\"/>"
            var lastX = -100.0, stagger = 0.0
            for e in events where e.jar == jar {
                let px = x(e.time - start)
                stagger = px - lastX < 60 ? (stagger == 0 ? 14 : 0) : 0
                lastX = px
                let label = "\(e.change == .deleted ? "−" : "+")\(e.name)\(e.rule.map { " \($0.rawValue)" } ?? "")"
                svg += "<circle cx=\"\(fmt(px))\" cy=\"\(y)\" r=\"5\" class=\"\(e.change.rawValue)\"><title>\(h(String(format: "%+.3f s", e.time - start))) \(jar.jarName) \(e.change.rawValue) \(h(e.name)) (\(h(e.domain + e.path))): \(h(e.what))\(e.rule.map { " [\($0.rawValue)]" } ?? "")</title></circle>"
                svg += "<text x=\"\(fmt(px + 6))\" y=\"\(fmt(y - 8 + stagger))\" class=\"mark\">\(h(label))</text>"
            }
        }
        let axis = 20 + lane * 2 + 4
        var lastLabel = -100.0
        for e in recording?.exchanges ?? [] {
            let px = x(e.startedAt - start)
            svg += "<line x1=\"\(fmt(px))\" y1=\"\(axis - 6)\" x2=\"\(fmt(px))\" y2=\"\(axis + 2)\" class=\"tick\"><title>#\(e.sequence) \(h(e.request.method)) \(h(RequestTarget.hostAndPath(redactor.url(e.request.url))))</title></line>"
            // Label a tick only when it stands clear of the previous label.
            if px - lastLabel >= 22 {
                svg += "<text x=\"\(fmt(px))\" y=\"\(axis + 14)\" class=\"tick\">#\(e.sequence)</text>"
                lastLabel = px
            }
        }
        svg += "<text x=\"\(width - 20)\" y=\"\(axis + 28)\" text-anchor=\"end\" class=\"tick\">time since the first request; \(String(format: "%.2f s", span)) shown</text></svg>"
        var table = "<details class=\"events\"><summary>jar events (\(events.count))</summary><table><tr><th>time</th><th>jar</th><th>change</th><th>cookie</th><th>how</th><th>rule</th></tr>"
        for e in events {
            table += "<tr><td>\(String(format: "%+.3f s", e.time - start))</td><td>\(e.jar.jarName)</td><td>\(e.change.rawValue)</td><td>\(h(e.name)) <small>\(h(e.domain + e.path))</small></td><td>\(h(e.what))</td><td>\(e.rule.map { h($0.rawValue) } ?? "")</td></tr>"
        }
        return "<div class=\"jars\"><h4>Cookie jars</h4>\(svg)\(table)</table></details></div>\n"
    }

    // MARK: - Helpers


    private func anchor(_ s: String) -> String {
        "r-" + String(s.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) ? Character($0) : "-" })
    }

    private func fmt(_ v: Double) -> String { String(format: "%.1f", v) }

    /// HTML-escapes text and attribute values.
    func h(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.count)
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }

    static let style = """
        body{font:14px/1.45 -apple-system,system-ui,"Segoe UI",sans-serif;margin:0 auto;max-width:1600px;padding:16px 24px;color:#1d2330;background:#fafbfc}
        h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #dde1e7;padding-bottom:4px}
        h3{font-size:14px;margin:12px 0 6px}h4{margin:0 0 4px;font-size:14px}small{color:#5b6473;font-weight:normal}
        table{border-collapse:collapse}th,td{padding:4px 8px;text-align:left;vertical-align:top}
        div.matrix-scroll{overflow-x:auto;max-width:100%;box-shadow:0 1px 2px #0001}
        table.matrix{min-width:100%;table-layout:auto;font-size:12px;background:#fff}table.matrix th,table.matrix td{border:1px solid #dde1e7;padding:3px 6px;min-width:8em;overflow-wrap:normal;word-break:keep-all}
        table.matrix thead th{white-space:nowrap}table.matrix tbody th{position:sticky;left:0;background:#fff;z-index:1;white-space:nowrap}
        table.matrix thead th:first-child{position:sticky;left:0;z-index:2}table.matrix small{font-size:10px}
        table.matrix thead th{background:#eef1f5}td.cell a{font-weight:600;text-decoration:none;color:inherit;display:block}td.cell small{display:block}
        td.ok{background:#e7f6ec}td.empty{background:#f0f1f3;color:#5f6670}td.error{background:#fde8e8}td.warning{background:#fff5db}td.info{background:#e8f1fd}
        .sev{display:inline-block;border-radius:3px;padding:0 6px;font-size:12px;color:#fff}.sev.error{background:#c62828}.sev.warning{background:#b7791f}.sev.info{background:#2b6cb0}
        .totals .sev{font-size:13px;padding:2px 8px}
        details.preset{background:#fff;border:1px solid #dde1e7;border-radius:4px;margin:8px 0;padding:6px 10px}
        article.finding{border-left:4px solid #999;padding:6px 10px;margin:8px 0;background:#fcfcfd}article.error{border-color:#c62828}article.warning{border-color:#b7791f}article.info{border-color:#2b6cb0}
        .rules code{background:#eef1f5;padding:0 4px;border-radius:3px}
        table.diff td,table.diff th{border:1px solid #e3e6eb;font-family:ui-monospace,monospace;font-size:12px}tr.differs td{background:#fff0f0}
        .hops{display:flex;flex-wrap:wrap;align-items:center;gap:4px}.hop{border:1px solid #9aa5b5;border-radius:4px;padding:4px 8px;background:#fff;font-size:12px}
        .hop .status{font-weight:600}.hop .cookie{color:#7b3fa0}.arrow{font-size:20px;color:#5b6473}
        table.landing{margin-top:6px}table.landing td{border:1px solid #e3e6eb;font-size:12px}table.landing tr.error td{background:#fde8e8}table.landing tr.ok td{background:#e7f6ec}
        svg.timeline{width:100%;height:auto;background:#fff;border:1px solid #e3e6eb}svg text{font-size:11px;fill:#1d2330}svg text.lane{font-weight:600}
        svg line.lane{stroke:#9aa5b5}svg line.tick{stroke:#5b6473}svg text.tick{fill:#5b6473;font-size:10px}
        svg circle.set{fill:#2f855a}svg circle.deleted{fill:#c62828}
        details.events table{font-size:12px}details.events td,details.events th{border-bottom:1px solid #eef1f5}
        footer{margin:32px 0 8px;color:#5b6473;font-size:12px}
        """
}
