import Findings
import Foundation
import TrafficModel
import WebViewEmulation

/// Advice proven by replay (issue 70): for one preset and its findings on some recordings,
/// the changes the model proposes (one more registered mitigation, one option of the
/// strategy or of a mitigation set otherwise, a newer framework release, another preset),
/// each replayed and counted, the best first. Nothing is
/// advised that was not replayed here.
public struct Advice: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable {
        case addMitigation = "add-mitigation"
        /// One option of the strategy or of a mitigation the preset has, set otherwise.
        case setOption = "set-option"
        case version
        case preset
    }

    /// The preset advised.
    public var preset: String
    public var kind: Kind
    /// The change as a person reads it.
    public var change: String
    /// What makes it in a preset file: a mitigation object to add, the strategy or
    /// mitigation object to write in place of the one of its kind, `NAME@VERSION`, a
    /// preset's name.
    public var snippet: String
    /// Findings the change removes on the run's recordings, and those it adds.
    public var removes: Int
    public var adds: Int
    /// The findings removed, by code.
    public var codes: [String: Int]
    /// The findings removed, by rank (`important`, `document`, `api`...).
    public var ranks: [String: Int]
    /// The findings added, by code (none at error level: such a change is not advised).
    public var added: [String: Int]
    /// Of the removed findings, those at error level.
    public var removesErrors: Int
}

/// One preset's advice, and the groups of its findings no advised change removes.
public struct PresetAdvice: Sendable, Hashable, Codable {
    public struct Group: Sendable, Hashable, Codable {
        public var code: String
        public var rules: [String]
        public var count: Int
    }

    public var preset: String
    /// Findings of the preset on the recordings, replayed here.
    public var findings: Int
    public var advice: [Advice]
    public var unsolved: [Group]
}

/// A candidate change: the preset it makes, how to write it, and the recordings where the
/// groups it answers occur.
struct AdviceCandidate {
    var kind: Advice.Kind
    var change: String
    var snippet: String
    var preset: Preset
    var recordings: Set<Int>
    /// The mitigation an add-mitigation change adds, last of the preset's.
    var added: (any Mitigation)? = nil
    /// The recordings it may replay differently on (`VariantWatch`); nil when not watched:
    /// it may act on any.
    var acting: Set<Int>? = nil
    /// How `Adviser.Watched` and `all` key it.
    var key: String { Self.key(kind, snippet) }

    /// The key of the candidate of `kind` written as `snippet`: one per change.
    static func key(_ kind: Advice.Kind, _ snippet: String) -> String { kind.rawValue + " " + snippet }
}

/// The key that says two findings are the same: one code on one exchange about one subject.
struct FindingKey: Hashable {
    var recording: Int
    var sequence: Int
    var code: FindingCode
    var subject: String?
}

/// One group of findings: a code and the rules that acted.
struct FindingGroup: Hashable {
    var code: FindingCode
    var rules: [RuleID]
}
