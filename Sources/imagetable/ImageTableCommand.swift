import ArgumentParser

/// The `imagetable` command: bakes images into image tables and checks manifests and tables.
///
/// Each subcommand lives in its own file. Commands that touch pixels initialise libvips
/// themselves, when they run, so that `validate` (and `--help`) never pay for it.
@main
struct ImageTableCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imagetable",
        abstract: "Bake images into memory-mappable image tables, driven by a YAML manifest.",
        discussion: """
            Manifests are documented in docs/MANIFEST.md; the table file format in docs/FORMAT.md.

            EXIT STATUS
              0   success (for validate: every manifest is valid)
              1   failure (for validate: some manifest has errors; for bake: a fatal error)
              3   bake finished but some sources failed
              64  bad usage: unknown option, missing or malformed argument
            """,
        subcommands: [ValidateCommand.self, BakeCommand.self, BakeWorkerCommand.self]
    )
}
