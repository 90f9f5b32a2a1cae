import Foundation
import ImageTableCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A source image found for a family.
///
/// A bake holds one per source for the whole of its run, so it keeps the key alone and shares
/// its directory's string with every other source of the scan: a path of its own would cost
/// about 100 bytes a source, a tenth of a gigabyte at a million.
public struct SourceFile: Sendable, Equatable {
    /// The path relative to the family's `sources` directory, `/`-separated: the entries' key.
    public let key: String
    /// The resolved sources directory, shared by every file of one scan.
    public let root: String
    /// Its stat when found (of the link's target, for a symbolic link).
    public let stat: FileStat

    /// The file's full path: the resolved sources directory and the key.
    public var path: String { Self.path(root: root, key: key) }

    /// The full path of the file at `key` below `root`.
    ///
    /// - Parameters:
    ///   - root: the resolved sources directory.
    ///   - key: the path relative to `root`, `/`-separated.
    public static func path(root: String, key: String) -> String {
        // Sized once: `root + "/" + key` grows its buffer on the way and keeps the slack.
        var path = String()
        path.reserveCapacity(root.utf8.count + 1 + key.utf8.count)
        path += root
        path += "/"
        path += key
        return path
    }

    /// A file at `key` below the resolved directory `root`.
    ///
    /// - Parameters:
    ///   - key: the path relative to `root`, `/`-separated.
    ///   - root: the resolved sources directory.
    ///   - stat: the file's stat.
    public init(key: String, root: String, stat: FileStat) {
        self.key = key
        self.root = root
        self.stat = stat
    }
}

/// Finds a family's sources: regular files under its `sources` directory that the family
/// selects (its `include` and `exclude` patterns), sorted by key.
///
/// Symbolic links are followed only when they resolve inside the sources directory (a manifest
/// from a pull request must not make CI read elsewhere), unless `allowOutside` is set; a link to
/// a directory is scanned under its own key, except one that leads back to a directory on its
/// way or above it (a loop), and one that may not be followed keeps its files' entries (its key
/// is ``Scan/unlisted``), as an unreadable directory does. Links are resolved with
/// `realpath(3)`, as the kernel will follow them, so a link whose target cannot be named (under
/// `/proc`) cannot pass for one inside. Nothing here opens a file: FIFOs, devices and sockets
/// (which could block a read forever or never end) are only ever `lstat`ed and `stat`ed. Keys
/// longer than a table allows, links leading outside, special files and directories named like
/// images, hidden image files, names that are not UTF-8 and unreadable directories are reported
/// (`key-too-long`, `outside-sources`, `not-a-regular-file`, `hidden-file`, `name-not-utf8`,
/// `unreadable`), not taken, and so are names that only another file's Unicode normalization
/// tells apart (`ambiguous-name`). The output directory, when it lies inside the
/// sources, is not scanned: the tables and the bake state are not sources.
public struct SourceScanner: Sendable {
    /// The directory to scan.
    public let root: String
    /// Whether a key (a `/`-separated path relative to `root`) is a source.
    public let selects: @Sendable (String) -> Bool
    /// Whether a key the patterns skip as hidden is an image they would otherwise take.
    public let selectsHidden: (@Sendable (String) -> Bool)?
    /// The key the patterns would take for a key they skip, were its extension spelt another
    /// way (``Manifest/Family/selectedSpelling(of:)``).
    public let otherSpelling: (@Sendable (String) -> String?)?
    /// Whether a directory (by key) may hold a file ``selects`` takes; `nil` for any. One that
    /// cannot be listed or followed is reported only when it may.
    public let mayHoldSources: (@Sendable (String) -> Bool)?
    /// Whether symbolic links may lead outside `root`.
    public let allowOutside: Bool
    /// A directory not to scan (the output directory), as an absolute, resolved path.
    public let excluding: String?
    /// Told how many sources the scan has taken so far, every 64 names it looks at: a
    /// million sources take seconds to list, which a progress display shows.
    public let listed: (@Sendable (Int) -> Void)?

    /// Creates a scanner.
    ///
    /// - Parameters:
    ///   - root: the family's sources directory.
    ///   - allowOutside: follow symbolic links that leave `root`.
    ///   - excluding: a directory below `root` not to scan, resolved (the output directory).
    ///   - selectsHidden: whether a hidden file would be selected if it were not hidden
    ///     (``Manifest/Family/selectsHiddenImage(_:)``); such files are reported, not taken.
    ///   - otherSpelling: the key the patterns would take were a skipped key's extension spelt
    ///     another way (``Manifest/Family/selectedSpelling(of:)``); such files are reported.
    ///   - listed: told the count of sources taken so far, every 64 names looked at.
    ///   - mayHoldSources: whether a directory may hold a source
    ///     (``Manifest/Family/mayHoldSources(below:)``); `nil` for any.
    ///   - selects: whether a relative path is a source (the family's patterns).
    public init(root: String, allowOutside: Bool = false, excluding: String? = nil,
                selectsHidden: (@Sendable (String) -> Bool)? = nil, otherSpelling: (@Sendable (String) -> String?)? = nil,
                listed: (@Sendable (Int) -> Void)? = nil, mayHoldSources: (@Sendable (String) -> Bool)? = nil,
                selects: @escaping @Sendable (String) -> Bool) {
        self.root = root
        self.selects = selects
        self.mayHoldSources = mayHoldSources
        self.selectsHidden = selectsHidden
        self.otherSpelling = otherSpelling
        self.allowOutside = allowOutside
        self.excluding = excluding
        self.listed = listed
    }

