import Foundation
import ImageTableCore

/// A failure the table commands report: a stable code, a message for people and the file it
/// concerns, printed compiler-style (`path: error: message [code]`) or as JSON.
///
/// The codes are the table core's (`TableError.Code`: `not-a-table`, `corrupt`,
/// `unsupported-version`, `insecure-file`, `io`…) plus three for the commonest ways a path
/// fails, which the core reports as `io`: `not-found`, `permission-denied` and `is-a-directory`.
/// docs/CLI.md lists them all.
struct ToolError: Error, Equatable, Encodable {
    /// The stable code.
    let code: String
    /// A sentence for people.
    let message: String
    /// The file concerned.
    let path: String

    /// `path: error: message [code]`.
    var line: String { "\(path): error: \(message) [\(code)]" }

    init(code: String, message: String, path: String) {
        self.code = code
        self.message = message
        self.path = path
    }

    /// The table error, with `not-found` and `permission-denied` told apart from other I/O.
    init(_ error: TableError, path: String) {
        self.path = error.path ?? path
        switch (error.code, error.errno) {
        case (.io, ENOENT?):
            code = "not-found"
            message = "no such file"
        case (.io, ENOTDIR?):
            code = "not-found"
            message = "no such file (a part of the path is not a directory)"
        case (.io, EACCES?), (.io, EPERM?):
            code = "permission-denied"
            message = "permission denied: this user cannot read the file"
        default:
            code = error.code.rawValue
            message = error.message
        }
    }

    /// Prints the compiler-style line on standard error.
    func report() {
        StandardError.print(line)
    }
}

/// Opening tables for the read-only commands.
enum TableOpener {
    /// Opens `path` read-only, refusing directories and special files up front (opening a FIFO
    /// would block, and the core would call a directory an insecure file).
    static func open(_ path: String) throws(ToolError) -> ImageTableReader {
        var st = stat()
        if stat(path, &st) == 0 {
            switch st.st_mode & S_IFMT {
            case S_IFDIR:
                throw ToolError(code: "is-a-directory", message: "is a directory, not an image table", path: path)
            case S_IFREG:
                break
            default:
                throw ToolError(code: "not-a-table", message: "is not a regular file, so not an image table", path: path)
            }
        }
        do {
            return try ImageTableReader(path: path)
        } catch let error as TableError {
            throw ToolError(error, path: path)
        } catch {
            throw ToolError(code: "io", message: "\(error)", path: path)
        }
    }
}

/// Diagnostics go to standard error, so that standard output holds only the report.
enum StandardError {
    /// Writes `line` and a line break to standard error.
    static func print(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
