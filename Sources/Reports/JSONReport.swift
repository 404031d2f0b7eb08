import TrafficModel
import Findings
import Foundation

/// The JSON report: a stable schema for scripts. Extend it, never break it.
///
/// `{"run": {id, label, profile, ios, simulator, presets, startedAt, toolVersion},
///   "summary": {errors, warnings, infos, findings},
///   "matrix": [{recording, preset, errors, warnings, infos}],
///   "findings": [{preset, code, severity, recording, sequence, method, url, subject,
///                 rules, confidence, message, expected, actual}],
///   "coverage": [{recording, preset, offline: {hit, stale, miss, notInterceptable},
///                 prefetch: {hit, mismatch, stale, unused}, items: [{kind, sequence,
///                 verdict, method, url, detail}]}]}`
/// `coverage` is empty unless the run had an offline package or a prefetch config.
public struct JSONReport: Sendable {
    public var redactor: Redactor

    public init(showSecrets: Bool, secrets: SecretNames = .default) {
        self.redactor = Redactor(showSecrets: showSecrets, names: secrets)
    }

    public func render(_ model: ReportModel) throws -> String {
        let model = redactor.apply(model)
        let run = model.run
        var runObject: [String: Any] = [
            "id": run.id ?? 0,
            "profile": run.profile,
            "ios": run.ios,
            "simulator": run.simulator,
            "presets": model.presets,
            "startedAt": run.startedAt,
            "toolVersion": run.toolVersion,
        ]
        runObject["label"] = run.label ?? NSNull()
        var matrix: [[String: Any]] = []
        for recording in model.recordings {
            for preset in model.presets {
                let cell = model.cell(recording: recording, preset: preset)
                matrix.append(["recording": recording, "preset": preset, "errors": cell.errors, "warnings": cell.warnings, "infos": cell.infos])
            }
        }
        let findings: [[String: Any]] = model.findings.map { f in
            [
                "preset": f.preset, "code": f.code.rawValue, "severity": f.severity.rawValue,
                "recording": f.recording, "sequence": f.sequence, "method": f.method, "url": f.url,
                "subject": f.subject ?? NSNull(), "subjects": f.subjects.map(redactor.text),
                "likelihood": f.likelihood ?? NSNull(), "rank": f.rank.rawValue,
                "rules": f.rules.map(\.rawValue), "confidence": f.confidence.rawValue, "message": f.message,
                "expected": redactor.fields(f.expected).dictionary, "actual": redactor.fields(f.actual).dictionary,
            ]
        }
        let coverage: [[String: Any]] = model.coveragePairs.map { pair in
            let counts = model.coverageCounts(recording: pair.recording, preset: pair.preset) ?? ReportModel.CoverageCounts()
            let items = model.coverage[pair.recording]?[pair.preset] ?? []
            return [
                "recording": pair.recording, "preset": pair.preset,
                "offline": ["hit": counts.offline["hit"] ?? 0, "stale": counts.offline["stale"] ?? 0, "miss": counts.offline["miss"] ?? 0, "notInterceptable": counts.offline["not-interceptable"] ?? 0],
                "prefetch": ["hit": counts.prefetch["hit"] ?? 0, "mismatch": counts.prefetch["mismatch"] ?? 0, "stale": counts.prefetch["stale"] ?? 0, "unused": counts.prefetch["unused"] ?? 0],
                "items": items.map { ["kind": $0.kind.rawValue, "sequence": $0.sequence, "verdict": $0.verdict, "method": $0.method, "url": $0.url, "detail": $0.detail] as [String: Any] },
            ]
        }
        let object: [String: Any] = [
            "coverage": coverage,
            "run": runObject,
            "summary": ["errors": model.count(.error), "warnings": model.count(.warning), "infos": model.count(.info), "findings": model.findings.count],
            "matrix": matrix,
            "findings": findings,
        ]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}
