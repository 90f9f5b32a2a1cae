import ImageTableCore
extension ManifestReader {
    /// A path as written and where it resolves.
    struct CheckedPath {
        let written: String
        let resolved: String
    }

    /// Reads `output` or a family's `sources` and checks where it leads.
    ///
    /// Absolute paths and paths that leave the manifest's directory, or the
    /// ``ValidationOptions/root`` when one is given, (by `..` or through a symbolic link) are
    /// errors unless ``ValidationOptions/allowOutsidePaths``. Missing sources
    /// are only a warning: CI may validate before the images are fetched, and the baker, which
    /// reads them, reports them as errors. A missing output directory is fine: the baker creates it.
    ///
    /// - Parameters:
    ///   - pair: the key and its value.
    ///   - path: the key path.
    ///   - isSources: whether this is a family's `sources` (which must exist as a directory).
    func readPath(_ pair: YAMLPair, path: String, isSources: Bool) -> CheckedPath? {
        guard let written = context.string(pair, path: path) else { return nil }
        let at = pair.value.location
        if written.isEmpty || written.contains("\0") {
            context.report(.invalidPath, "'\(pair.name)' must be a non-empty path without NUL characters; use '.' for the manifest's own directory",
                           at: at, keyPath: path)
            return nil
        }
        // A literal block (`output: |`) ends its value with a line break, and a quoted value may
        // hold a tab or an escape: the bake then made a directory named `tables\n`.
        if let control = written.unicodeScalars.first(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            let name = [0x0A: "a line break", 0x0D: "a carriage return", 0x09: "a tab"][control.value]
                ?? String(format: "the control character U+%04X", control.value)
            let block = control.value == 0x0A && written.hasSuffix("\n") ? " (a block scalar, `|` or `>`, ends with one: write the path on the key's line)" : ""
            context.report(.invalidPath, "'\(pair.name)' contains \(name)\(block); paths may not hold control characters", at: at, keyPath: path)
            return nil
        }
        if written.hasPrefix("~") {
            context.report(.invalidPath, "'\(pair.name)' starts with '~', which is not expanded; write a path relative to the manifest's directory",
                           at: at, keyPath: path)
            return nil
        }
        let resolution = PathResolver.resolve(written, base: context.directory, root: context.root)
        if !context.options.allowOutsidePaths, let problem = outsideProblem(written, resolution) {
            context.report(.outsidePath, "'\(pair.name)' \(problem)", at: at, keyPath: path)
            return nil
        }
        switch PathResolver.kind(of: resolution.path) {
        case .directory:
            break
        case .other:
            context.report(.notADirectory, "'\(written)' (\(resolution.path)) exists but is not a directory", at: at, keyPath: path)
            return nil
        case .missing:
            // A path below a file can never be made: `output: README.md/tables` passed, and the
            // bake failed making the directory.
            if let file = Self.fileAbove(resolution.path) {
                context.report(.notADirectory, "'\(written)' (\(resolution.path)) lies below \(file), which is a file, not a directory",
                               at: at, keyPath: path)
                return nil
            }
            if isSources {
                context.report(.missingSources, "sources directory '\(written)' (\(resolution.path)) does not exist (yet); baking will fail until it does",
                               at: at, keyPath: path)
            }
        }
        return CheckedPath(written: written, resolved: resolution.path)
    }

    /// The nearest existing ancestor of the missing `path` when it is something other than a
    /// directory, else `nil`.
    private static func fileAbove(_ path: String) -> String? {
        var ancestor = path
        while let directory = PathBytes.lastSlash(ancestor)?.directory, !directory.isEmpty {
            ancestor = String(directory)
            switch PathResolver.kind(of: ancestor) {
            case .directory: return nil
            case .other: return ancestor
            case .missing: continue
            }
        }
        return nil
    }

    /// Why a path may not be used without `--allow-outside-paths`, or `nil` when it may.
    private func outsideProblem(_ written: String, _ resolution: PathResolver.Resolution) -> String? {
        let allow = " (pass --allow-outside-paths to allow it)"
        if PathBytes.isAbsolute(written) {
            return "is absolute; it must be relative to the manifest's directory" + allow
        }
        if let link = resolution.brokenLink {
            return "goes through \(link), a symbolic link that cannot be resolved" + allow
        }
        guard resolution.escapes else { return nil }
        let how = resolution.escapesThroughLink ? "through a symbolic link " : ""
        if context.options.root == nil {
            return "leads \(how)to \(resolution.path), outside the manifest's directory \(resolution.root)"
                + " (widen the boundary with --root DIR, or pass --allow-outside-paths)"
        }
        return "leads \(how)to \(resolution.path), outside the root \(resolution.root)" + allow
    }
}
