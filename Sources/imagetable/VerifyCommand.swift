import ArgumentParser
import ImageTableCore

/// `imagetable verify TABLE...`: checks tables end to end, without changing them.
///
/// Pure `ImageTableCore` (its `TableVerifier`); never loads libvips.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check tables' headers, index records and every entry's pixel checksum.",
        discussion: """
            The header must decode and its checksum hold; every index record must be
            sound (state, record checksum, key matching its entity UUID, content
            rectangle inside the slot, one record per entity, slot inside the file);
            and every entry's pixels must match the CRC-32 in its record. Nothing is
            repaired: the next writer (a bake) drops damaged records when it opens
            the table.

            Each problem is a line on standard error,
              a.imagetable: error: slot 3 ('cat.jpg'): pixel checksum mismatch
              [pixel-checksum-mismatch]
            and each table gets a status line on standard output. An entry replaced
            by a writer while it is checked is skipped, not reported. The JSON fields
            are documented in docs/CLI.md ("verify").

            EXAMPLES
              imagetable verify tables/*.imagetable
              imagetable verify tables/grid@2x.imagetable --format json

            EXIT STATUS
              0   every table is sound
              1   some table has bad records or entries, or is missing, unreadable,
                  not a table or has a bad header
              64  bad usage
            """
    )

    @Argument(help: ArgumentHelp("The tables to verify.", valueName: "table"))
    var tables: [String]

    @Option(help: "Output: text (problems on standard error, a status line per table) or json (one document).")
    var format: TableOutputFormat = .text

    func run() throws {
        var results: [VerifyReport.TableResult] = []
        for path in tables {
            do {
                // Opening first gives typed errors (missing, not a table, permissions) that
                // the verifier would fold into one header problem.
                _ = try TableOpener.open(path)
                results.append(VerifyReport.result(path: path, TableVerifier.verify(path: path)))
            } catch {
                results.append(.init(path: path, ok: false, validEntries: 0, problems: [], error: error))
            }
        }
        switch format {
        case .json:
            print(VerifyReport.json(results), terminator: "")
        case .text:
            for result in results {
                let (problems, status) = VerifyReport.text(result)
                problems.forEach(StandardError.print)
                print(status)
            }
        }
        if !results.allSatisfy(\.ok) { throw ExitStatus.failure }
    }
}
