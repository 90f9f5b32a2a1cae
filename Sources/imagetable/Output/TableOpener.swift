import Foundation
import ImageTableCore

/// Opening tables for the read-only commands.
enum TableOpener {
    /// Opens `path` read-only, refusing directories and special files up front (opening a FIFO
    /// would block, and the core would call a directory an insecure file).
    ///
    /// - Throws: ``ImageTableError`` with the core's code, worded for the commonest cases
    ///   (`not-found`: "no such file"; `permission-denied`), and always naming `path`.
    static func open(_ path: String) throws(ImageTableError) -> ImageTableReader {
        var st = stat()
        if stat(path, &st) == 0 {
            switch st.st_mode & S_IFMT {
            case S_IFDIR:
                throw ImageTableError(.isADirectory, "is a directory, not an image table", path: path)
            case S_IFREG:
                break
            default:
                throw ImageTableError(.notATable, "is not a regular file, so not an image table", path: path)
            }
        }
        do {
            return try ImageTableReader(path: path)
        } catch {
            switch error.code {
            case .notFound:
                let why = error.errno == ENOTDIR ? "no such file (a part of the path is not a directory)" : "no such file"
                throw ImageTableError(.notFound, why, path: path, errno: error.errno)
            case .permissionDenied:
                throw ImageTableError(.permissionDenied, "permission denied: this user cannot read the file", path: path, errno: error.errno)
            default:
                throw error.at(error.path ?? path)
            }
        }
    }
}

/// Diagnostics go to standard error, so that standard output holds only the report; what was
/// printed to standard output before is flushed first, so that the two keep their order in one
/// file (``StandardOutputFlush/flushBeforeStandardError()``).
///
/// Every line passes through ``PrintableText/escaped(_:limit:)`` here: a line names files and
/// keys, and carries libvips' messages (which quote file names), all of which a hostile producer
/// chooses. A line break in a file name would forge a whole extra `path: error: …` line, and an
/// escape sequence would drive the terminal. Escaping is idempotent, so parts escaped earlier
/// (keys in messages) come out the same.
enum StandardError {
    /// Writes `line`, escaped for the terminal, and a line break to standard error.
    static func print(_ line: String) {
        StandardOutputFlush.flushBeforeStandardError()
        SystemIO.writeStandardError(PrintableText.line(line) + "\n")
    }

    /// Writes `text`, already escaped (a rendered report, or terminal control the caller has
    /// escaped around), each line kept from reading as a CI command.
    static func write(_ text: String) {
        StandardOutputFlush.flushBeforeStandardError()
        SystemIO.writeStandardError(PrintableText.uncommanded(text))
    }

    /// Writes an error compiler-style: `path: error: message (cause) [code]`.
    static func report(_ error: ImageTableError) {
        print(error.description)
    }
}

/// Text reports go to standard output through here: already escaped for the terminal, each line
/// is kept from reading as a CI command (``PrintableText/uncommanded(_:)``), as every line
/// ``StandardError`` writes is. JSON documents and PNGs are written as they are.
enum StandardOutput {
    /// Writes `text`: whole lines, each ending in a line break.
    static func write(_ text: String) {
        errno = 0
        Swift.print(PrintableText.uncommanded(text), terminator: "")
        // A report larger than the buffer is written past it, and its error number is gone by
        // the final flush: kept now, so that `> /dev/full` says "No space left on device".
        StandardOutputFlush.noteFailure(errno: errno)
    }
}
