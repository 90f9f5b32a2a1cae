import ArgumentParser
import Foundation
import ImageBake
import ImageManifest
import ImageTableCore

/// `imagetable export MANIFEST --to DIR`: a compact, reproducible copy of a manifest's tables,
/// for whatever ships them (an app bundle, a container image, a release artifact).
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Copy a manifest's tables, compact and reproducible.",
        usage: "imagetable export [<options>] <manifest> --to <dir>",
        discussion: """
            Each table the manifest names is read under its writer lock (so a bake is
            seen finished, never halfway) and written anew into DIR: entries in the
            order of their keys, slot 0 first with no gaps, every time recorded set to
            SOURCE_DATE_EPOCH (or 0 when it is not set), recency counting up in that
            order. DIR gets the tables and index.json, which lists them with their
            SHA-256; no lock file and no bake state. Two bakes of the same sources and
            manifest export the same bytes, whatever their --jobs or directory.

            DIR is replaced whole: the new files are written beside it and swapped in
            with one rename, so a reader sees the old set or the new one, never a mix.
            It must be absent, empty or an earlier export; a directory of other files
            is refused (not-an-export).

            EXAMPLES
              imagetable export --root . manifests/demo.yaml --to build/tables
              SOURCE_DATE_EPOCH=$(git log -1 --format=%ct) imagetable export \\
                site.yaml --to Bundle/Tables
              imagetable export site.yaml --to out --format json | jq .tables
              imagetable export site.yaml --output merged --to dist   # after merge

            EXIT STATUS
              0   DIR holds the export
              1   the manifest is invalid, a table is missing, stale (made with other
                  parameters: bake first), locked, damaged, or DIR cannot be replaced
              64  bad usage (also a SOURCE_DATE_EPOCH that is not a whole number)
            """
    )

    @Argument(help: "The manifest whose tables to export.")
    var manifest: String

    @Option(help: ArgumentHelp("The directory to replace with the export.", valueName: "dir"))
    var to: String

    @Option(help: ArgumentHelp("Read the tables from here instead of the manifest's output: a bake's --output, or what merge wrote.",
                               valueName: "dir"))
    var output: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Seconds to wait for a bake that holds a table.", valueName: "seconds"))
    var lockTimeout: Double = 10

    @Option(help: "Output: text (a summary) or json (one document).")
    var format: TableOutputFormat = .text

    @Option(help: ArgumentHelp("The directory output must stay inside (default: the manifest's directory).",
                               valueName: "dir"))
    var root: String?

    @Flag(help: "Allow an output directory outside the manifest's directory (or --root).")
    var allowOutsidePaths = false

    func validate() throws {
        try ManifestArgument.refuseStandardInput(manifest, command: "export")
        try RootArgument.check(root)
        guard !to.isEmpty else { throw ValidationError("--to must name the directory to replace with the export, not ''.") }
        // '' read the tables of the working directory.
        guard output != "" else { throw ValidationError("--output must name the directory of the tables to export, not ''.") }
        guard lockTimeout >= 0 else { throw ValidationError("--lock-timeout must be a number of seconds, 0 or more.") }
        _ = try Self.sourceDateEpoch()
    }

    /// `SOURCE_DATE_EPOCH` (reproducible-builds.org): whole seconds since 1970, or 0 when unset.
    static func sourceDateEpoch() throws -> UInt64 {
        guard let value = ProcessInfo.processInfo.environment["SOURCE_DATE_EPOCH"] else { return 0 }
        guard !value.isEmpty, value.allSatisfy(\.isASCII), value.allSatisfy(\.isNumber), let seconds = UInt64(value),
              seconds <= UInt64(Int64.max) else {
            throw ValidationError("SOURCE_DATE_EPOCH must be a whole number of seconds since 1970, not '\(value)'.")
        }
        return seconds
    }

    func run() throws {
        let report = ManifestValidator(options: ValidationOptions(allowOutsidePaths: allowOutsidePaths, root: root))
            .validate(fileAt: manifest)
        guard var plan = report.manifest else {
            printFailure(ImageTableError(.invalidManifest, "the manifest has errors", path: report.file), report: report)
            throw ExitStatus.failure
        }
        // The tables of `bake --output DIR` or of `merge DIR …`, which the manifest's output
        // does not name (a sharded bake's merged set could not be exported).
        if let output { plan = plan.writing(to: Directories.absolute(output), display: output) }
        do {
            let summary = try TableExport.export(plan, to: to, timestamp: try Self.sourceDateEpoch(), lockTimeout: lockTimeout)
            ExportReport.print(summary, manifest: manifest, report: report, format: format)
        } catch let error as ImageTableError {
            printFailure(error.namingLockTimeoutOption(), report: report)
            throw ExitStatus.failure
        }
    }

    private func printFailure(_ error: ImageTableError, report: ValidationReport) {
        switch format {
        case .json:
            ExportReport.printFailure(error, report: report, directory: to)
        case .text:
            if error.code == .invalidManifest {
                // Errors go to standard error, as every other error of the command does.
                StandardError.write(TextReport.render([report]))
            } else {
                StandardError.report(error)
            }
        }
    }
}
