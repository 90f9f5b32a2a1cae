import Foundation
import ImageTableCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a scan finds, and the paths it starts from.
extension SourceScanner {
    /// What a scan found.
    public struct Scan: Sendable {
        /// The sources, sorted by key.
        public var sources: [SourceFile] = []
        /// Why each file that was not taken was skipped (each error names its key and path).
        public var skipped: [ImageTableError] = []
        /// The keys of the directories below the root that could not be listed, of the
        /// selected symbolic links that cannot be followed (each also an `unreadable` error in
        /// ``skipped``), and of links to directories outside the root that may not be followed
        /// (`outside-sources`): what lies there is unknown, not gone, as for a file that cannot
        /// be read.
        public var unlisted: [String] = []
        /// The keys of the problems in ``skipped`` that are directories' (one that cannot be
        /// listed, a name that is not UTF-8, a link to a directory not followed), which are reported whatever the patterns select:
        /// a sharded bake reports each in one shard only.
        public var directories: Set<String> = []
        /// Image files below the excluded directory (the output directory, when it lies inside
        /// `root`) that the patterns select, by key, the first 10 and a count (`complete` false when
        /// the count stopped at 10,000 files looked at): not sources, since
        /// that directory is never scanned, and a bake warns of them (`output-holds-sources`).
        public var inExcluded: (keys: [String], count: Int, complete: Bool) = ([], 0, true)
    }

    /// Checks that `root` is a directory that can be listed, as a scan would, touching nothing.
    ///
    /// A bake asks before it makes anything: one that stopped at its scan had already made the
    /// output directory, empty tables, their locks and a state, which `export` then shipped.
    ///
    /// - Parameter root: a family's sources directory.
    /// - Throws: `ImageTableError` `sources-unreadable`, as ``scanAll()`` would.
    public static func checkRoot(_ root: String) throws(ImageTableError) {
        let resolved = try resolvedDirectory(root)
        guard let dir = opendir(resolved) else {
            throw ImageTableError(.sourcesUnreadable, "sources directory cannot be listed (\(String(cString: strerror(errno))))", path: root)
        }
        closedir(dir)
    }

    /// `root`'s real path, when it is a directory.
    ///
    /// - Throws: `ImageTableError` `sources-unreadable` when it is missing or not a directory.
    static func resolvedDirectory(_ root: String) throws(ImageTableError) -> String {
        var rootStat = stat()
        guard let resolved = realPath(root), stat(resolved, &rootStat) == 0, rootStat.st_mode & S_IFMT == S_IFDIR else {
            throw ImageTableError(.sourcesUnreadable, "sources directory does not exist or is not a directory", path: root)
        }
        return resolved
    }

    /// The path of the directory open at `fd`, as the kernel names it now (Linux's
    /// `/proc/self/fd`, macOS's `F_GETPATH`); `nil` where it cannot say.
    package static func openedPath(_ fd: Int32) -> String? {
        #if os(Linux)
        // One `readlink`: the kernel's name is already the real path (`realpath` would look up
        // every directory on it again, for each directory a scan lists).
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX))
        let length = buffer.withUnsafeMutableBufferPointer { raw in
            raw.withMemoryRebound(to: CChar.self) { readlink("/proc/self/fd/\(fd)", $0.baseAddress!, $0.count) }
        }
        guard length > 0, length < buffer.count else { return nil }
        return String(decoding: buffer[..<length], as: UTF8.self)
        #elseif canImport(Darwin)
        var buffer = [CChar](repeating: 0, count: Int(MAXPATHLEN))
        guard fcntl(fd, F_GETPATH, &buffer) != -1 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #else
        return nil
        #endif
    }

    /// `realpath(3)`, or `nil` when the path does not exist or cannot be resolved.
    package static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `path` without `.`, `..` and symbolic links where it exists (``realPath(_:)``), else
    /// absolute with `.` and `..` folded (`Directories.absolute`).
    package static func resolvedPath(_ path: String) -> String {
        realPath(path) ?? Directories.absolute(path)
    }
}
