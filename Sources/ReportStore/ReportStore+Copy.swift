import Foundation
import GRDB

extension ReportStore {
    /// Moves recordings stored in another database file of this schema into this one (the
    /// scratch database `record -i` imports into while it captures): their rows and bodies
    /// are copied by SQL in one transaction, neither read into memory nor imported again,
    /// so that this database's write lock is held for the copy only, not the capture. A
    /// recording of the same name here is replaced with `replace`; otherwise `NameTaken`,
    /// and nothing is copied.
    public func copyRecordings(named names: [String], from path: String, replace: Bool) throws -> [ImportResult] {
        try writer.writeWithoutTransaction { db in
            // SQLite attaches a database outside a transaction only.
            try db.execute(sql: "ATTACH DATABASE ? AS scratch", arguments: [path])
            defer { try? db.execute(sql: "DETACH DATABASE scratch") }
            var results: [ImportResult] = []
            try db.inTransaction(.immediate) {
                // Rows go in table by table, children of a row sometimes before it: the
                // foreign keys are checked at the commit.
                try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
                let bodyColumns = try Self.columnNames(of: "body", db).map(\.quotedDatabaseIdentifier).joined(separator: ", ")
                try db.execute(sql: "INSERT OR IGNORE INTO main.body (\(bodyColumns)) SELECT \(bodyColumns) FROM scratch.body")
                results = try names.map { try Self.copyRecording(named: $0, replace: replace, db) }
                return .commit
            }
            return results
        }
    }

    /// Copies one recording from the attached `scratch` database, with the rows of every
    /// table that belongs to it (those `deleteRecording` deletes with it).
    static func copyRecording(named name: String, replace: Bool, _ db: Database) throws -> ImportResult {
        guard let source = try Int64.fetchOne(db, sql: "SELECT id FROM scratch.recording WHERE name = ?", arguments: [name]) else {
            throw DatabaseError(resultCode: .SQLITE_NOTFOUND, message: "the scratch database holds no recording named \(name)")
        }
        var replaced = false
        if let existing = try Int64.fetchOne(db, sql: "SELECT id FROM main.recording WHERE name = ?", arguments: [name]) {
            guard replace else { throw NameTaken(name: name) }
            try deleteRecording(existing, db)
            replaced = true
        }
        let recordingColumns = try columnNames(of: "recording", db).filter { $0 != "id" }.map(\.quotedDatabaseIdentifier).joined(separator: ", ")
        try db.execute(sql: "INSERT INTO main.recording (\(recordingColumns)) SELECT \(recordingColumns) FROM scratch.recording WHERE id = ?", arguments: [source])
        let id = db.lastInsertedRowID
        for table in try recordingTables(db) {
            let all = try columnNames(of: table, db)
            let copied = all.filter { $0 != "id" && $0 != "recording_id" }.map(\.quotedDatabaseIdentifier)
            let into = (["recording_id"] + copied).joined(separator: ", ")
            let values = (["?"] + copied).joined(separator: ", ")
            // In the order they were written: diagnostics and exchanges are listed by id.
            let order = all.contains("id") ? " ORDER BY id" : ""
            let quoted = table.quotedDatabaseIdentifier
            try db.execute(sql: "INSERT INTO main.\(quoted) (\(into)) SELECT \(values) FROM scratch.\(quoted) WHERE recording_id = ?\(order)", arguments: [id, source])
        }
        return .imported(id: id, replaced: replaced)
    }

    /// The tables whose rows belong to a recording: deleted with it through `recording_id`.
    static func recordingTables(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: """
            SELECT m.name FROM main.sqlite_master m JOIN pragma_foreign_key_list(m.name) f
            WHERE m.type = 'table' AND f."table" = 'recording' AND f.on_delete = 'CASCADE' AND f."from" = 'recording_id'
            ORDER BY m.name
            """)
    }

    /// A table's columns in this database, in their order.
    static func columnNames(of table: String, _ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?, 'main')", arguments: [table])
    }
}
