import Foundation
import ImageTableCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads manifests and checks every rule of `docs/MANIFEST.md`, reporting every problem at once.
///
/// Validation never throws and never traps on input: a file that cannot be read, a YAML bomb or
/// a typo are all ``Diagnostic``s in the returned ``ValidationReport``. It touches no image and no
/// table file; it only looks at whether `output` and `sources` exist.
///
/// Nothing in it recurses in proportion to the input (the composer keeps an explicit stack and
/// trees are at most ``ManifestLimits/maxDepth`` deep), so it is safe on the small stacks of
/// Swift concurrency's threads; no dedicated large-stack thread is needed.
///
/// ```swift
/// let report = ManifestValidator(options: ValidationOptions(root: ".")).validate(fileAt: "manifests/demo.yaml")
/// guard let manifest = report.manifest else { /* print report.diagnostics */ return }
/// for format in manifest.formats { /* open manifest.tablePath(of: format) with format */ }
/// ```
public struct ManifestValidator: Sendable {
    /// What to check beyond the manifest itself.
    public let options: ValidationOptions

    /// Creates a validator.
    ///
    /// - Parameter options: paths, warnings and disk budget.
    public init(options: ValidationOptions = ValidationOptions()) {
        self.options = options
    }

    /// Reads and validates the manifest at `path`.
    ///
    /// At most ``ManifestLimits/maxFileBytes`` + 1 bytes are read, so a huge or endless file
    /// costs nothing.
    ///
    /// - Parameter path: the manifest's path, absolute or relative to the working directory; it
    ///   appears as written in diagnostics.
    public func validate(fileAt path: String) -> ValidationReport {
        switch Self.readBounded(path) {
        case .success(let bytes): return validate(contents: bytes, file: path)
        case .failure(let problem): return Self.unreadable(problem, file: path)
        }
    }

    /// Validates manifest text as if it were the file at `file`, whose directory anchors the
    /// manifest's relative paths.
    ///
    /// - Parameters:
    ///   - contents: the file's bytes.
    ///   - file: the path the text is attributed to.
    public func validate(contents: [UInt8], file: String) -> ValidationReport {
        let directory = Self.absoluteDirectory(of: file)
        let text: ArraySlice<UInt8>
        do {
            text = try SourceText.check(contents)
        } catch {
            var d = Diagnostic(.error, error.code, error.message, file: file, location: error.location)
            // The line of a byte that is not UTF-8, shown as every diagnostic's line is, the byte
            // as U+FFFD (one column, as the position counts it). Cut by ``SourceLines``, whose
            // breaks (CR, NEL…) are the ones the position counts; a byte-order mark takes no column.
            if error.code == .invalidUTF8, error.location != .start {
                let lines = SourceLines(contents.starts(with: [0xEF, 0xBB, 0xBF]) ? contents[3...] : contents[...])
                if error.location.line <= lines.count, lines.bytes(ofLine: error.location.line).count <= ValidationContext.maxQuotedLineBytes {
                    d.sourceLine = lines.string(ofLine: error.location.line)
                }
            }
            return ValidationReport(file: file, diagnostics: [d], manifest: nil)
        }
        let context = ValidationContext(file: file, directory: directory, options: options, lines: SourceLines(text))
        let composed = YAMLComposer.compose(context.lines)
        for problem in composed.problems {
            context.report(problem.code, problem.message, at: problem.location, keyPath: "")
        }
        var manifest: Manifest?
        // A root that is only a scalar when a syntax error stopped the parse is a fragment of what
        // was meant (`version 1` without its ':' runs on as text into line 2): its type says
        // nothing the syntax error does not say better.
        let fragment = composed.root?.scalar != nil && composed.problems.contains { $0.code == .yamlSyntax }
        if let root = composed.root, !fragment {
            manifest = ManifestReader(context: context).read(root, isOnlyDocument: composed.documents <= 1)
        }
        var diagnostics = context.diagnostics.enumerated().sorted {
            ($0.element.code == .tooManyProblems ? 1 : 0, $0.element.location, $0.offset)
                < ($1.element.code == .tooManyProblems ? 1 : 0, $1.element.location, $1.offset)
        }.map(\.element)
        if options.warningsAsErrors {
            for i in diagnostics.indices { diagnostics[i].severity = .error }
        }
        let errors = diagnostics.filter { $0.severity == .error }
        let overBudgetAlone = !errors.isEmpty && errors.allSatisfy { $0.code == .diskBudgetExceeded }
        return ValidationReport(file: file, diagnostics: diagnostics, manifest: errors.isEmpty ? manifest : nil,
                                plannedManifest: errors.isEmpty || overBudgetAlone ? manifest : nil)
    }

