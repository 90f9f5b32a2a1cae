import ArgumentParser
import ImageManifest
import ImageTableCore
import WorkerProtocol

/// `imagetable extract TABLE KEY -o FILE` and `imagetable extract TABLE --all DIR`: entries as
/// PNG files. Parsing and checks happen here; the conversion and encoding run in
/// `imagetable-worker`, which runs libvips.
struct ExtractCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extract",
        abstract: "Write table entries as PNG files.",
        usage: """
            imagetable extract [<options>] <table> <key> -o <file>
              imagetable extract [<options>] <table> --all <dir>
            """,
        discussion: """
            Pixels are converted from the table's style by docs/FORMAT.md's rules:
              32BitBGRA       RGBA PNG, alpha unpremultiplied (straight, as PNG wants)
              32BitBGR        RGB PNG
              16BitBGR        RGB PNG, 5-bit channels widened as (v << 3) | (v >> 2)
              8BitGrayscale   greyscale PNG
            The whole slot is written (for `inside` fits, the image and the empty
            area around it), or with --content only the entry's content rectangle.

            With --all, each entry is written to DIR as its key plus `.png`, in
            subdirectories for keys with `/`: photos/cat.jpg becomes
            DIR/photos/cat.jpg.png. No key can name a file outside DIR: empty and `.`
            components are dropped (absolute keys become relative), `..` becomes
            %2E%2E, and `%`, `\\` and control characters are percent-encoded; when two
            keys still share a name, the later slot's file gets ~slotN before `.png`.
            Renamed keys are noted on standard error. Symbolic links inside DIR are
            never followed.

            Each file is written under a temporary name, then renamed into place;
            existing regular files are replaced, never the table, a device, a FIFO
            or a link. Files get the table's protection (0644, 0640 or 0600, less
            the umask). An entry whose pixels fail their checksum is
            written as it is, with a warning; -o - writes the PNG to standard output.

            EXAMPLES
              imagetable extract tables/showcase/grid@2x.imagetable landscape.jpg \\
                -o landscape.png
              imagetable extract tables/showcase/grid@2x.imagetable --all out/grid
              imagetable extract tables/showcase/detail@2x.imagetable landscape.jpg \\
                --content -o - | display

            EXIT STATUS
              0   every requested entry was written
              1   the table is missing, unreadable or not a table, the key is not in
                  it, a file could not be written, or a record was skipped as
                  damaged (--all: the other entries are still written)
              64  bad usage
            """
    )

    @Argument(help: ArgumentHelp("The table to read.", valueName: "table"))
    var table: String

    @Argument(help: ArgumentHelp("The key of the entry to extract (with -o).", valueName: "key"))
    var key: String?

    @Option(name: [.customShort("o"), .long], help: ArgumentHelp("The PNG file to write; - for standard output; in a directory (or a path ending in /), "
                                                                       + "named after the key's last part: -o out/ writes out/cat.jpg.png.", valueName: "file"))
    var output: String?

    @Option(help: ArgumentHelp("Extract every entry into DIR (created if missing), named after their keys.", valueName: "dir"))
    var all: String?

    @Flag(help: "Write only the entry's content rectangle instead of the whole slot.")
    var content = false

    @Flag(name: .shortAndLong, help: "With --all, print a line for every file written.")
    var verbose = false

    func validate() throws {
        try TableArguments.refuseEmpty([table])
        switch (key, output, all) {
        case (.some, .some, nil), (nil, nil, .some): break
        case (.some, nil, nil): throw ValidationError("Give -o FILE for the PNG of '\(key!)' (or -o - for standard output).")
        case (nil, .some, nil): throw ValidationError("Give the KEY of the entry to write to \(output!), or use --all DIR.")
        case (_, _, .some):
            // Named: `--all out --format json` read `json` as a key (extract has no --format).
            let given = [key.map { "KEY '\(PrintableText.escaped($0))'" }, output.map { "-o '\(PrintableText.escaped($0))'" }].compactMap { $0 }
            throw ValidationError("--all extracts every entry; it takes neither a KEY nor -o (given: \(given.joined(separator: ", "))).")
        default: throw ValidationError("Give a KEY and -o FILE, or --all DIR.")
        }
        if let all, all.isEmpty { throw ValidationError("--all needs a directory.") }
        if verbose && all == nil { throw ValidationError("--verbose lists the files --all writes; with -o, the one file is always said.") }
        if let output, output.isEmpty { throw ValidationError("-o needs a file name.") }
    }

    func run() throws {
        try WorkerLauncher.refuseTerminal(output)
        let reader = try WorkerLauncher.checkTable(table)
        // Checked here, where the manifest's spelling rules are, to suggest the key meant.
        if let key, reader.entry(forKey: key) == nil {
            StandardError.report(reader.missingKeyError(key, path: table) { Self.nearest(to: key, in: $0) })
            throw ExitStatus.failure
        }
        try WorkerLauncher.run(.extract(ExtractJob(table: table, key: key, output: output, all: all, contentOnly: content,
                                                   verbose: verbose)))
    }

    /// The key most likely meant by `key`: one that differs only in case; else, for a key
    /// asked without its directory, the first whose last path component is `key`
    /// (`photos/cat.jpg` for `cat.jpg`, before a typo, which took `café.jpg` for it); else one a
    /// typo away (``Suggestion/nearest(to:in:)``); else, for a key with a directory, the first
    /// with its last component. Typos are looked for in keys of four characters or more (one
    /// letter off `k` is any short key), among at most 100,000 keys, so a miss in a huge table
    /// stays quick.
    static func nearest(to key: String, in keys: [String]) -> String? {
        if let same = keys.first(where: { $0.lowercased() == key.lowercased() }) { return same }
        let parts = PathBytes.components(key)
        let name = (parts.last.map(String.init) ?? key).lowercased()
        let named = { keys.first { PathBytes.lastName($0).lowercased() == name } }
        if parts.count <= 1, let found = named() { return found }
        if key.count >= 4, keys.count <= 100_000, let typo = Suggestion.nearest(to: key, in: keys) { return typo }
        return named()
    }
}
