import CookieJar
import TrafficModel

// The Cookie header a replayed request carries, against the one the recording holds: each
// cookie the recording carried and the replay did not (or with another value), and each the
// replay carried and the recording did not, with the rules that made it so and why.
extension WebViewEmulator {
    func cookieDifferences(recorded: [CookieProvenance.SentCookie], header: CookieHeaderChoice, jars: JarPair, time: Double, sessionStart: Double) -> [CookieDifference] {
        // The cookies sent that a recorded one accounts for, marked in place rather than
        // removed from a copy of the header's list.
        let sent = header.cookies
        var matched = IndexMarks()
        var unmatched: [CookieProvenance.SentCookie] = []
        for cookie in recorded {
            if let i = Self.firstUnmatched(sent, matched, { $0.name == cookie.name && $0.value == cookie.value }) {
                matched.mark(i)
            } else {
                unmatched.append(cookie)
            }
        }
        guard !unmatched.isEmpty || matched.count < sent.count else { return [] }
        var out: [CookieDifference] = []
        for cookie in unmatched {
            if let (rule, why) = header.withheld[cookie.name] ?? header.allWithheld {
                out.append(CookieDifference(name: cookie.name, recordedValue: cookie.value, sentValue: nil, rules: [rule], certain: true, explanation: why))
                continue
            }
            let instead = Self.firstUnmatched(sent, matched) { $0.name == cookie.name }
            if let i = instead { matched.mark(i) }
            var difference = missing(cookie, sentValue: instead.map { sent[$0].value }, header: header, jars: jars, time: time, sessionStart: sessionStart)
            // What the recording's side of the difference rests on, when it was inferred.
            if cookie.kind != .serverSet { difference.recordedSource = RecordedSource(kind: cookie.kind.rawValue, firstCarriedBy: cookie.setBy) }
            out.append(difference)
        }
        for (i, cookie) in sent.enumerated() where !matched[i] {
            out.append(extra(cookie, header: header, jars: jars, time: time))
        }
        return out
    }

    /// The first cookie of `sent` not yet matched that `fits`. `matched` passed in, not
    /// captured: a local function that captured it checked each access for exclusivity.
    static func firstUnmatched(_ sent: [Cookie], _ matched: IndexMarks, _ fits: (Cookie) -> Bool) -> Int? {
        for i in sent.indices where !matched[i] && fits(sent[i]) { return i }
        return nil
    }

    /// A cookie the recording carried that the replay did not, or with another value.
    func missing(_ cookie: CookieProvenance.SentCookie, sentValue: String?, header: CookieHeaderChoice, jars: JarPair, time: Double, sessionStart: Double) -> CookieDifference {
        let (name, side) = (cookie.name, header.side)
        if header.fixedAtLoad { return fixedAtLoad(cookie, sentValue: sentValue, header: header, jars: jars) }
        var rules = Self.ruleList(header.rule)
        if let blocker = jars.blocker(of: name, in: side) { rules.appendNew(blocker) }
        var difference = CookieDifference(name: name, recordedValue: cookie.value, sentValue: sentValue, rules: [], certain: true, explanation: "")
        // Each explanation is written into one buffer of bytes, made a string at the end.
        var why = Words(capacity: 256)
        if let sync = jars.pendingSync(named: name, to: side) {
            difference.setByRedirect = sync.origin.fromRedirect
            rules.appendNew(sync.origin.rules)
            rules.appendNew(sync.rule)
            explainLateSync(sync, to: side, time: time, sessionStart: sessionStart, into: &why, difference: &difference)
        } else if let origin = otherJarOrigin(named: name, side: side, jars: jars) {
            difference.setByRedirect = origin.fromRedirect
            rules.appendNew(origin.rules)
            if let held = jars.heldBack[name] { rules.appendNew(held) }
            let simulator = origin.isScriptWrite && profile.scriptWriteDelay == nil
            if simulator { rules.appendNew("J3") }
            why += "it was "
            origin.source.write(to: &why)
            why += " in "
            why += side.other.jarName
            why += " only"
            if simulator { why += ", and on the simulator a document.cookie write never reaches NativeJar" }
        } else if let elsewhere = jars[side].first(named: name) {
            // D2: held, but for another host (a Set-Cookie stored under an HTTPDNS IP).
            if let origin = jars.origin(of: elsewhere) { rules.appendNew(origin.rules) }
            why += side.jarName
            why += " holds it only for "
            why += elsewhere.domain
        } else {
            why += side.jarName
            why += " does not hold it"
        }
        difference.rules = rules
        difference.explanation = why.string
        return difference
    }

