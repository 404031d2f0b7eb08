import Foundation
import Testing
import TrafficModel
@testable import WebViewEmulation

/// An outcome keeps its fields behind one shared reference; it must still behave as a
/// value: the emulator keeps the worse of two possibilities by copying an outcome and
/// changing the copy, and the one it drops must not leak into the one it keeps.
@Suite("Outcome: a value, however its fields are kept")
struct OutcomeValueTests {
    @Test("a copy changed in any field leaves the original as it was")
    func copiesAreIndependent() {
        var original = Outcome(sequence: 1, deliveredMethod: "POST", deliveredURL: "https://shop.example/api", deliveredBody: .empty)
        original[.bodyChanged] = ["P1"]
        var copy = original
        copy[.bodyChanged].append("S5")
        copy.changes.append(Change(rule: "S5", what: "re-sent"))
        copy.deliveredMethod = "GET"
        copy[.failed] = ["D4"]
        #expect(original[.bodyChanged] == ["P1"])
        #expect(original.changes.isEmpty)
        #expect(original.deliveredMethod == "POST")
        #expect(!original.has(.failed))
        #expect(copy != original)
        var same = original
        same.sequence = 1  // written, not changed
        #expect(same == original)
        #expect(Set([same, original]).count == 1)
    }

    @Test("an outcome kept in an array and changed there leaves earlier copies alone")
    func changedInPlace() {
        var outcomes = [Outcome(sequence: 0, deliveredMethod: "GET", deliveredURL: "https://a.example/", deliveredBody: .empty)]
        let before = outcomes[0]
        outcomes[0].pageURL = "https://a.example/next"
        outcomes[0][.redirectHidden] = ["P4"]
        #expect(before.pageURL == nil)
        #expect(!before.has(.redirectHidden))
        #expect(outcomes[0].pageURL == "https://a.example/next")
    }
}

/// An outcome's changes keep their first two in the value itself and the rest in an
/// array; the list must read, compare and hash as the plain array it replaced.
@Suite("InlineList: a list whose first two elements are kept in place")
struct InlineListTests {
    static let changes = (0..<6).map { Change(rule: RuleID("R\($0)"), what: "change \($0)") }

    @Test("appended one by one, any length reads back in order, as an array would", arguments: 0...6)
    func readsBack(count: Int) {
        var list = ChangeList()
        for change in Self.changes.prefix(count) { list.append(change) }
        #expect(Array(list) == Array(Self.changes.prefix(count)))
        #expect(list.count == count && list.isEmpty == (count == 0))
        #expect(list.map(\.rule.rawValue) == (0..<count).map { "R\($0)" })
    }

    @Test("lists with the same changes are equal and hash alike, whatever way they were built")
    func equalityAndHash() {
        var appended = ChangeList()
        appended.append(contentsOf: Self.changes)
        var rebuilt: ChangeList = [Self.changes[5]]
        rebuilt.replaceSubrange(0..<1, with: Self.changes)
        #expect(appended == rebuilt && appended.hashValue == rebuilt.hashValue)
        var shorter = appended
        shorter.removeLast()
        #expect(shorter != appended && Array(shorter) == Array(Self.changes.dropLast()))
    }

    @Test("an element changed through the subscript, in place or past the second")
    func subscriptSet() {
        var list = ChangeList(Self.changes)
        list[1] = Self.changes[4]
        list[4] = Self.changes[1]
        #expect(list.map(\.rule.rawValue) == ["R0", "R4", "R2", "R3", "R1", "R5"])
    }
}

/// Explanations are written as bytes into one buffer; what they say must be what the
/// strings said: digits as `String(n)`, durations as printf's `%.0f` and `%.1f`.
@Suite("Words: an explanation's bytes, as its strings wrote them")
struct WordsTests {
    static func written(_ build: (inout Words) -> Void) -> String {
        var words = Words(capacity: 4)
        build(&words)
        return words.string
    }

