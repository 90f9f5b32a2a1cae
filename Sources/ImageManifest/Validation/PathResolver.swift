import ImageTableCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Resolves a manifest's `output` and `sources` the way the kernel will, to decide whether they
/// stay inside the manifest's directory.
///
/// A lexical check is not enough: `photos/../../etc` is caught by it, but `photos` may itself be
/// a symbolic link to `/`. So the path is walked component by component from the manifest's
/// real directory; every component that exists is replaced by its `realpath`, and `..` then
/// climbs from where the kernel really is. Components that do not exist yet (an output directory
/// the baker will create) are appended as written.
enum PathResolver {
    /// Where a path leads.
    struct Resolution: Equatable {
        /// The absolute path, symbolic links in its existing part resolved.
        let path: String
        /// The directory the path must stay inside, resolved the same way.
        let root: String
        /// Whether ``path`` lies outside ``root``.
        let escapes: Bool
        /// Whether the path escapes only because of a symbolic link (lexically it stays inside).
        let escapesThroughLink: Bool
        /// A symbolic link on the way could not be resolved (it dangles or loops).
        let brokenLink: String?
    }

    /// Resolves `path` (relative to `base`, or absolute) and checks it against `root`.
    ///
    /// - Parameters:
    ///   - path: the path as written in the manifest.
    ///   - base: the manifest's absolute directory.
    ///   - root: the absolute directory the path must stay inside.
    static func resolve(_ path: String, base: String, root: String) -> Resolution {
        let realBase = realPath(base) ?? normalize(base)
        let realRoot = realPath(root) ?? normalize(root)
        var current: [Substring] = PathBytes.isAbsolute(path) ? [] : PathBytes.components(realBase)
        var brokenLink: String?
        for component in PathBytes.components(path) {
            switch component {
            case ".": continue
            case "..": _ = current.popLast()
            default:
                current.append(component)
                let joined = "/" + current.joined(separator: "/")
                var info = stat()
                guard lstat(joined, &info) == 0 else { continue }
                if let real = realPath(joined) {
                    current = PathBytes.components(real)
                } else if brokenLink == nil {
                    brokenLink = joined
                }
            }
        }
        let resolved = "/" + current.joined(separator: "/")
        let lexical = normalize(PathBytes.isAbsolute(path) ? path : realBase + "/" + path)
        return Resolution(path: resolved, root: realRoot, escapes: !isInside(resolved, realRoot),
                          escapesThroughLink: isInside(lexical, realRoot) && !isInside(resolved, realRoot),
                          brokenLink: brokenLink)
    }

    /// Whether `path` is `base` or below it, by bytes (``PathBytes``): `../cafe\u{301}` was
    /// inside a manifest's directory `café`.
    static func isInside(_ path: String, _ base: String) -> Bool {
        base == "/" || PathBytes.isInside(path, base)
    }

    /// `path` with `.`, `..` and repeated slashes removed, without consulting the file system.
    static func normalize(_ path: String) -> String {
        var parts: [Substring] = []
        for component in PathBytes.components(path) {
            switch component {
            case ".": continue
            case "..":
                if let last = parts.last, last != ".." { parts.removeLast() } else if !PathBytes.isAbsolute(path) { parts.append("..") }
            default: parts.append(component)
            }
        }
        let joined = parts.joined(separator: "/")
        if PathBytes.isAbsolute(path) { return "/" + joined }
        return joined.isEmpty ? "." : joined
    }

    /// `realpath(3)`, or `nil` when the path does not exist or cannot be resolved.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// What is at `path`, following symbolic links.
    enum Kind { case missing, directory, other }

    /// What is at `path`, following symbolic links.
    static func kind(of path: String) -> Kind {
        var info = stat()
        guard stat(path, &info) == 0 else { return .missing }
        return (info.st_mode & S_IFMT) == S_IFDIR ? .directory : .other
    }
}
