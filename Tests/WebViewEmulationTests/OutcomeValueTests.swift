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
        original.bodyRules = ["P1"]
        var copy = original
        copy.bodyRules.append("S5")
        copy.changes.append(Change(rule: "S5", what: "re-sent"))
        copy.deliveredMethod = "GET"
        copy.failedRules = ["D4"]
        #expect(original.bodyRules == ["P1"])
        #expect(original.changes.isEmpty)
        #expect(original.deliveredMethod == "POST")
        #expect(original.failedRules.isEmpty)
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
        outcomes[0].redirectRules = ["P4"]
        #expect(before.pageURL == nil)
        #expect(before.redirectRules.isEmpty)
        #expect(outcomes[0].pageURL == "https://a.example/next")
    }
}
