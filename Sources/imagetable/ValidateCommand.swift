import ArgumentParser
import ImageManifest

/// `imagetable validate MANIFEST...`: checks manifests for CI without touching images or tables.
///
/// It never calls into the pixel pipeline, so libvips is not initialised.
struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check manifests and show the tables they would make.",
        usage: "imagetable validate [<options>] <manifest> ...",
        discussion: """
            Every problem in every manifest is reported, with its line, column and a
            stable code (docs/MANIFEST.md, "Diagnostics"). For a valid manifest the
            tables are listed with their pixel size, style, bytes per row, slot size,
            capacity and maximum size on disk (at a 4 KiB page size); so they are for a
            manifest whose only error is the --max-disk budget, to show which tables
            take the space.

            SIZE is a number with an optional unit: B, kB, MB, GB, TB (powers of 1000)
            or KiB, MiB, GiB, TiB (powers of 1024), in any case, such as 500MB or 2GiB.

            EXAMPLES
              imagetable validate --root . manifests/*.yaml
              imagetable validate --root . --format github --max-disk 2GiB manifests/*.yaml
              imagetable validate --format json site.yaml | jq .manifests[0].tables
              generate-manifest | imagetable validate -      # a manifest on standard input

            EXIT STATUS
              0   every manifest is valid
              1   some manifest has errors (or warnings, with --warnings-as-errors)
              64  bad usage
            """
    )

    @Argument(help: ArgumentHelp("The manifests to check; - for standard input.", valueName: "manifest"))
    var manifests: [String]

    @Option(help: "Output: text (compiler-style), json (one document) or github (workflow annotations).")
    var format: OutputFormat = .text

    @Flag(help: "Treat warnings as errors.")
    var warningsAsErrors = false

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Make a manifest whose tables may grow past SIZE in total an error (units B, kB, MB, GB, TB, KiB, MiB, GiB, TiB).",
                               valueName: "size"))
    var maxDisk: String?

    @Option(help: ArgumentHelp("The directory output and sources must stay inside (default: each manifest's own directory).",
                               valueName: "dir"))
    var root: String?

    @Flag(help: "Allow output and sources paths that are absolute or leave the manifest's directory (or --root).")
    var allowOutsidePaths = false

    func validate() throws {
        try ManifestArgument.refuseEmpty(manifests)
        try RootArgument.check(root)
        // Read here rather than as a typed option: `-5` was taken for an option ("Missing value")
        // and `2XB` was "invalid" without saying what is valid.
        if let maxDisk, ByteSize.parse(maxDisk) == nil {
            throw ValidationError("--max-disk must be a size such as 500MB or 2GiB (units B, kB, MB, GB, TB, KiB, MiB, GiB, TiB), not '\(maxDisk)'.")
        }
        if manifests.count(where: { $0 == "-" }) > 1 { throw ValidationError("'-' (the manifest on standard input) may be given once.") }
    }

    func run() throws {
        let options = ValidationOptions(allowOutsidePaths: allowOutsidePaths, warningsAsErrors: warningsAsErrors,
                                        maxDiskBytes: maxDisk.flatMap(ByteSize.parse), root: root, countsSources: true)
        let validator = ManifestValidator(options: options)
        let reports = manifests.map { $0 == "-" ? validator.validateStandardInput() : validator.validate(fileAt: $0) }
        switch format {
        case .text: StandardOutput.write(TextReport.render(reports))
        case .json: print(JSONReport.render(reports), terminator: "")
        case .github: print(GitHubReport.render(reports), terminator: "")
        }
        if reports.contains(where: { !$0.isValid }) { throw ExitStatus.failure }
    }
}