    /// Scans the directory.
    ///
    /// - Returns: the sources, sorted by key, and why each file that was not taken was skipped
    ///   (each error names its key and path).
    /// - Throws: `ImageTableError` `sources-unreadable` when `root` is missing, not a directory
    ///   or cannot be listed.
    public func scan() throws(ImageTableError) -> (sources: [SourceFile], skipped: [ImageTableError]) {
        let found = try scanAll()
        return (found.sources, found.skipped)
    }

    /// Scans the directory, saying which directories below it could not be listed: a bake must
    /// not take their files for deleted (`--prune` deleted their entries).
    ///
    /// - Returns: the sources, the files skipped and the directories not listed.
    /// - Throws: `ImageTableError` `sources-unreadable` when `root` is missing, not a directory
    ///   or cannot be listed.
    public func scanAll() throws(ImageTableError) -> Scan {
        let resolvedRoot = try Self.resolvedDirectory(root)
        var sources: [SourceFile] = []
        var skipped: [ImageTableError] = []
        var unlisted: [String] = []
        var directories: Set<String> = []
        // Each directory to list, with its real path (the kernel lists it through the links on
        // its key's way) and the real paths of the directories whose links led to it, which no
        // link below may lead back to or above.
        var pending: [(relative: String, real: String, chain: [String])] = [("", resolvedRoot, [])]
        var looked = 0
        var excludedKey: String?
        // A directory whose files cannot be seen. The root is no more a set of sources than a
        // missing one (taken for empty, it would have every entry counted as deleted); any
        // other is reported, and what is below it is unknown, not gone.
        func unseen(_ relative: String, at dir: String, root rootReason: String, directory reason: String) throws(ImageTableError) {
            if relative.isEmpty { throw ImageTableError(.sourcesUnreadable, "sources directory \(rootReason)", path: root) }
            // Nothing the family takes can lie there (a hidden `.snapshot`, `d2/` for `d1/*.jpg`).
            guard mayHoldSources?(relative) ?? true else { return }
            skipped.append(ImageTableError(.unreadable, "directory \(reason); its files' entries are kept as they are", path: dir, key: relative))
            unlisted.append(relative)
            directories.insert(relative)
        }
        var followed: [String: String] = [:]
        var openedRoot: String?
        // The directories found in the directory being listed, pushed after it in reverse key
        // order, so that the scan lists them in key order.
        var children: [(relative: String, real: String, chain: [String])] = []
        func followDirectoryLink(_ key: String, path: String, target: String, from real: String, chain: [String]) {
            switch directoryLink(key, path: path, target: target, way: chain + [real], root: resolvedRoot, followedBy: followed[target]) {
            case .follow(let way, let named):
                followed[target] = key
                if let named { skipped.append(named) }
                children.append((key, target, way))
            case .keep(let problem):
                skipped.append(problem)
                unlisted.append(key)
                directories.insert(key)
            case .loop(let problem):
                skipped.append(problem)
                directories.insert(key)
            case .output: excludedKey = key
            case .unreachable: break
            }
        }
        while let (relative, real, chain) = pending.popLast() {
            let dir = relative.isEmpty ? resolvedRoot : "\(resolvedRoot)/\(relative)"
            // Opened by the real path its link was checked for, not through the link, which may
            // lead elsewhere by now; then checked to lie where it did (a directory on the way
            // swapped for a link to outside). Each name is stat'ed relative to it: a path would
            // have the kernel walk every directory above it again, for every file (a twentieth
            // of a re-bake's time).
            let directory = open(real, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            defer { if directory >= 0 { close(directory) } }
            guard directory >= 0, let names = DirectoryListing.names(inDirectory: directory) else {
                // The system's reason: a directory whose path is over PATH_MAX was called "not
                // readable", though it is.
                let reason = String(cString: strerror(errno))
                try unseen(relative, at: dir, root: "cannot be listed (\(reason))", directory: "cannot be listed (\(reason))")
                continue
            }
            // Against the root as the kernel names it too, so that the two names are alike
            // wherever the kernel's and `realpath`'s might differ.
            if relative.isEmpty {
                openedRoot = Self.openedPath(directory)
            } else if !allowOutside, let root = openedRoot, let opened = Self.openedPath(directory), !PathBytes.isInside(opened, root) {
                try unseen(relative, at: dir, root: "changed while it was scanned", directory: "changed while it was scanned")
                continue
            }
            var links: [(key: String, path: String, target: String)] = []
            names: for entry in names {
                looked += 1
                if looked & 63 == 0 { listed?(sources.count) }
                guard case .utf8(let name) = entry else {
                    if case .notUTF8(let bytes, let printable) = entry,
                       let problem = notUTF8(bytes, printable: printable, in: dir, relative: relative) {
                        skipped.append(problem.error)
                        if problem.isDirectory, let key = problem.error.key { directories.insert(key) }
                    }
                    continue
                }
                let key = relative.isEmpty ? name : "\(relative)/\(name)"
                var st = stat()
                guard directory >= 0 ? fstatat(directory, name, &st, AT_SYMLINK_NOFOLLOW) == 0 : lstat("\(dir)/\(name)", &st) == 0 else {
                    let e = errno
                    if e == ENOENT || e == ENOTDIR { continue }  // gone since the listing
                    let reason = String(cString: strerror(e))
                    // A directory that can be read but not searched (mode 0644): its names are
                    // listed, none can be looked at. What is in it is unknown, not gone.
                    if e == EACCES {
                        try unseen(relative, at: dir, root: "cannot be searched (\(reason))", directory: "cannot be searched (\(reason))")
                        break names
                    }
                    if selects(key) {
                        skipped.append(ImageTableError(.unreadable, "cannot be looked at (\(reason)); its entry is kept as it is", path: "\(dir)/\(name)", key: key))
                        unlisted.append(key)
                    }
                    continue
                }
                // Built only where it is needed: not for a plain file, the common case.
                var path: String { "\(dir)/\(name)" }
                switch st.st_mode & S_IFMT {
                case S_IFDIR:
                    // The output directory is never scanned, whatever its name: "it is scanned
                    // for sources" would contradict the bake's `output-holds-sources` warning.
                    let childReal = "\(real)/\(name)"
                    guard childReal != excluding else { excludedKey = key; continue }
                    children.append((key, childReal, chain))
                    if namedLikeImage(key) {
                        skipped.append(ImageTableError(.notARegularFile, "a directory named like an image, not a regular file; "
                                                       + "it is scanned for sources, not baked", path: path, key: key))
                    }
                case S_IFREG: consider(key: key, root: resolvedRoot, stat: FileStat(st), into: &sources, &skipped)
                case S_IFLNK:
                    guard let target = Self.realPath(path), stat(target, &st) == 0 else {
                        // A loop or a dangling link: said, not silently dropped.
                        let reason = String(cString: strerror(errno))
                        if selects(key) {
                            skipped.append(ImageTableError(.unreadable, "symbolic link cannot be followed (\(reason))", path: path, key: key))
                            unlisted.append(key)
                        } else if mayHoldSources?(key) ?? true {
                            // It may have led to a directory (one moved to a disk not mounted
                            // now): what was below it is not known to be gone.
                            skipped.append(ImageTableError(.notARegularFile, "symbolic link cannot be followed (\(reason)); "
                                                           + "if it led to a directory, its files' entries are kept as they are",
                                                           path: path, key: key))
                            unlisted.append(key)
                            directories.insert(key)
                        }
                        continue
                    }
                    guard st.st_mode & S_IFMT != S_IFDIR else {
                        links.append((key, path, target))
                        continue
                    }
                    // By bytes: through Characters, a link from `café` into its sibling `cafe\u{301}`
                    // was inside, and one into `\u{301}sub/` below the root was outside.
                    guard allowOutside || PathBytes.isBelow(target, resolvedRoot) else {
                        if selects(key) {
                            skipped.append(ImageTableError(.outsideSources, "symbolic link leads outside the sources directory "
                                                           + "(\(target)); not baked (--allow-outside-paths follows it)", path: path, key: key))
                        }
                        continue
                    }
                    if st.st_mode & S_IFMT == S_IFREG {
                        consider(key: key, root: resolvedRoot, stat: FileStat(st), into: &sources, &skipped)
                    } else if selects(key) {
                        skipped.append(Self.special(st, path: path, key: key, through: target))
                    }
                default:
                    if selects(key) { skipped.append(Self.special(st, path: path, key: key, through: nil)) }
                }
            }
            for link in links.sorted(by: { $0.key < $1.key }) {
                followDirectoryLink(link.key, path: link.path, target: link.target, from: real, chain: chain)
            }
            children.sort { $0.relative > $1.relative }
            pending.append(contentsOf: children)
            children.removeAll(keepingCapacity: true)
        }
        let inExcluded = excludedKey.map { selectedImages(below: $0, root: resolvedRoot) } ?? ([], 0, true)
        // Sorted in place, then copied once to its size: the list lives through the whole bake,
        // and grown by doubling it may hold almost twice the room it needs (at a million files,
        // 72 MB of records and up to as much again of slack).
        sources.sort { $0.key < $1.key }
        Self.dropAmbiguousNames(&sources, into: &skipped)
        if sources.capacity > sources.count + sources.count / 8 { sources = sources.withUnsafeBufferPointer { Array($0) } }
        return Scan(sources: sources, skipped: skipped.sorted { ($0.key ?? "") < ($1.key ?? "") }, unlisted: unlisted.sorted(),
                    directories: directories, inExcluded: inExcluded)
    }

}
