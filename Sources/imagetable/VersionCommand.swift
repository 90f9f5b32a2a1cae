import ArgumentParser
import ImageTableCore
import WorkerProtocol

/// The versions this build speaks: the tool's own, the table file format's, the rendering
/// pipeline's (a table's parameter hash covers it) and the worker protocol's.
enum ToolVersion {
    /// The tool's version, as `--version` prints it; `CHANGELOG.md`'s latest heading names it.
    static let current = "0.1.0"
}

/// `imagetable version`: what `--version` prints, with the versions a script may have to check
/// (a table written by another build, a worker installed from another build), also as JSON.
struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Show the versions of the tool, format and protocol.",
        discussion: """
            `imagetable --version` prints the tool's version alone. This command also
            names the table file format version it reads and writes, the rendering
            version recorded in every table's parameters (a table of another version
            is rebuilt by the next bake) and the protocol version it speaks with
            imagetable-worker (which must be from the same build).

            EXAMPLES
              imagetable version
              imagetable version --format json | jq -r .imagetable

            EXIT STATUS
              0   the version was printed
              64  bad usage
            """
    )

    @Option(help: "Output: text (one line each) or json (one document).")
    var format: TableOutputFormat = .text

    private struct Document: Encodable {
        let version = 1
        let imagetable: String
        let tableFormat: Int
        let rendering: Int
        let workerProtocol: Int
    }

    func run() {
        let document = Document(imagetable: ToolVersion.current, tableFormat: Int(TableHeader.version),
                                rendering: TableFormat.pipelineRenderingVersion, workerProtocol: WorkerProtocolVersion.current)
        switch format {
        case .json:
            print(JSONOutput.encode(document), terminator: "")
        default:
            print("""
                imagetable \(document.imagetable)
                table format \(document.tableFormat)
                rendering \(document.rendering)
                worker protocol \(document.workerProtocol)
                """)
        }
    }
}
