import Foundation
import ImageTableCore
import Testing
@testable import ImageBake

/// The one place the package calls SQLite: each value binds as its own type, and a failed step
/// names the statement it ran, though the statement's text is built only then.
struct SQLiteTests {
    private static func database() throws -> (SQLiteDatabase, String) {
        let path = NSTemporaryDirectory() + "sqlite-\(UUID().uuidString).db"
        return (try SQLiteDatabase(path: path), path)
    }

    /// Integers of each width, text, a blob and NULL come back as they went in.
    @Test func everyKindOfValueRoundTrips() throws {
        let (db, path) = try Self.database()
        defer { db.close(); unlink(path) }
        try db.execute("CREATE TABLE t (a, b, c, d, e, f)")
        try db.prepare("INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
            .run([-7, Int64.min, UInt64.max, "naïve ✓", [UInt8]([0, 255, 1]), nil])
        let read = try db.prepare("SELECT a, b, c, d, e, typeof(f) FROM t")
        #expect(try read.step())
        #expect(read.int(0) == -7)
        #expect(read.int(1) == Int64.min)
        #expect(UInt64(bitPattern: read.int(2)) == UInt64.max)
        #expect(read.text(3) == "naïve ✓")
        #expect(read.blob(4) == [0, 255, 1])
        #expect(read.text(5) == "null")
        #expect(try !read.step())
    }

    /// Text is bound with its length, so a NUL inside it is kept, not the end of it.
    @Test func textKeepsAnEmbeddedNUL() throws {
        let (db, path) = try Self.database()
        defer { db.close(); unlink(path) }
        try db.execute("CREATE TABLE t (a)")
        try db.prepare("INSERT INTO t VALUES (?1)").run(["a\u{0}b"])
        let read = try db.prepare("SELECT length(CAST(a AS BLOB)) FROM t")
        #expect(try read.step())
        #expect(read.int(0) == 3)
    }

    /// A step that fails says which statement it was running, and SQLite's reason.
    @Test func aFailedStepNamesItsStatement() throws {
        let (db, path) = try Self.database()
        defer { db.close(); unlink(path) }
        try db.execute("CREATE TABLE t (a INTEGER PRIMARY KEY)")
        let insert = try db.prepare("INSERT INTO t (a) VALUES (?1)")
        try insert.run([1])
        #expect {
            try insert.run([1])
        } throws: { error in
            guard let error = error as? ImageTableError else { return false }
            return error.code == .io && (error.cause ?? "").contains("UNIQUE constraint failed")
                && (error.cause ?? "").contains("in `INSERT INTO t (a) VALUES (?1)`")
        }
    }

    /// A bind SQLite refuses (a parameter the statement does not have) is an error, not ignored.
    @Test func aRefusedBindThrows() throws {
        let (db, path) = try Self.database()
        defer { db.close(); unlink(path) }
        try db.execute("CREATE TABLE t (a)")
        let insert = try db.prepare("INSERT INTO t VALUES (?1)")
        #expect(throws: ImageTableError.self) { try insert.run([1, 2]) }
    }
}