    @Test("integers as String writes them, pieces in order, past the first buffer's room")
    func integersAndGrowth() {
        for n in [0, 7, 10, 99, 100, 302, 12_345, Int.max, -1, Int.min] {
            #expect(Self.written { $0.append(n) } == String(n))
        }
        let text = Self.written { w in
            for k in 0..<200 {
                w += "piece "
                w.append(k)
                w += String(repeating: "é", count: k % 3)
            }
        }
        #expect(text == (0..<200).map { "piece \($0)" + String(repeating: "é", count: $0 % 3) }.joined())
    }

    @Test("durations as printf writes them, near ties and out of range included")
    func seconds() {
        var values: [Double] = [0, 0.0004, 0.0005, 0.0015, 0.25, 0.9995, 0.9999, 1, 1.05, 1.25, 1.35, 9.95, 9.96, 10, 10.5, 11.5, 59.5, 1e11, 1e12, 3e15, -0.5, .infinity, .nan]
        values += (0..<2000).map { Double($0) * 0.0137 }
        for s in values {
            let printf = s >= 10 ? String(format: "%.0f s", s) : s >= 1 ? String(format: "%.1f s", s) : String(format: "%.0f ms", s * 1000)
            #expect(Self.written { $0.append(seconds: s) } == printf, "\(s)")
        }
    }

    @Test("each kind of effect is kept, read, listed and cleared on its own", arguments: Effect.allCases)
    func effectsAreTyped(_ effect: Effect) {
        var outcome = Outcome(sequence: 0, deliveredMethod: "GET", deliveredURL: "https://shop.example/", deliveredBody: .empty)
        #expect(!outcome.hasEffects && !outcome.has(effect) && outcome.effects.isEmpty)
        outcome[effect] = ["R1"]
        outcome[effect].append("R2")
        #expect(outcome.has(effect) && outcome.hasEffects)
        #expect(outcome.effects == [EffectRules(effect: effect, rules: ["R1", "R2"])])
        #expect(Effect.allCases.filter { outcome.has($0) } == [effect])
        outcome[effect] = []
        #expect(!outcome.hasEffects && outcome.effects.isEmpty)
    }

    @Test("severity counts effects that weigh alike once: a lost body outweighs a new preflight and URL together")
    func severityReadsEffects() {
        var body = Outcome(sequence: 0, deliveredMethod: "POST", deliveredURL: "https://shop.example/api", deliveredBody: .empty)
        body[.bodyChanged] = ["P1"]
        var both = Outcome(sequence: 0, deliveredMethod: "POST", deliveredURL: "https://shop.example/api?id=1", deliveredBody: .empty)
        both[.urlChanged] = ["B2"]
        both[.preflightAdded] = ["B9"]
        #expect(body.severity == 100)
        #expect(both.severity == 10)
        both[.neverSent] = ["S4"]
        #expect(both.severity > body.severity)
    }
}

/// Changes compare by rule and words, whether their words were written out or are built
/// from a note; and a first answer is asked for once.
@Suite("Change and firstNonNil")
struct ChangeEqualityTests {
    @Test("a change noted and the same change written out in words are equal and hash alike; other words or rules are not equal")
    func noteAndWords() {
        let noted = Change(rule: "P1", note: .bodyRemoved(bytes: 52))
        let written = Change(rule: "P1", what: noted.what)
        #expect(noted == written && written == noted)
        #expect(Set([noted, written]).count == 1)
        #expect(noted == Change(rule: "P1", note: .bodyRemoved(bytes: 52)))
        #expect(noted != Change(rule: "P1", note: .bodyRemoved(bytes: 53)))
        #expect(noted != Change(rule: "S5", note: .bodyRemoved(bytes: 52)))
    }

    @Test("the first non-nil answer asks each element before it once, and none after it")
    func firstNonNilAsksOnce() {
        var asked: [Int] = []
        let answer = [1, 2, 3, 4].firstNonNil { x -> Int? in
            asked.append(x)
            return x >= 2 ? x * 10 : nil
        }
        #expect(answer == 20 && asked == [1, 2])
        #expect([Int]().firstNonNil { $0 } == nil)
    }
}
