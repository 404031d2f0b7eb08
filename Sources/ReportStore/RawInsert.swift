import Foundation
import GRDB
import GRDBSQLite

/// A prepared insert bound and stepped through SQLite's C interface: a large import writes
/// half a million rows, and building GRDB's `StatementArguments` for each (a boxed value
/// per column) cost more than SQLite's own work.
///
/// A row's values are kept until its statement runs: text in one buffer, bound without a
/// copy (`SQLITE_STATIC`) just before the step. Bound as transient, SQLite allocated and
/// copied every value, a fifth of the time a run's findings took to store.
///
/// An insert made with `rowsPerStatement` above one writes that many rows per statement
/// (`VALUES (...), (...)`): each statement opens and frees a cursor per table and index
/// and updates `sqlite_sequence`, once for all its rows (see `ReportStore.writeRun` for
/// why such a statement is `OR FAIL`, with foreign keys off). Its rows
/// reach the table when the statement fills or at `flush()`, which the owner calls before
/// anything reads the table and before its transaction commits.
final class RawInsert {
    let db: Database
    /// `INSERT INTO t (a, b) VALUES` and `(?, ?)`: the statement for n rows is the head
    /// and n tuples.
    private let head: String
    private let tuple: String
    /// Parameters per row.
    private let width: Int
    private let rowsPerStatement: Int
    /// Prepared statements by row count: the full one, and those a flush needs. They come
    /// from the connection's statement cache, so that storing a thousand small recordings
    /// compiles each insert once: a statement is bound, stepped and cleared in one call
    /// (`write`), so two inserts of the same SQL never meet on it.
    private var statements: [Int: Statement] = [:]

    /// A bound value; blobs wait in `blobs`, so that a value holds no reference and the
    /// rows' values are set and cleared without reference counting.
    private enum Value {
        case null, int(Int64), double(Double), text(start: Int, count: Int), blob(Int)
    }
    /// The statement's values, `width` per row, `rowsPerStatement` rows, null once written.
    /// Unchecked: only the insert's own methods touch them, one at a time, and the
    /// runtime's exclusivity check on every value cost more than storing it.
    @exclusivity(unchecked) private var values: [Value]
    private var blobs: [Data] = []
    /// The pending rows' text, one value after another. Byte 0 is a placeholder, so that
    /// empty text has an address too.
    private let text = RowText()
    /// Rows bound and not yet written.
    private var pendingRows = 0
    /// The bytes of the blobs those rows hold: past `maxPendingBlobBytes`, the rows are
    /// written before the statement fills, so that large bodies do not wait sixteen deep.
    private var pendingBlobBytes = 0
    static let maxPendingBlobBytes = 1 << 20

    /// An insert of one row per statement, written at each `run()`.
    convenience init(_ db: Database, sql: String) throws {
        try self.init(db, head: "", tuple: sql, rowsPerStatement: 1)
    }

    /// An insert of `rowsPerStatement` rows per statement: `head` is the statement up to
    /// `VALUES`, `tuple` one row's `(?, ...)`.
    init(_ db: Database, head: String, tuple: String, rowsPerStatement: Int) throws {
        precondition(rowsPerStatement >= 1)
        self.db = db
        self.head = head
        self.tuple = tuple
        self.rowsPerStatement = rowsPerStatement
        let one = try db.cachedStatement(sql: Self.sql(head, tuple, rows: 1))
        statements[1] = one
        width = Int(sqlite3_bind_parameter_count(one.sqliteStatement))
        values = Array(repeating: .null, count: width * rowsPerStatement)
        text.append(0)
    }

    private func set(_ i: Int32, _ value: Value) {
        values[pendingRows &* width &+ Int(i) &- 1] = value
    }

    func bind(_ i: Int32, _ value: Int) { set(i, .int(Int64(value))) }
    func bind(_ i: Int32, _ value: Int64) { set(i, .int(value)) }
    func bind(_ i: Int32, _ value: Double) { set(i, .double(value)) }
    func bind(_ i: Int32, _ value: Bool) { set(i, .int(value ? 1 : 0)) }
    func bind(_ i: Int32, _ value: Int?) { set(i, value.map { .int(Int64($0)) } ?? .null) }
    func bind(_ i: Int32, _ value: Int64?) { set(i, value.map { .int($0) } ?? .null) }
    func bind(_ i: Int32, _ value: Double?) { set(i, value.map { .double($0) } ?? .null) }
    func bind(_ i: Int32, _ value: String) {
        let start = text.count
        text.append(value)
        set(i, .text(start: start, count: text.count - start))
    }
    func bind(_ i: Int32, _ value: String?) {
        if let value { bind(i, value) } else { set(i, .null) }
    }
    /// Text that `write` appends to the row's buffer (JSON written in place).
    func bind(_ i: Int32, writing write: (RowText) -> Void) {
        let start = text.count
        write(text)
        set(i, .text(start: start, count: text.count - start))
    }
    func bind(_ i: Int32, _ value: Data) {
        blobs.append(value)
        pendingBlobBytes += value.count
        set(i, .blob(blobs.count - 1))
    }

