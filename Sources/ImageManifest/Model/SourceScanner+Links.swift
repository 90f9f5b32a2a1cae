import ImageTableCore

/// Links to directories below the sources.
///
/// A link to a directory is followed as the directory it leads to, under the link's key, where
/// the sources' links may lead (inside the root, or anywhere with `allowOutside`). One leading
/// back to a directory on its own way, or above one, would be a loop: its files are found where
/// it leads. One leading outside keeps its files' entries: what is there is not known to be gone.
/// A directory is entered through links once (two links to each of 30 nested directories would
/// make 2^30 ways to list), through the first link in key order: directories are listed in key
/// order and a directory's links followed in key order, so the choice does not hang on the file
/// system's listing order; the others keep their entries (a link added later may come first).
extension SourceScanner {
    /// What becomes of a link to a directory.
    enum DirectoryLink {
        /// Listed under the link's key; `way` is the real paths it must not lead back to, and
        /// `named` a warning for a link named like an image.
        case follow(way: [String], named: ImageTableError?)
        /// Not followed, and its files' entries kept (reported, its key unlisted).
        case keep(ImageTableError)
        /// Not followed: a loop, whose files are found where it leads.
        case loop(ImageTableError)
        /// It leads to the output directory, which is never scanned.
        case output
        /// Nothing the family takes can lie below it: passed over without a word.
        case unreachable
    }

    /// Decides what becomes of the link at `key` (`path`) to the directory `target`, a real path.
    ///
    /// - Parameters:
    ///   - way: the real paths of the directories on the link's way that it must not lead back
    ///     to or above: where earlier links were followed, and the directory it lies in.
    ///   - root: the resolved sources directory.
    ///   - followedBy: the key of the link through which `target` was entered already, if any.
    func directoryLink(_ key: String, path: String, target: String, way: [String], root: String, followedBy earlier: String?) -> DirectoryLink {
        let reachable = mayHoldSources?(key) ?? true
        guard allowOutside || PathBytes.isInside(target, root) else {
            guard reachable else { return .unreachable }
            return .keep(ImageTableError(.outsideSources, "symbolic link to a directory leads outside the sources directory "
                                         + "(\(target)); not followed, its files' entries are kept as they are "
                                         + "(--allow-outside-paths follows it)", path: path, key: key))
        }
        guard !way.contains(where: { PathBytes.isInside($0, target) }) else {
            guard reachable else { return .unreachable }
            return .loop(ImageTableError(.notARegularFile, "a symbolic link to a directory on its own way (\(target)); "
                                         + "not followed, since it would loop: its files are found where it leads", path: path, key: key))
        }
        guard target != excluding else { return .output }
        if let earlier {
            guard reachable else { return .unreachable }
            return .keep(ImageTableError(.notARegularFile, "a symbolic link to a directory already scanned through "
                                         + "'\(earlier)' (\(target)); not followed twice, its files' entries are kept as they are",
                                         path: path, key: key))
        }
        let named = namedLikeImage(key) ? ImageTableError(.notARegularFile, "a symbolic link to a directory named like an image, "
                                                          + "not a regular file; it is scanned for sources, not baked", path: path, key: key) : nil
        return .follow(way: way, named: named)
    }
}
