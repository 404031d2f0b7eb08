import Foundation
import Testing
@testable import WebViewEmulation

@Suite("Rules data file")
struct RuleCatalogTests {
    @Test("every rule id of the behaviour model (jar synchronisation, strategies, bridges, mitigations), the evidence rules E1-E8, native code (NC1), WebSockets (WS1), EventSources (ES1), the app origin and the framework rules is in the data file once")
    func everyRule() {
        let families: [(String, Int)] = [("J", 4), ("N", 6), ("P", 5), ("S", 8), ("X", 3), ("B", 9), ("H", 5), ("C", 9), ("E", 8), ("NC", 1), ("WS", 1), ("ES", 1), ("A", 4),
            ("CAP", 3), ("CAPH", 5), ("CAPC", 3), ("CDV", 3), ("ION", 3), ("FIA", 3), ("RNW", 2), ("TAU", 3), ("O", 4), ("PF", 3), ("D", 5), ("W", 1)]
        let expected = families.flatMap { family, count in (1...count).map { RuleID("\(family)\($0)") } }
        let ids = RuleCatalog.bundled.rules.map(\.id)
        #expect(Set(ids) == Set(expected))
        #expect(ids.count == expected.count)
    }

    @Test("a rule id reads back as written, whatever its length: in place up to 15 bytes, in the long-id table past that; equal ids are equal and hash alike however they were made", arguments: [
        "P1", "CAPH5", "", "é", "ABCDEFGH", "ABCDEFGHIJKLMNO", "ABCDEFGHIJKLMNOP", "a rule id from a hand-written preset file, 中文",
    ])
    func ruleIDs(raw: String) throws {
        let id = RuleID(raw)
        #expect(id.rawValue == raw)
        #expect(id.description == raw)
        #expect(RuleID(rawValue: String(raw.reversed())).rawValue == String(raw.reversed()))
        let again = RuleID(String(decoding: Array(raw.utf8), as: UTF8.self))
        #expect(again == id && again.hashValue == id.hashValue)
        #expect(Set([id, again, RuleID(raw + "x")]).count == 2)
        let decoded = try JSONDecoder().decode([RuleID].self, from: JSONEncoder().encode([id]))
        #expect(decoded == [id])
    }

    @Test("rule ids made from literals equal those read from text, and order by family, then number")
    func ruleIDOrder() {
        let literal: RuleID = "CAPH4"
        #expect(literal == RuleID("CAPH" + "4"))
        #expect(["P4", "J3", "P10", "CAPH5", "N1", "J1"].map { RuleID($0) }.sorted().map(\.rawValue) == ["CAPH5", "J1", "J3", "N1", "P4", "P10"])
    }

    @Test("every pair of ids, the catalogue's and odd ones a preset file may hold, orders as its family's letters and then its number say")
    func ruleIDOrderEveryPair() {
        func parts(_ raw: String) -> (String, Int) {
            let letters = raw.prefix { $0.isLetter }
            return (String(letters), Int(raw.dropFirst(letters.count)) ?? 0)
        }
        let odd = ["P01", "P1a", "p1", "Ä1", "ABCDEFGHI1", "ABCDEFGH1", "P", "1", "P99999999999999999999", "P-1", "B3.1", "LONGFAMILY-RULE-3"]
        let ids = RuleCatalog.bundled.rules.map(\.id.rawValue) + odd
        for a in ids {
            for b in ids {
                let (fa, na) = parts(a), (fb, nb) = parts(b)
                #expect((RuleID(a) < RuleID(b)) == (fa != fb ? fa < fb : na < nb), "\(a) < \(b)")
            }
        }
    }

