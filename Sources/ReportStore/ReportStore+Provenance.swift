import CookieJar
import GRDB
import TrafficModel

extension ReportStore {
    /// The cookie provenance stored with a recording, equal to walking the recording read
    /// back; nil when no recording has the name, or when its rows lack what v24 added and
    /// its provenance waits to be walked again (`recordingsAwaitingProvenance`).
    public func provenance(named name: String) throws -> CookieProvenance? {
        try writer.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT id, exchange_count FROM recording WHERE name = ?", arguments: [name]) else { return nil }
            return try Self.loadProvenance(db, id: row[0], exchanges: row[1])
        }
    }

    /// A recording and its stored cookie provenance, read together in one read; nil when
    /// unknown. The provenance is nil where `provenance(named:)` gives none: walk it then.
    public func recordingWithProvenance(named name: String) throws -> (recording: Recording, provenance: CookieProvenance?)? {
        try writer.read { db in
            guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM recording WHERE name = ?", arguments: [name]),
                let recording = try Self.loadRecording(db, id: id)
            else { return nil }
            return (recording, try Self.loadProvenance(db, id: id, exchanges: recording.exchanges.count))
        }
    }

    /// The provenance of the recording `id` of `exchanges` exchanges from its rows; nil
    /// when it waits to be walked, or a row lacks a column v24 added or names an exchange
    /// the recording does not have: a walk gives it then, never a guess.
    static func loadProvenance(_ db: Database, id: Int64, exchanges: Int) throws -> CookieProvenance? {
        if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM provenance_pending WHERE recording_id = ?)", arguments: [id]) ?? false { return nil }
        guard let sent = try loadSentCookies(db, id: id, exchanges: exchanges), let inferred = try loadInferences(db, id: id, exchanges: exchanges) else { return nil }
        return CookieProvenance(sent: sent, inferred: inferred)
    }

    /// Per exchange, the cookies its request carried, in header order.
    static func loadSentCookies(_ db: Database, id: Int64, exchanges: Int) throws -> [[CookieProvenance.SentCookie]]? {
        var sent = Array(repeating: [CookieProvenance.SentCookie](), count: exchanges)
        let rows = try Row.fetchCursor(db, sql: "SELECT sequence, name, value, provenance, set_by, set_by_hop FROM cookie_sent WHERE recording_id = ? ORDER BY sequence, position", arguments: [id])
        while let r = try rows.next() {
            let sequence: Int = r[0], raw: String = r[3]
            guard sent.indices.contains(sequence), let value: String = r[2] else { return nil }
            guard let kind = CookieProvenance.Kind(rawValue: raw) else {
                throw StoreError.unknownValue(table: "cookie_sent", row: Int64(sequence), column: "provenance", value: raw)
            }
            sent[sequence].append(CookieProvenance.SentCookie(name: r[1], value: value, kind: kind, setBy: r[4], hop: r[5]))
        }
        return sent
    }

    /// Per exchange, the events inferred before its request, in the order the walk made them.
    static func loadInferences(_ db: Database, id: Int64, exchanges: Int) throws -> [[CookieProvenance.Inference]]? {
        var inferred = Array(repeating: [CookieProvenance.Inference](), count: exchanges)
        let rows = try Row.fetchCursor(db, sql: """
            SELECT sequence, kind, name, value, domain, host_only, path, expiry, secure, http_only, same_site,
              creation, last_access, creation_order, window_start, written_by
            FROM cookie_inference WHERE recording_id = ? ORDER BY sequence, position
            """, arguments: [id])
        while let r = try rows.next() {
            let sequence: Int = r[0], raw: String = r[1]
            guard inferred.indices.contains(sequence), let cookie = try storedCookie(r, sequence: sequence) else { return nil }
            guard let kind = CookieProvenance.Inference.Kind(rawValue: raw) else {
                throw StoreError.unknownValue(table: "cookie_inference", row: Int64(sequence), column: "kind", value: raw)
            }
            inferred[sequence].append(CookieProvenance.Inference(kind: kind, cookie: cookie, windowStart: r[14], writtenBy: r[15]))
        }
        return inferred
    }

    /// An inference's cookie from columns 2-13 of its row; nil when a column v24 added is NULL.
    static func storedCookie(_ r: Row, sequence: Int) throws -> Cookie? {
        guard let value: String = r[3], let hostOnly: Bool = r[5], let secure: Bool = r[8], let httpOnly: Bool = r[9], let rawSameSite: String = r[10],
            let creation: Double = r[11], let lastAccess: Double = r[12], let order: Int64 = r[13]
        else { return nil }
        guard let sameSite = Cookie.SameSite(rawValue: rawSameSite) else {
            throw StoreError.unknownValue(table: "cookie_inference", row: Int64(sequence), column: "same_site", value: rawSameSite)
        }
        var cookie = Cookie(
            name: r[2], value: value, domain: r[4], hostOnly: hostOnly, path: r[6], expiry: r[7], secure: secure, httpOnly: httpOnly, sameSite: sameSite,
            creation: creation, lastAccess: lastAccess)
        cookie.creationOrder = UInt64(bitPattern: order)
        return cookie
    }
}