    /// `path` made absolute against the working directory and normalised.
    static func absolutePath(_ path: String) -> String {
        PathResolver.normalize(PathBytes.isAbsolute(path) ? path : FileManager.default.currentDirectoryPath + "/" + path)
    }

    /// The absolute, normalised directory containing `file`.
    ///
    /// A `..` after a symbolic link (`config/../site.yaml`, `config` a link into `deploy/`) is
    /// the link's target's parent, as the kernel opens it: folded by the text, the manifest's
    /// paths were read from another directory than its own. Such a directory is resolved.
    static func absoluteDirectory(of file: String) -> String {
        // Cut at the last slash byte: a manifest named `proj/\u{301}m.yaml` (a slash and a
        // combining accent are one Character) was taken to lie in `proj`'s parent.
        let absolute = PathBytes.isAbsolute(file) ? file : FileManager.default.currentDirectoryPath + "/" + file
        if let directory = PathBytes.lastSlash(absolute)?.directory, PathBytes.components(directory).contains(".."),
           let real = SourceScanner.realPath(String(directory)) {
            return real
        }
        let normalized = absolutePath(file)
        guard let directory = PathBytes.lastSlash(normalized)?.directory, !directory.isEmpty else { return "/" }
        return String(directory)
    }

    struct ReadProblem: Error {
        let message: String
    }

    /// The name a manifest read from standard input has in diagnostics (`<stdin>:3:5: error: …`).
    public static let standardInputName = "<stdin>"

    /// Validates the manifest on standard input (`imagetable validate -`, for a manifest another
    /// program writes): its paths are relative to the working directory, as a file's are to its
    /// directory.
    ///
    /// - Returns: the report, named ``standardInputName``.
    public func validateStandardInput() -> ValidationReport {
        switch Self.readBounded(descriptor: STDIN_FILENO, what: "the manifest from standard input") {
        case .success(let bytes): return validate(contents: bytes, file: Self.standardInputName)
        case .failure(let problem): return Self.unreadable(problem, file: Self.standardInputName)
        }
    }

    /// The report of a manifest that could not be read: one `file-unreadable` error.
    private static func unreadable(_ problem: ReadProblem, file: String) -> ValidationReport {
        let d = Diagnostic(.error, .fileUnreadable, problem.message, file: file, location: .start)
        return ValidationReport(file: file, diagnostics: [d], manifest: nil)
    }

    /// Reads at most one byte more than the limit, so that the check can tell "too large".
    ///
    /// Only a regular file is read. The open does not wait (`O_NONBLOCK`): opening a FIFO with
    /// no writer would otherwise block forever, before any check could run; a FIFO, device or
    /// socket is then refused from its `fstat`, unread.
    static func readBounded(_ path: String) -> Result<[UInt8], ReadProblem> {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return .failure(ReadProblem(message: "cannot open the manifest: \(String(cString: strerror(errno)))")) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            return .failure(ReadProblem(message: "cannot stat the manifest: \(String(cString: strerror(errno)))"))
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: return .failure(ReadProblem(message: "the manifest path is a directory, not a file"))
        case S_IFIFO: return .failure(ReadProblem(message: "the manifest path is a FIFO (a named pipe), not a regular file"))
        case S_IFCHR, S_IFBLK: return .failure(ReadProblem(message: "the manifest path is a device, not a regular file"))
        default: return .failure(ReadProblem(message: "the manifest path is not a regular file"))
        }
        return readBounded(descriptor: fd, what: "the manifest")
    }

    /// Reads `fd` to its end, or to one byte more than the limit, so that the check can tell
    /// "too large".
    ///
    /// - Parameters:
    ///   - fd: an open descriptor.
    ///   - what: what it holds, for the message of a failed read.
    private static func readBounded(descriptor fd: Int32, what: String) -> Result<[UInt8], ReadProblem> {
        var bytes = [UInt8](repeating: 0, count: ManifestLimits.maxFileBytes + 1)
        switch bytes.withUnsafeMutableBytes({ SystemIO.read(fd, into: $0) }) {
        case .success(let count):
            bytes.removeSubrange(count...)
            return .success(bytes)
        case .failure(let error):
            return .failure(ReadProblem(message: "cannot read \(what): \(error.reason)"))
        }
    }
}
