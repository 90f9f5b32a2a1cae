import Foundation
import ImageTableCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A source image found for a family.
public struct SourceFile: Sendable, Equatable {
    /// The path relative to the family's `sources` directory, `/`-separated: the entries' key.
    public let key: String
    /// The file's full path.
    public let path: String
    /// Its stat when found (of the link's target, for a symbolic link).
    public let stat: FileStat
}

/// Finds a family's sources: regular files under its `sources` directory that the family
/// selects (its `include` and `exclude` patterns), sorted by key.
///
/// Symbolic links to files are followed only when they resolve inside the sources directory (a
/// manifest from a pull request must not make CI read elsewhere), unless `allowOutside` is set;
/// directory links are never followed, so cycles cannot happen. Keys longer than a table allows,
/// links leading outside and unreadable directories are reported (`key-too-long`,
/// `outside-sources`, `unreadable`), not taken.
public struct SourceScanner: Sendable {
    /// The directory to scan.
    public let root: String
    /// Whether a key (a `/`-separated path relative to `root`) is a source.
    public let selects: @Sendable (String) -> Bool
    /// Whether symbolic links may lead outside `root`.
    public let allowOutside: Bool

    /// Creates a scanner.
    ///
    /// - Parameters:
    ///   - root: the family's sources directory.
    ///   - allowOutside: follow symbolic links that leave `root`.
    ///   - selects: whether a relative path is a source (the family's patterns).
    public init(root: String, allowOutside: Bool = false, selects: @escaping @Sendable (String) -> Bool) {
        self.root = root
        self.selects = selects
        self.allowOutside = allowOutside
    }

    /// Scans the directory.
    ///
    /// - Returns: the sources, sorted by key, and why each file that was not taken was skipped
    ///   (each error names its key and path).
    /// - Throws: ``ImageTableError`` `sources-unreadable` when `root` is missing or not a directory.
    public func scan() throws(ImageTableError) -> (sources: [SourceFile], skipped: [ImageTableError]) {
        let resolvedRoot = URL(fileURLWithPath: root).resolvingSymlinksInPath().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: resolvedRoot, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ImageTableError(.sourcesUnreadable, "sources directory does not exist or is not a directory", path: root)
        }
        var sources: [SourceFile] = []
        var skipped: [ImageTableError] = []
        var pending = [""]
        while let relative = pending.popLast() {
            let dir = relative.isEmpty ? resolvedRoot : "\(resolvedRoot)/\(relative)"
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else {
                skipped.append(ImageTableError(.unreadable, "directory is not readable", path: dir, key: relative))
                continue
            }
            for name in names {
                let key = relative.isEmpty ? name : "\(relative)/\(name)"
                let path = "\(dir)/\(name)"
                var st = stat()
                guard lstat(path, &st) == 0 else { continue }
                switch st.st_mode & S_IFMT {
                case S_IFDIR: pending.append(key)
                case S_IFREG: consider(key: key, path: path, stat: FileStat(st), into: &sources, &skipped)
                case S_IFLNK:
                    let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
                    guard stat(target, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { continue }
                    guard allowOutside || target.hasPrefix(resolvedRoot + "/") else {
                        if selects(key) {
                            skipped.append(ImageTableError(.outsideSources, "symbolic link leads outside the sources directory",
                                                           path: path, key: key))
                        }
                        continue
                    }
                    consider(key: key, path: path, stat: FileStat(st), into: &sources, &skipped)
                default: continue
                }
            }
        }
        return (sources.sorted { $0.key < $1.key }, skipped.sorted { ($0.key ?? "") < ($1.key ?? "") })
    }

    private func consider(key: String, path: String, stat: FileStat, into sources: inout [SourceFile], _ skipped: inout [ImageTableError]) {
        guard selects(key) else { return }
        guard key.utf8.count <= TableLimits.maxKeyBytes else {
            skipped.append(ImageTableError(.keyTooLong, "path is \(key.utf8.count) bytes; keys are limited to \(TableLimits.maxKeyBytes)",
                                           path: path, key: key))
            return
        }
        sources.append(SourceFile(key: key, path: path, stat: stat))
    }
}