    /// C2: the loadRequest header was fixed before this redirect chain set the cookie.
    func fixedAtLoad(_ cookie: CookieProvenance.SentCookie, sentValue: String?, header: CookieHeaderChoice, jars: JarPair) -> CookieDifference {
        let origin = [JarSide.native, .web].firstNonNil { side in jars[side].first(named: cookie.name).flatMap { jars.origin(of: $0) } }
        let why: String
        if let origin, case .setCookie = origin.source {
            why = "the Cookie header given to loadRequest was built before the \(origin.what) and is carried unchanged to the redirect target"
        } else {
            // A cookie the first URL does not match (its path), or a script's.
            why = "the Cookie header given to loadRequest did not hold it (\(origin?.what ?? "set later")) and is carried unchanged to the redirect target"
        }
        return CookieDifference(name: cookie.name, recordedValue: cookie.value, sentValue: sentValue, rules: [header.rule], certain: true, explanation: why, setByRedirect: origin?.fromRedirect ?? false)
    }

    /// J1, J3: the cookie was in the other jar, its synchronisation due after the request.
    /// A script's write fell anywhere in its window, as likely at one moment as at another:
    /// the request misses the cookie when the write came within the synchronisation delay
    /// before it, with chance delay / window. Without an earlier request to bound it, the
    /// window opens at the session's start, and the write may even predate the recording:
    /// never certain.
    func explainLateSync(_ sync: JarPair.PendingSync, to side: JarSide, time: Double, sessionStart: Double, into why: inout Words, difference: inout CookieDifference) {
        why += "it was "
        sync.origin.source.write(to: &why)
        why += " in "
        why += side.other.jarName
        why += ", and the synchronisation to "
        why += side.jarName
        why += " ("
        why += sync.rule.rawValue
        why += ") was due "
        why.append(seconds: sync.due - time)
        why += " after this request"
        guard let written = sync.origin.writtenAt else { return }
        let delay = sync.due - written
        let bounded = sync.origin.scriptWindowStart != nil
        let window = time - (sync.origin.scriptWindowStart ?? sessionStart)
        guard delay <= window || !bounded else { return }
        difference.certain = false
        difference.likelihood = window > 0 ? min(1, max(0, delay / window)) : 1
        why += bounded ? "; the script wrote it within the " : "; no earlier request bounds when the script wrote it (within the "
        why.append(seconds: window)
        why += bounded ? " before the request and the " : " since the session started), and the "
        why += sync.rule.rawValue
        why += " delay is "
        why.append(seconds: delay)
        if bounded { why += ", so it is missed only if the write came late" }
    }

    /// A cookie the replay carried that the recording did not: a deletion not yet
    /// synchronised (J2), one no link carries (CAPC3, RNW2), or how the jar got it.
    func extra(_ cookie: Cookie, header: CookieHeaderChoice, jars: JarPair, time: Double) -> CookieDifference {
        let side = header.side
        var rules = Self.ruleList(header.rule)
        var why = Words(capacity: 128)
        why += side.jarName
        why += " still holds it"
        if let sync = jars.pendingSync(named: cookie.name, to: side), sync.isDeletion {
            rules.appendNew(sync.rule)
            why += ": its deletion ("
            why += sync.rule.rawValue
            why += ") reaches "
            why += side.jarName
            why += " "
            why.append(seconds: sync.due - time)
            why += " after this request"
        } else if let held = jars.heldBack[cookie.name], jars[side.other].first(named: cookie.name) == nil {
            // CAPC3, RNW2: deleted in the other jar, and the link never carries a deletion.
            if let origin = jars.origin(of: cookie.key, in: side) { rules.appendNew(origin.rules) }
            rules.appendNew(held)
            why += ": it was deleted in "
            why += side.other.jarName
            why += ", and no deletion reaches "
            why += side.jarName
            why += " ("
            why += held.rawValue
            why += ")"
        } else if let origin = jars.origin(of: cookie.key, in: side) {
            rules.appendNew(origin.rules)
            why += " ("
            origin.source.write(to: &why)
            why += ")"
        }
        return CookieDifference(name: cookie.name, recordedValue: nil, sentValue: cookie.value, rules: rules, certain: true, explanation: why.string)
    }
}