    @Test("a rule marked measured names lab experiments whose recorded results agree with it; one the engine contradicts is not marked measured and says why")
    func measured() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var measured = 0
        for rule in RuleCatalog.bundled.rules {
            guard let m = rule.measurement else {
                #expect(rule.confidence != .measured, "\(rule.id) is measured without a measurement")
                continue
            }
            #expect(m.engine.hasPrefix("WebKitGTK "))
            if rule.confidence == .measured {
                // The experiment's path: a result file that exists and is one of the measurement's.
                let experiment = try #require(rule.experiment, "\(rule.id) is measured without its experiment's path")
                #expect(m.experiments.contains(experiment), "\(rule.id): \(experiment) is not among its measurement's experiments")
                #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent(experiment).path), "\(rule.id): \(experiment) does not exist")
            } else {
                #expect(rule.experiment == nil, "\(rule.id) names an experiment but is not marked measured")
            }
            var checks: [[String: Any]] = []
            for experiment in m.experiments {
                #expect(experiment.hasPrefix("Tools/lab/results/") && experiment.hasSuffix(".json"), "\(rule.id): \(experiment) is not a lab result's path")
                let data = try Data(contentsOf: root.appendingPathComponent(experiment))
                let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
                checks += (object["checks"] as? [[String: Any]] ?? []).filter { $0["rule"] as? String == rule.id.rawValue }
            }
            #expect(!checks.isEmpty, "\(rule.id): its experiments hold no check of it")
            let agree = checks.allSatisfy { $0["agree"] as? Bool == true }
            #expect(agree == m.agrees, "\(rule.id)")
            if agree {
                #expect(rule.confidence == .measured, "\(rule.id)")
                measured += 1
            } else {
                #expect(rule.confidence != .measured && m.note != nil, "\(rule.id): a disagreement keeps the rule's confidence and says why")
            }
        }
        #expect(measured >= 15)
    }

    @Test("each rule has a statement, a summary and a source")
    func complete() {
        for rule in RuleCatalog.bundled.rules {
            #expect(!rule.statement.isEmpty && !rule.summary.isEmpty && !rule.source.isEmpty, "\(rule.id)")
        }
    }

    @Test("a finding is only as sure as its weakest rule")
    func weakest() {
        let catalog = RuleCatalog.bundled
        #expect(catalog.confidence(of: ["P1"]) == .source)
        #expect(catalog.confidence(of: ["P3", "J3"]) == .inferred)
        #expect(catalog.confidence(of: ["H5", "P1"]) == .folklore)
    }

    @Test("every rule's confidence is found by its id, long ids too; an id outside the catalogue counts as inferred")
    func confidenceLookup() throws {
        let catalog = RuleCatalog.bundled
        for rule in catalog.rules {
            #expect(catalog.confidence(of: [rule.id]) == rule.confidence, "\(rule.id)")
        }
        #expect(catalog.confidence(of: ["ZZ99"]) == .inferred)
        #expect(catalog.confidence(of: []) == .inferred)
        // Ids of more than 15 bytes are stored as indexes, and the table must tell them apart.
        let long = (0..<40).map { i in Rule(id: RuleID("LONGFAMILY-RULE-\(i)"), section: "t", statement: "s", summary: "s", confidence: Confidence.allCases[i % Confidence.allCases.count], source: "s", findings: []) }
        let made = try RuleCatalog(rules: long + catalog.rules)
        for rule in long + catalog.rules {
            #expect(made.confidence(of: [rule.id]) == rule.confidence, "\(rule.id)")
        }
        #expect(made.confidence(of: ["LONGFAMILY-RULE-40"]) == .inferred)
    }

    @Test("rule ids are equal and hash alike exactly when their text is the same, short or long, literal or parsed")
    func idEquality() {
        let texts = ["P1", "P10", "J1", "J3", "CAPC2", "", "ABCDEFGHIJKLMNO", "ABCDEFGHIJKLMNOP", "ABCDEFGHIJKLMNOQ", "A\u{0}", "A"]
        for a in texts {
            for b in texts {
                let (x, y) = (RuleID(a), RuleID(String(decoding: Array(b.utf8), as: UTF8.self)))
                #expect((x == y) == (a == b), "\(a) == \(b)")
                #expect((x != y) == (a != b), "\(a) != \(b)")
                if a == b { #expect(x.hashValue == y.hashValue, "\(a)") }
            }
        }
        let literal: RuleID = "J1"
        #expect(literal == RuleID("J1") && literal != "J2" && literal != "J10")
        // Sets and dictionaries keyed by ids, long ones included, find what was put in.
        let ids = texts.map { RuleID($0) } + (0..<20).map { RuleID("LONGFAMILY-RULE-\($0)") }
        let set = Set(ids)
        #expect(set.count == ids.count)
        for text in texts + (0..<20).map({ "LONGFAMILY-RULE-\($0)" }) { #expect(set.contains(RuleID(text)), "\(text)") }
        #expect(!set.contains(RuleID("LONGFAMILY-RULE-20")) && !set.contains("P2"))
        // Its bytes, read in place or from the table, are its text's.
        for text in texts + ["LONGFAMILY-RULE-3"] {
            #expect(RuleID(text).withUTF8 { Array($0) } == Array(text.utf8), "\(text)")
        }
    }

    @Test("profiles: iOS versions parse, J3 never propagates on the simulator, ITP from 14")
    func profiles() {
        #expect(IOSVersion("11.3") == IOSVersion(11, 3))
        #expect(IOSVersion("17") == IOSVersion(17))
        #expect(IOSVersion("x") == nil)
        #expect(Profile(simulator: true).scriptWriteDelay == nil)
        #expect(Profile().scriptWriteDelay == 1.0)
        #expect(Profile(ios: IOSVersion(13)).itp == false && Profile(ios: IOSVersion(14)).itp)
        #expect(IOSVersion.supported.map(\.description) == ["11.0", "11.3", "12", "13", "14", "15", "16", "17", "18", "18.1", "26", "27"])
        #expect(IOSVersion.newest == IOSVersion(27))
        #expect(IOSVersion(18, 2).isKnown && IOSVersion(26, 1).isKnown && !IOSVersion(19).isKnown && !IOSVersion(10).isKnown)
    }
}
