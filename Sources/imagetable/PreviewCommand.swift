import ArgumentParser
import WorkerProtocol

/// `imagetable preview TABLE -o sheet.png`: a contact sheet of a table's entries. Parsing and
/// checks happen here; the drawing runs in `imagetable-worker`, which runs libvips.
struct PreviewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preview",
        abstract: "Draw a contact sheet of a table's entries.",
        usage: "imagetable preview [<options>] <table> -o <file>",
        discussion: """
            The sheet is an RGB PNG: a title line (format, family, size, style, entry
            count), then a grid of tiles, one per entry, with its key below it
            (shortened in the middle with … when too long). Tiles are the slots scaled
            down to fit --tile-size, never enlarged; transparent parts of 32BitBGRA
            entries show a checkerboard.

            Captions need libvips built with Pango. Without it the sheet keeps its
            size with blank captions, and a note says why. --no-captions drops the
            title and the captions and packs the tiles closer. docs/CLI.md gives the
            sheet's exact size.

            EXAMPLES
              imagetable preview tables/showcase/grid@2x.imagetable -o grid.png
              imagetable preview tables/showcase/detail@2x.imagetable -o d.png --columns 4
              imagetable preview tables/big.imagetable -o recent.png --sort recency

            EXIT STATUS
              0   the sheet was written, with every entry shown
              1   the table is missing, unreadable or not a table, an entry could not
                  be read, or the sheet could not be written
              64  bad usage
            """
    )

    @Argument(help: ArgumentHelp("The table to preview.", valueName: "table"))
    var table: String

    @Option(name: [.customShort("o"), .long], help: ArgumentHelp("The PNG file to write; - for standard output.", valueName: "file"))
    var output: String

    @Option(parsing: .unconditional, help: ArgumentHelp("Tiles per row (default: about square, at most 2048 pixels wide).", valueName: "n"))
    var columns: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp("The longest side of a tile in pixels, 16 to 1024; smaller slots stay their size.", valueName: "pixels"))
    var tileSize = 160

    @Option(parsing: .unconditional, help: ArgumentHelp("Show at most N entries.", valueName: "n"))
    var limit = 500

    @Option(help: "Order of the tiles: key, slot or recency (most recent first).")
    var sort: EntryOrder = .key

    @Flag(inversion: .prefixedNo, help: "Draw the title and the keys under the tiles.")
    var captions = true

    func validate() throws {
        try TableArguments.refuseEmpty([table])
        if let columns, columns < 1 { throw ValidationError("--columns must be at least 1.") }
        guard (16...1024).contains(tileSize) else { throw ValidationError("--tile-size must be 16 to 1024.") }
        guard limit >= 1 else { throw ValidationError("--limit must be at least 1.") }
        guard !output.isEmpty else { throw ValidationError("-o needs a file name.") }
    }

    func run() throws {
        try WorkerLauncher.refuseTerminal(output)
        try WorkerLauncher.checkTable(table)
        try WorkerLauncher.run(.preview(PreviewJob(table: table, output: output, columns: columns, tileSize: tileSize,
                                                   limit: limit, order: sort.rawValue, captions: captions)))
    }
}
