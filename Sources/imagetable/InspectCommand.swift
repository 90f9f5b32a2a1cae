import ArgumentParser
import Foundation
import ImageTableCore

/// `imagetable inspect TABLE...`: the header, size and entries of tables, read-only.
///
/// Pure `ImageTableCore`: it maps the file and reads the index, and never loads libvips.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show tables' headers, sizes and entries.",
        usage: "imagetable inspect [<options>] <table> ...",
        discussion: """
            For each table: its format (name, family, scale, protection), pixel size
            and style, row and slot sizes, how many entries it holds of its capacity,
            its size on disk now and when full, when it was created and its parameter
            hash; then one line per entry: slot, key, recency (larger is more recently
            used), when it was written (UTC), content rectangle, entity UUID and
            source UUID.

            The table is opened read-only without a lock, so inspecting a table that
            a bake is writing is safe; entries committed meanwhile may or may not be
            listed. The JSON fields are documented in docs/CLI.md ("inspect").

            EXAMPLES
              imagetable inspect tables/*.imagetable --no-entries
              imagetable inspect tables/showcase/grid@2x.imagetable --sort recency \\
                --limit 20
              imagetable inspect tables/showcase/grid@2x.imagetable --format json \\
                | jq -r '.tables[0].entries[].key'

            EXIT STATUS
              0   every table could be read
              1   some table is missing, unreadable, not a table or has a bad header
              64  bad usage
            """
    )

    @Argument(help: ArgumentHelp("The tables to inspect.", valueName: "table"))
    var tables: [String]

    @Option(help: "Output: text (for people) or json (one document on standard output).")
    var format: TableOutputFormat = .text

    @Flag(inversion: .prefixedNo, help: "List the entries, or only the header and totals.")
    var entries = true

    @Option(help: "Order of the entries listed: slot (default), key or recency (most recently used first).")
    var sort: EntryOrder?

    @Option(parsing: .unconditional, help: ArgumentHelp("List at most N entries of each table (totals still count them all).", valueName: "n"))
    var limit: Int?

    func validate() throws {
        try TableArguments.refuseEmpty(tables)
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more.") }
        // Each would be dropped without a word: --no-entries lists none to sort or limit.
        if !entries, sort != nil || limit != nil {
            throw ValidationError("--\(sort != nil ? "sort" : "limit") orders or limits the entries listed, and --no-entries lists none.")
        }
    }

    func run() throws {
        var results: [InspectReport.TableResult] = []
        for path in TableArguments.withoutLockFiles(tables) {
            do {
                let reader = try TableOpener.open(path)
                let listing: (([ImageTableCore.EntryInfo]) -> [ImageTableCore.EntryInfo])? =
                    entries ? { [sort, limit] in (sort ?? .slot).apply($0, limit: limit) } : nil
                results.append(.init(path: path, summary: TableInspection(reader, listing: listing), error: nil))
            } catch {
                results.append(.init(path: path, summary: nil, error: error))
            }
        }
        switch format {
        case .json:
            print(InspectReport.json(results), terminator: "")
        case .text:
            var first = true
            for result in results {
                if let summary = result.summary {
                    StandardOutput.write((first ? "" : "\n") + InspectReport.text(summary))
                    for notice in summary.notices {
                        StandardError.print("\(result.path): warning: \(notice.message) [\(notice.kind)]")
                    }
                    first = false
                } else {
                    if let error = result.error { StandardError.report(error) }
                }
            }
        }
        if results.contains(where: { $0.summary == nil }) { throw ExitStatus.failure }
    }
}

/// `--format` of the table commands: no GitHub annotations, there is no source line to annotate.
enum TableOutputFormat: String, CaseIterable, ExpressibleByArgument {
    case text
    case json
}
