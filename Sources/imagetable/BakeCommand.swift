import ArgumentParser
import Foundation
import ImageBake
import ImageManifest
import ImageTableCore
import Synchronization

/// `imagetable bake MANIFEST`: validates the manifest, then bakes every family's sources into
/// its tables, decoding each changed source once for its whole family.
struct BakeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bake",
        abstract: "Bake a manifest's sources into its tables.",
        discussion: """
            The manifest is validated first, with the diagnostics of `imagetable
            validate`. Then the tables are locked, the sources listed and compared
            with the bake state (beside the tables): a file whose stat is unchanged is
            not even read, and a source every table already holds from the same bytes
            is not decoded. The others are decoded once, by worker processes
            (imagetable-worker, installed next to imagetable), and rendered into every
            format of the family.

            When a family has more sources than a table's maximumCount, the most
            recently modified get its slots and the rest are left out (reported, not
            failed). A full table only evicts entries whose source is gone or left
            out. docs/BAKE.md states the rules.

            A source that cannot be baked (truncated, corrupt, over --max-pixels,
            unreadable, a decoder crash) is reported on standard error as `path:
            error: message [code]` (at once under a progress bar, else at the
            end); it keeps its previous entry, if any, and the bake goes on. Files
            that are not images are skipped with a warning.

            On a terminal a progress bar redraws one line on standard error. With
            --progress and standard error not a terminal (a CI log), a plain line is
            printed every few seconds instead; --no-progress shows neither.

            EXAMPLES
              imagetable bake --root . manifests/demo.yaml
              imagetable bake site.yaml --dry-run       # the plan, nothing else
              imagetable bake site.yaml --list          # each source's state
              imagetable bake site.yaml --prune         # drop entries of deleted files
              imagetable bake site.yaml --format json --strict
              imagetable bake site.yaml --format github --progress   # in a workflow
              parallel imagetable bake site.yaml --shard {}/4 --output out/{} ::: 0 1 2 3
              imagetable merge merged out/0 out/1 out/2 out/3   # docs/SCALE.md

            EXIT STATUS
              0   every source is baked, unchanged, left out or skipped
              1   fatal: invalid manifest, missing sources directory, a table that
                  cannot be written (disk full, locked), a missing imagetable-worker,
                  or with --strict any failed source
              3   the bake finished but some sources failed
              64  bad usage
              130, 143  stopped by SIGINT (Ctrl-C) or SIGTERM: the sources sent were
                  finished and kept, and reported; the next bake goes on (a bake
                  started in the background of a script, `bake … &`, ignores
                  SIGINT as the shell set it; SIGTERM still stops it)
            """
    )

    @Argument(help: "The manifest to bake.")
    var manifest: String

    @Option(name: .shortAndLong, parsing: .unconditional, help: "Worker processes decoding at once (default: the number of cores).")
    var jobs: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp("Refuse images with more pixels than this, from their header, before decoding.", valueName: "n"))
    var maxPixels: Int = DecodeOptions.defaultMaxPixels

    @Option(parsing: .unconditional, help: ArgumentHelp("Refuse source files larger than this (256MiB by default; units B, kB, MB, GB, TB, KiB, MiB, GiB, TiB), "
                               + "from their size, before reading them: a worker holds a source in memory while it decodes it.",
                               valueName: "size"))
    var maxSourceSize: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Seconds one source may take before it is given up.", valueName: "seconds"))
    var timeout: Double = 120

    @Option(parsing: .unconditional, help: ArgumentHelp("The most memory of its own each worker may have (4GiB by default; units as "
                               + "--max-source-size; 'none' for no limit): a source that needs more fails instead of taking the machine's.",
                               valueName: "size"))
    var maxWorkerMemory: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Seconds to wait for another process writing a table.", valueName: "seconds"))
    var lockTimeout: Double = 10

    @Flag(help: "Stop at the first source that fails, committing nothing for it (exit 1).")
    var strict = false

    @Flag(help: "Print the plan: what would be decoded, written, evicted and pruned; touch no table.")
    var dryRun = false

    @Flag(help: "Print each matched source and its state (new, changed, unchanged, removed, skipped, deferred, left-out, failed); touch nothing.")
    var list = false

    @Flag(help: "Delete entries whose source is gone, and tables this manifest made that no format names now.")
    var prune = false

    @Flag(help: "Read and fingerprint every source again instead of trusting unchanged file stats, and decode again the sources that failed to decode before.")
    var rehash = false

    @Flag(help: ArgumentHelp("Do not flush the tables to disk as entries are published: faster where the disk is the limit. "
                             + "A killed bake still leaves no torn entry, but after a power cut or system crash run "
                             + "'imagetable verify --repair' before trusting the tables (docs/BAKE.md)."))
    var noSync = false

    @Option(parsing: .unconditional, help: ArgumentHelp("Leave sources modified less than this long ago for a later bake (for directories written slowly).",
                               valueName: "seconds"))
    var minAge: Double?

    @Option(help: "Output: text (a summary), json (one document) or github (annotations, then the summary).")
    var format: OutputFormat = .text

    @Flag(inversion: .prefixedNo,
          help: "Progress on standard error. Default: a bar on a terminal, nothing elsewhere; --progress adds plain lines where it is not a terminal (a CI log); --no-progress shows none.")
    var progress: Bool?

    @Option(parsing: .unconditional, help: ArgumentHelp("Bake only the sources whose key falls in shard K of N (see docs/SCALE.md), into --output; "
                               + "'auto' or 'auto/N' takes K from JOB_COMPLETION_INDEX (Kubernetes) or SLURM_ARRAY_TASK_ID (Slurm).",
                               valueName: "K/N"))
    var shard: String?

    @Option(help: ArgumentHelp("Write the tables and the bake state here instead of the manifest's output (one directory per shard).",
                               valueName: "dir"))
    var output: String?

    @Option(help: ArgumentHelp("The directory output and sources must stay inside (default: the manifest's directory).",
                               valueName: "dir"))
    var root: String?

    @Flag(help: "Allow output and sources outside the manifest's directory (or --root), and links leading out of them.")
    var allowOutsidePaths = false

    func run() throws {
        let validator = ManifestValidator(options: ValidationOptions(allowOutsidePaths: allowOutsidePaths, root: root))
        let report = validator.validate(fileAt: manifest)
        guard var plan = report.manifest else {
            BakeReport.printInvalid(report, format: format, listing: list)
            throw ExitStatus.failure
        }
        if let output {
            plan = plan.writing(to: Directories.absolute(output), display: output)
            // validate's output-is-sources, for the directory the manifest does not name.
            let resolved = SourceScanner.resolvedPath(plan.outputPath)
            if let family = plan.families.first(where: { SourceScanner.resolvedPath($0.sourcesPath) == resolved }) {
                // Thrown from run(), a ValidationError's usage line would be the root command's:
                // printed here, with this command's usage as every other usage error has.
                let error = ValidationError("--output \(output) is the sources directory of family '\(family.name)': the tables and the "
                                            + "bake state would lie among the source images; give the tables a directory of their own.")
                let message = Self.message(for: error)
                ImageTableCommand.printEscaped("Error: \(message)\nUsage: \(ImageTableCommand.usageString(for: Self.self))\n"
                                               + "  See 'imagetable bake --help' for more information.", error: message)
                throw ExitStatus.usage
            }
        }
        for diagnostic in report.diagnostics {
            switch format {
            case .text: StandardError.print(DiagnosticLines.compilerStyle(diagnostic))
            case .github: Swift.print(DiagnosticLines.githubAnnotation(diagnostic))
            case .json: break
            }
        }
        var options = BakeOptions(workerExecutable: Self.workerPath)
        options.jobs = jobs ?? options.jobs
        options.decoding.maxPixels = maxPixels
        if let maxSourceSize, let bytes = ByteSize.parse(maxSourceSize) { options.decoding.maxSourceBytes = bytes }
        options.timeout = timeout
        if let maxWorkerMemory { options.workerMemoryLimit = maxWorkerMemory == "none" ? nil : ByteSize.parse(maxWorkerMemory) }
        options.lockTimeout = lockTimeout
        options.strict = strict
        options.dryRun = dryRun || list
        options.prune = prune
        options.rehash = rehash
        if noSync { options.durability = .processCrashOnly }
        options.minAge = minAge
        options.allowOutsidePaths = allowOutsidePaths
        options.shard = try shard.map { try ShardSelection.parse($0, environment: ProcessInfo.processInfo.environment) }
        if !options.dryRun {
            // Ctrl-C or a CI system's cancel stops the bake between two sources: what it baked
            // is kept and reported (JSON too), then it ends by the signal (130, 143 in a shell).
            let shown = manifest
            options.interruption = BakeInterruption(begin: { InterruptSignals.catchFromNow() }, end: { InterruptSignals.release() },
                                                    requested: { InterruptSignals.caught.map { Self.interrupted(by: $0, manifest: shown) } })
        }
        let display = progressDisplay()
        let shown = Mutex<Set<SourceFailure>>([])
        if let display {
            options.progress = { @Sendable progress in display.update(progress) }
            if format != .json {
                options.failed = { @Sendable failure in
                    shown.withLock { _ = $0.insert(failure) }
                    display.failed(failure)
                }
            }
        }
        let summary: BakeSummary
        let started = Date()
        do {
            // A bake `--strict` stopped still reports what it did before (exit 1 below).
            summary = try Baker.bakeReportingStop(plan, options: options)
            display?.finish()
        } catch {
            display?.finish()
            BakeReport.printFatal(error.namingLockTimeoutOption(), report: report, format: format, seconds: Date().timeIntervalSince(started), dryRun: options.dryRun,
                                  listing: list)
            if let signal = InterruptSignals.caught { Self.endInterrupted(by: signal) }
            throw ExitStatus.failure
        }
        if list {
            let listing = summary.plan?.listing(skipping: summary.skipped, failing: summary.failed) ?? []
            if format == .json {
                Swift.print(SourceListing.json(listing, stoppedBy: summary.stoppedBy), terminator: "")
            } else {
                StandardOutput.write(SourceListing.text(listing))
            }
            if format != .json {
                // A failure the plan does not list (a directory that cannot be listed, a link
                // that cannot be followed) is said here in full: its line above, if it has one
                // (`failed`), gives only its code.
                let keys = Set(listing.filter { $0.status != .failed }.map { "\($0.family)/\($0.key)" })
                for failure in summary.failed where !keys.contains("\(failure.family)/\(failure.key)") { StandardError.report(failure.error) }
                // What the listing rests on: a bake state started afresh or not written.
                for warning in summary.warnings where warning.code?.hasPrefix("state-") == true { StandardError.print(warning.description) }
                StandardError.print(SourceListing.counts(listing))
                if let fatal = summary.stoppedBy { StandardError.report(fatal) }
            }
            // `--strict` with a failure known before decoding stops the bake: the listing says so.
            if summary.stoppedBy != nil { throw ExitStatus.failure }
            return
        }
        BakeReport.print(summary, report: report, manifestPath: manifest, format: format, alreadyShown: shown.withLock { $0 })
        if let signal = InterruptSignals.caught { Self.endInterrupted(by: signal) }
        if summary.stoppedBy != nil { throw ExitStatus.failure }
        if !summary.failed.isEmpty { throw ExitCode(3) }
    }

    /// Ends an interrupted bake, its report written: killed by the signal it caught, as the
    /// shell expects of a command the user interrupted.
    static func endInterrupted(by signal: Int32) -> Never {
        _ = StandardOutputFlush.finish(status: 128 + signal)
        InterruptSignals.end(by: signal)
    }

    /// The error an interrupted bake stops with.
    static func interrupted(by signal: Int32, manifest: String) -> ImageTableError {
        ImageTableError(.interrupted, "interrupted by \(InterruptSignals.name(signal)): the sources already sent to workers were finished "
                        + "and every entry baked is kept; bake again to go on", path: manifest)
    }

    /// A bar on a terminal unless `--no-progress`; plain lines elsewhere only with `--progress`.
    /// A dry run and `--list` show the listing and the check of the sources too (they render
    /// nothing): planning 250,000 touched sources took seconds in silence.
    private func progressDisplay() -> (any BakeProgressDisplay)? {
        if isatty(2) == 1 { return progress == false ? nil : ProgressBar() }
        return progress == true ? ProgressLines() : nil
    }

    /// This executable.
    static var executablePath: String { Bundle.main.executablePath ?? CommandLine.arguments[0] }

    /// `imagetable-worker`, installed next to this executable.
    static var workerPath: String {
        Directories.parent(of: executablePath) + "/imagetable-worker"
    }
}

