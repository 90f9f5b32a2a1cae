import ImageTableCore

// `export` and `merge` write into a staging directory beside their output and rename it into
// place: an error about a file in it names the file where it was going.
extension ImageTableError {
    /// This error, naming a file of `staging` by its place in `destination`: the staging
    /// directory is gone by the time the error is reported, and its name means nothing to people.
    ///
    /// - Parameters:
    ///   - staging: the staging directory.
    ///   - destination: the output as the user gave it.
    /// - Returns: the error at its destination path, or unchanged when it is not about a file of
    ///   `staging`.
    func relocated(from staging: String, to destination: String) -> ImageTableError {
        guard let path, let rest = PathBytes.remainder(path, after: staging + "/") else { return self }
        let shown = destination.hasSuffix("/") ? String(destination.dropLast()) : destination
        return at(shown + "/" + rest)
    }
}
