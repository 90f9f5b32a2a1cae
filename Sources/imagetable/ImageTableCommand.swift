import ArgumentParser

/// The `imagetable` command: bakes images into image tables and checks manifests and tables.
///
/// Each subcommand lives in its own file. This executable does not link libvips: pixel work runs
/// in `imagetable-worker` processes, so commands that touch no pixels start without loading it.
@main
struct ImageTableCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imagetable",
        abstract: "Bake images into memory-mappable image tables, driven by a YAML manifest.",
        discussion: """
            Manifests are documented in docs/MANIFEST.md; the table file format in docs/FORMAT.md;
            every command, its options and its JSON output in docs/CLI.md.

            EXIT STATUS
              0   success (for validate: every manifest is valid; for verify: every table is sound)
              1   failure (for validate: some manifest has errors; for bake and merge: a fatal
                  error; for inspect, verify, extract and preview: a table, entry or output
                  file failed)
              3   bake finished but some sources failed; merge finished but left some
                  damaged entries out
              64  bad usage: unknown option, missing or malformed argument
            """,
        subcommands: [ValidateCommand.self, BakeCommand.self, MergeCommand.self, InspectCommand.self, VerifyCommand.self,
                      ExtractCommand.self, PreviewCommand.self]
    )
}
