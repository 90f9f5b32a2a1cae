import Foundation
import ImageTableCore

/// The bake state's tables and the SQL that reads and writes them (`docs/BAKE.md`, "The state").
///
/// `files` holds one row per source file, keyed by path, with the `kind` of source it is, so a
/// later source kind (a URL) can keep its own validators (an HTTP `ETag`, `Last-Modified`) in
/// `validators` beside the stat fields files use. `formats` holds each table's canonical
/// parameters at the last bake.
enum BakeStateSchema {
    static let create = """
        CREATE TABLE IF NOT EXISTS files (
            path TEXT NOT NULL PRIMARY KEY,
            kind TEXT NOT NULL DEFAULT 'file',
            device INTEGER NOT NULL,
            inode INTEGER NOT NULL,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            ctime_ns INTEGER NOT NULL,
            fingerprint BLOB NOT NULL,
            checked_ns INTEGER NOT NULL,
            tables TEXT NOT NULL DEFAULT ''
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS validators (
            path TEXT NOT NULL,
            name TEXT NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY (path, name)
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS formats (
            table_file TEXT NOT NULL PRIMARY KEY,
            parameters TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS failures (
            path TEXT NOT NULL,
            settings TEXT NOT NULL,
            device INTEGER NOT NULL,
            inode INTEGER NOT NULL,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            ctime_ns INTEGER NOT NULL,
            checked_ns INTEGER NOT NULL,
            code TEXT NOT NULL,
            message TEXT NOT NULL,
            cause TEXT,
            PRIMARY KEY (path, settings)
        ) WITHOUT ROWID;
        PRAGMA user_version = \(BakeState.schemaVersion);
        """

    /// The files the state holds, found by their path's digest (the paths themselves stay in the
    /// database: ``forEachPath(_:_:)`` reads them when they are needed).
    static func loadFiles(_ db: SQLiteDatabase) throws(ImageTableError) -> BakeState.KnownFiles {
        let rows = try db.prepare("""
            SELECT path, device, inode, size, mtime_ns, ctime_ns, fingerprint, checked_ns FROM files WHERE kind = 'file'
            """)
        try rows.bind([])
        var files: [(digest: BakeState.PathDigest, known: BakeState.Known)] = []
        if let count = try? db.prepare("SELECT count(*) FROM files WHERE kind = 'file'"), (try? count.step()) == true { files.reserveCapacity(Int(count.int(0))) }
        while try rows.step() {
            let bytes = rows.blob(6)
            guard bytes.count == 16, let digest = rows.withText(0, { $0.map(BakeState.PathDigest.init) }) else { continue }
            let uuid = bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
            let stat = FileStat(device: UInt64(bitPattern: rows.int(1)), inode: UInt64(bitPattern: rows.int(2)), size: Int(rows.int(3)),
                                modifiedNs: rows.int(4), changedNs: rows.int(5))
            files.append((digest, BakeState.Known(stat: stat, fingerprint: uuid, checkedNs: rows.int(7))))
        }
        return BakeState.KnownFiles(consume files)
    }

    /// Calls `body` with the path of every file row, in the database's order.
    static func forEachPath(_ db: SQLiteDatabase, _ body: (String) -> Void) throws(ImageTableError) {
        let rows = try db.prepare("SELECT path FROM files WHERE kind = 'file'")
        try rows.bind([])
        while try rows.step() {
            if let path = rows.text(0) { body(path) }
        }
    }

    /// The failed decodes the state remembers (`BakeState+Failures.swift`). A state made before
    /// the table existed, opened read-only (a dry run), has none.
    static func loadFailures(_ db: SQLiteDatabase) throws(ImageTableError) -> [BakeState.FailureKey: BakeState.FailureRecord] {
        guard let rows = try? db.prepare("""
            SELECT path, settings, device, inode, size, mtime_ns, ctime_ns, checked_ns, code, message, cause FROM failures
            """) else { return [:] }
        try rows.bind([])
        var failures: [BakeState.FailureKey: BakeState.FailureRecord] = [:]
        while try rows.step() {
            guard let path = rows.text(0), let settings = rows.text(1), let code = rows.text(8).flatMap(ImageTableError.Code.init),
                  let message = rows.text(9) else { continue }
            let stat = FileStat(device: UInt64(bitPattern: rows.int(2)), inode: UInt64(bitPattern: rows.int(3)), size: Int(rows.int(4)),
                                modifiedNs: rows.int(5), changedNs: rows.int(6))
            failures[BakeState.FailureKey(path: path, settings: settings)] =
                BakeState.FailureRecord(stat: stat, checkedNs: rows.int(7), code: code, message: message, cause: rows.text(10))
        }
        return failures
    }

    static func loadFormats(_ db: SQLiteDatabase) throws(ImageTableError) -> [String: String] {
        let rows = try db.prepare("SELECT table_file, parameters FROM formats")
        try rows.bind([])
        var formats: [String: String] = [:]
        while try rows.step() {
            if let file = rows.text(0), let parameters = rows.text(1) { formats[file] = parameters }
        }
        return formats
    }

    /// Writes `files` in order (a later entry for a path wins; `nil` deletes) and `formats`, in
    /// one transaction.
    static func write<Files: Sequence<(path: String, record: BakeState.FileRecord?)>>(
        _ files: Files, _ formats: [String: String], failures: [(key: BakeState.FailureKey, record: BakeState.FailureRecord?)] = [],
        to db: SQLiteDatabase) throws(ImageTableError) {
        try db.transaction { () throws(ImageTableError) in
            let upsert = try db.prepare("""
                INSERT OR REPLACE INTO files (path, kind, device, inode, size, mtime_ns, ctime_ns, fingerprint, checked_ns, tables)
                VALUES (?1, 'file', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                """)
            let delete = try db.prepare("DELETE FROM files WHERE path = ?1")
            for (path, record) in files {
                guard let record else {
                    try delete.run([path])
                    continue
                }
                let s = record.stat
                let uuid = withUnsafeBytes(of: record.fingerprint.uuid) { Array($0) }
                try upsert.run([path, Int64(bitPattern: s.device), Int64(bitPattern: s.inode), s.size, s.modifiedNs, s.changedNs,
                                uuid, record.checkedNs, record.tables.joined(separator: " ")])
            }
            let format = try db.prepare("INSERT OR REPLACE INTO formats (table_file, parameters) VALUES (?1, ?2)")
            for (file, parameters) in formats { try format.run([file, parameters]) }
            if !failures.isEmpty {
                let remember = try db.prepare("""
                    INSERT OR REPLACE INTO failures (path, settings, device, inode, size, mtime_ns, ctime_ns, checked_ns, code, message, cause)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                    """)
                let forget = try db.prepare("DELETE FROM failures WHERE path = ?1 AND settings = ?2")
                for (key, record) in failures {
                    guard let record else {
                        try forget.run([key.path, key.settings])
                        continue
                    }
                    let s = record.stat
                    try remember.run([key.path, key.settings, Int64(bitPattern: s.device), Int64(bitPattern: s.inode), s.size, s.modifiedNs,
                                      s.changedNs, record.checkedNs, record.code.rawValue, record.message, record.cause])
                }
            }
            TestHook.run("state-commit")
        }
    }
}