    /// Rows bound and not yet written: the last `pendingCount` rows `run()` ended.
    var pendingCount: Int { pendingRows }

    /// Changes a value of a row still pending (`row` counts from the first pending), as
    /// an UPDATE of the written row would, without writing the rows first.
    func setPending(row: Int, _ i: Int32, _ value: Int?) {
        precondition(row >= 0 && row < pendingRows)
        values[row &* width &+ Int(i) &- 1] = value.map { .int(Int64($0)) } ?? .null
    }

    /// Ends the row: written now with one row per statement, else when the statement fills.
    func run() throws {
        pendingRows += 1
        if pendingRows == rowsPerStatement || pendingBlobBytes >= Self.maxPendingBlobBytes { try write() }
    }

    /// Writes the rows still pending.
    func flush() throws {
        if pendingRows > 0 { try write() }
    }

    private static func sql(_ head: String, _ tuple: String, rows: Int) -> String {
        let tuples = repeatElement(tuple, count: rows).joined(separator: ", ")
        return head.isEmpty ? tuples : head + " " + tuples
    }

    private func statement(rows: Int) throws -> Statement {
        if let statement = statements[rows] { return statement }
        let statement = try db.cachedStatement(sql: Self.sql(head, tuple, rows: rows))
        statements[rows] = statement
        return statement
    }

    private func write() throws {
        let rows = pendingRows
        let handle = try statement(rows: rows).sqliteStatement
        // The text stays where it is until `stepBindingBlobs` clears the bindings.
        let base = UnsafeRawPointer(text.base).assumingMemoryBound(to: CChar.self)
        var blobParameters: [(parameter: Int32, blob: Int)] = []
        for k in 0..<(rows * width) {
            let parameter = Int32(k + 1)
            switch values[k] {
            case .null: break  // unbound parameters are NULL
            case .int(let v): sqlite3_bind_int64(handle, parameter, v)
            case .double(let v): sqlite3_bind_double(handle, parameter, v)
            case .text(let start, let count):
                // Static: the buffer outlives the step, after which every binding is cleared.
                sqlite3_bind_text(handle, parameter, base + start, Int32(count), nil)
            case .blob(let blob): blobParameters.append((parameter, blob))
            }
        }
        let code = stepBindingBlobs(handle, blobParameters[...])
        text.truncate(to: 1)
        if !blobs.isEmpty { blobs.removeAll(keepingCapacity: true) }
        pendingBlobBytes = 0
        values.withUnsafeMutableBufferPointer { $0[0..<(rows * width)].update(repeating: .null) }
        pendingRows = 0
        guard code == SQLITE_DONE else {
            let message = db.sqliteConnection.map { String(cString: sqlite3_errmsg($0)) } ?? "SQLite error \(code)"
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: Self.sql(head, tuple, rows: 1))
        }
    }

    /// Binds each pending blob to its parameter, steps the statement, then resets it and
    /// clears its bindings. Each blob's bytes are bound where they are (`SQLITE_STATIC`)
    /// inside its `withUnsafeBytes`, one closure inside the next, so that every pointer is
    /// valid for as long as it is bound. Bound as transient, SQLite copied every body
    /// before copying it again into its pages.
    private func stepBindingBlobs(_ handle: OpaquePointer, _ parameters: ArraySlice<(parameter: Int32, blob: Int)>) -> Int32 {
        guard let (parameter, blob) = parameters.first else {
            let code = sqlite3_step(handle)
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
            return code
        }
        return blobs[blob].withUnsafeBytes { bytes in
            if bytes.isEmpty {
                sqlite3_bind_zeroblob(handle, parameter, 0)
            } else {
                sqlite3_bind_blob(handle, parameter, bytes.baseAddress, Int32(bytes.count), nil)
            }
            return stepBindingBlobs(handle, parameters.dropFirst())
        }
    }
}
