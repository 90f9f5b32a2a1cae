import ArgumentParser

/// The manifest argument of `bake` and `export`, which must name a file.
enum ManifestArgument {
    /// Refuses `-`: `validate -` reads standard input, and `cat site.yaml | imagetable bake -`
    /// then said "-:1:1: error: cannot open the manifest: No such file or directory".
    ///
    /// - Parameters:
    ///   - manifest: the argument.
    ///   - command: the command's name, for the message.
    /// - Throws: a `ValidationError` (bad usage, exit 64) when `manifest` is `-`.
    static func refuseStandardInput(_ manifest: String, command: String) throws {
        try refuseEmpty([manifest])
        guard manifest == "-" else { return }
        throw ValidationError("\(command) reads its manifest from a file, whose directory its sources and output are relative to; "
                              + "only validate reads one from standard input ('-').")
    }

    /// Refuses an empty manifest path (an unset variable), which was reported as
    /// `:1:1: error: cannot open the manifest`, naming no file.
    ///
    /// - Parameter manifests: the command's manifest arguments.
    /// - Throws: a `ValidationError` (exit 64).
    static func refuseEmpty(_ manifests: [String]) throws {
        guard !manifests.contains("") else { throw ValidationError("a manifest's path is empty: name the manifest file.") }
    }
}
