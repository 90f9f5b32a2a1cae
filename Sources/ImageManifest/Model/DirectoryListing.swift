#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The names in a directory as the file system holds them: bytes, which need not be UTF-8.
///
/// Foundation's `contentsOfDirectory(atPath:)` has no `String` for a name that is not UTF-8 and
/// leaves it out, so a scan that listed with it lost such a file without a word. Here every name
/// is kept. A table key is UTF-8, so a name that is not can only be reported; it comes with a
/// printable form for that, each byte that is not part of a UTF-8 character written `\xFF`.
package enum DirectoryListing {
    /// One name of a directory.
    package enum Name: Equatable {
        /// A UTF-8 name.
        case utf8(String)
        /// A name that is not UTF-8: its bytes, and how to print them.
        case notUTF8(bytes: [UInt8], printable: String)
    }

    /// The names in `directory`, without `.` and `..`, in the order the file system gives them.
    ///
    /// - Parameter directory: the directory's path.
    /// - Returns: the names, or `nil` when the directory cannot be opened.
    package static func names(in directory: String) -> [Name]? {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return names(inDirectory: fd)
    }

    /// The names in the directory open at `fd` (which stays open), as ``names(in:)`` lists them:
    /// a directory opened once, checked, then listed, is the one checked.
    ///
    /// - Parameter fd: a descriptor of the directory, opened for reading.
    /// - Returns: the names, or `nil` when the directory cannot be listed (`errno` says why).
    package static func names(inDirectory fd: Int32) -> [Name]? {
        let copy = dup(fd)
        guard copy >= 0 else { return nil }
        guard let stream = fdopendir(copy) else {
            let error = errno
            close(copy)
            errno = error
            return nil
        }
        defer { closedir(stream) }
        var names: [Name] = []
        while let entry = readdir(stream) {
            let bytes = nameBytes(entry)
            if bytes == [0x2E] || bytes == [0x2E, 0x2E] { continue }
            if let name = String(validating: bytes, as: UTF8.self) {
                names.append(.utf8(name))
            } else {
                names.append(.notUTF8(bytes: bytes, printable: printable(bytes)))
            }
        }
        return names
    }

    /// The name of a `readdir(3)` entry, read through its address up to its terminating zero.
    ///
    /// `d_name` is declared as 256 bytes, but the kernel packs entries by their names' lengths
    /// (`d_reclen`): reading the field copies all 256, past the end of the listing's buffer for
    /// its last short entry (a heap over-read AddressSanitizer reports, which could fault at
    /// the end of a page).
    private static func nameBytes(_ entry: UnsafeMutablePointer<dirent>) -> [UInt8] {
        let name = UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \.d_name)!
        return Array(UnsafeRawBufferPointer(start: name, count: strlen(name.assumingMemoryBound(to: CChar.self))))
    }

    /// `bytes` as text: UTF-8 characters as they are, every other byte as `\x` and two
    /// upper-case hex digits (also `imagetable`'s word for an argument that is not UTF-8).
    package static func printable(_ bytes: [UInt8]) -> String {
        var out = ""
        var parser = Unicode.UTF8.ForwardParser()
        var input = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &input) {
            case .valid(let encoded):
                out.unicodeScalars.append(Unicode.UTF8.decode(encoded))
                offset += encoded.count
            case .error(let length):
                for byte in bytes[offset..<offset + length] {
                    out += "\\x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
                }
                offset += length
            case .emptyInput:
                return out
            }
        }
    }

    /// `lstat(2)` of the entry `name` (raw bytes) of `directory`.
    static func entryStat(_ name: [UInt8], in directory: String) -> stat? {
        let path = Array(directory.utf8) + [0x2F] + name + [0]
        var st = stat()
        let found = path.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { lstat($0.baseAddress!, &st) }
        }
        return found == 0 ? st : nil
    }
}
