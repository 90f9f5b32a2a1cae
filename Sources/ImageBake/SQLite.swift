import CSQLite
import Foundation
import ImageTableCore

/// A SQLite connection, owned by one thread at a time: the one place this package calls SQLite.
///
/// Every return code is checked here and becomes an ``ImageTableError`` that carries SQLite's
/// own message as its cause: `corrupt` when the file is damaged or not a database, `no-space`
/// for a full disk, `locked` when another connection holds it past the busy timeout, `io`
/// otherwise. Statements are owned by ``Statement`` values and finalized when they go.
final class SQLiteDatabase {
    private let handle: OpaquePointer
    private var closed = false
    /// The database file, for errors.
    let path: String

    /// Opens (creating) the database at `path`.
    ///
    /// - Parameters:
    ///   - path: the database file.
    ///   - readOnly: open without writing or creating.
    ///   - create: create the file when it is missing (not with `readOnly`).
    ///   - immutable: with `readOnly`, read it as a file no one changes (SQLite's `immutable`
    ///     URI parameter): no lock, and no `-wal` or `-shm` made or read.
    ///   - busyTimeout: seconds to wait for another connection's lock.
    /// - Throws: ``ImageTableError``.
    init(path: String, readOnly: Bool = false, create: Bool = true, immutable: Bool = false, busyTimeout: Double = 10) throws(ImageTableError) {
        self.path = path
        var db: OpaquePointer?
        var flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)) | SQLITE_OPEN_NOMUTEX
        var name = path
        if immutable {
            flags |= SQLITE_OPEN_URI
            name = "file:" + Self.percentEncoded(path) + "?immutable=1"
        }
        let status = sqlite3_open_v2(name, &db, flags, nil)
        guard status == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(db)
            throw Self.error(status, message, path: path)
        }
        handle = db
        sqlite3_busy_timeout(db, Int32(busyTimeout * 1000))
    }

    /// `path` for a `file:` URI: every byte but letters, digits and `/-._~` as `%XX`, which
    /// SQLite decodes (a `?`, `#` or `%` in a path would otherwise end or change it).
    private static func percentEncoded(_ path: String) -> String {
        var out = ""
        for byte in path.utf8 {
            let c = Character(UnicodeScalar(byte))
            if byte < 0x80 && (c.isLetter || c.isNumber || "/-._~".contains(c)) {
                out.append(c)
            } else {
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    deinit { close() }

    /// Closes the connection now rather than when the last reference goes (a bake closes its
    /// state before it releases the tables' locks). Statements still alive are finalized by
    /// their own deinit; SQLite frees the connection after the last one. Idempotent.
    func close() {
        guard !closed else { return }
        closed = true
        sqlite3_close_v2(handle)
    }

    /// Runs SQL that returns no rows (several statements allowed).
    func execute(_ sql: String) throws(ImageTableError) {
        try checkOpen()
        try check(sqlite3_exec(handle, sql, nil, nil, nil), running: sql)
    }

    /// Compiles one statement.
    func prepare(_ sql: String) throws(ImageTableError) -> Statement {
        try checkOpen()
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v2(handle, sql, -1, &statement, nil), running: sql)
        return Statement(statement!, database: self)
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    func transaction<T>(_ body: () throws(ImageTableError) -> T) throws(ImageTableError) -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    private func checkOpen() throws(ImageTableError) {
        if closed { throw ImageTableError(.io, "the bake state database is closed", path: path) }
    }

    /// Throws unless `status` is `SQLITE_OK` or one of `accepted`; the error names the SQL that
    /// was running, so a report says which step of the state failed.
    ///
    /// Called for every bind and step of every row a commit writes: nothing is built unless the
    /// call failed (a set of accepted codes and the statement's text per call were two thirds
    /// of a commit's time).
    @discardableResult
    func check(_ status: Int32, accepted: Int32 = SQLITE_OK, running sql: @autoclosure () -> String? = nil) throws(ImageTableError) -> Int32 {
        guard status == SQLITE_OK || status == accepted else {
            var message = String(cString: sqlite3_errmsg(handle))
            if let sql = sql() { message += " in `\(sql.prefix(60))`" }
            throw Self.error(sqlite3_extended_errcode(handle), message, path: path, systemErrno: sqlite3_system_errno(handle))
        }
        return status
    }

    /// The error of a failed SQLite call. An I/O error that the system reported as `ENOSPC`,
    /// `EDQUOT` or `EFBIG`
    /// (growing the WAL's shared-memory file on a full disk is `SQLITE_IOERR_SHMSIZE`) is
    /// `noSpace`, as `SQLITE_FULL` is.
    private static func error(_ status: Int32, _ message: String, path: String, systemErrno: Int32 = 0) -> ImageTableError {
        let code: ImageTableError.Code = switch status & 0xFF {
        case SQLITE_CORRUPT, SQLITE_NOTADB: .corrupt
        case SQLITE_FULL: .noSpace
        // A quota and a file size limit (`ulimit -f`) are a full disk to this process, as the
        // tables' own writes report them.
        case SQLITE_IOERR where [ENOSPC, EDQUOT, EFBIG].contains(systemErrno): .noSpace
        case SQLITE_BUSY, SQLITE_LOCKED: .locked
        case SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_READONLY: .permissionDenied
        default: .io
        }
        return ImageTableError(code, "the bake state database failed", path: path, cause: "SQLite: \(message) (\(status))")
    }

    /// A compiled statement: bind, step, read columns, reset.
    final class Statement {
        private let handle: OpaquePointer
        private let database: SQLiteDatabase

        fileprivate init(_ handle: OpaquePointer, database: SQLiteDatabase) {
            self.handle = handle
            self.database = database
        }

        deinit { sqlite3_finalize(handle) }

        /// Binds values to `?1`, `?2`…: integers, text, blobs (`[UInt8]`) or `nil`.
        func bind(_ values: [(any SQLiteValue)?]) throws(ImageTableError) {
            try database.check(sqlite3_reset(handle))
            for (i, value) in values.enumerated() {
                let index = Int32(i + 1)
                try database.check(value.map { $0.bind(to: handle, at: index) } ?? sqlite3_bind_null(handle, index))
            }
        }

        /// Steps once: `true` when a row is ready to read, `false` when the statement is done.
        func step() throws(ImageTableError) -> Bool {
            let status = sqlite3_step(handle)
            if status == SQLITE_ROW { return true }
            try database.check(status, accepted: SQLITE_DONE, running: sqlite3_sql(handle).map { String(cString: $0) })
            return false
        }

        /// Binds and runs a statement that returns no rows.
        func run(_ values: [(any SQLiteValue)?] = []) throws(ImageTableError) {
            try bind(values)
            while try step() {}
        }

        func int(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

        func text(_ column: Int32) -> String? {
            sqlite3_column_text(handle, column).map { String(cString: $0) }
        }

        /// Calls `body` with a text column's UTF-8 bytes, valid only during the call (`nil` for
        /// NULL): for a caller that keeps a digest of the text, not the text.
        func withText<R>(_ column: Int32, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
            guard let text = sqlite3_column_text(handle, column) else { return body(nil) }
            return body(UnsafeRawBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column))))
        }

        func blob(_ column: Int32) -> [UInt8] {
            let count = Int(sqlite3_column_bytes(handle, column))
            guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return [] }
            return Array(UnsafeRawBufferPointer(start: bytes, count: count))
        }
    }
}

/// A value a statement binds: each type binds itself, where a cast per value and per type tried
/// (integers first) had cost a commit more than SQLite's own work.
protocol SQLiteValue {
    /// Binds this value to parameter `index` of `statement`; SQLite's status.
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32
}

extension Int: SQLiteValue {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, Int64(self)) }
}

extension Int64: SQLiteValue {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, self) }
}

extension UInt64: SQLiteValue {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, Int64(bitPattern: self)) }
}

extension String: SQLiteValue {
    /// With its length in bytes: as a C string (length −1) it ended at its first NUL.
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        guard !isEmpty else { return csqlite_bind_text(statement, index, "", 0) }
        var text = self
        return text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { csqlite_bind_text(statement, index, $0.baseAddress, Int32(bytes.count)) }
        }
    }
}

extension Array: SQLiteValue where Element == UInt8 {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        withUnsafeBytes { csqlite_bind_blob(statement, index, $0.baseAddress, Int32($0.count)) }
    }
}
