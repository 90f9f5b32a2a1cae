import ImageTableCore

extension Manifest.Family {
    /// What `validate` and a bake say of a family whose sources directory holds no file it
    /// selects (`no-sources`): its directory and patterns, since a pattern that matches nothing
    /// (`*.jpeg` over `.jpg` files) is the usual cause, and an empty table then ships green. Not
    /// "its tables stay empty": they keep what earlier bakes put in them.
    public var noSourcesMessage: String {
        let byDefault = include.map(\.pattern) == [GlobPattern.images.pattern]
        let patterns = byDefault ? "the image file names" : include.map { "'\($0.pattern)'" }.joined(separator: ", ")
        let excluding = exclude.isEmpty ? "" : ", excluding " + exclude.map { "'\($0.pattern)'" }.joined(separator: ", ")
        // `*.jpg` over a camera's `IMG_1.JPG`: the default pattern takes any case, written ones do not.
        let cased = !byDefault && include.contains { $0.pattern.contains(where: \.isLetter) }
        return "family '\(name)' has no sources: no file in '\(sources)' matches \(patterns)\(excluding); nothing is baked for it "
            + "(check 'sources' and 'include'\(cased ? "; a pattern matches letters in their case only" : ""))"
    }

    /// What `validate` and a bake say of images this family's patterns select inside the output
    /// directory, which lies inside its sources and is never scanned (`output-holds-sources`):
    /// an output that names a directory of images was probably meant to be another one.
    ///
    /// - Parameters:
    ///   - output: the output directory as the reader would write it.
    ///   - found: the first keys found there, how many there are, and whether that count is all
    ///     of them (``SourceScanner/Scan/inExcluded``).
    public func outputHoldsSourcesMessage(output: String, found: (keys: [String], count: Int, complete: Bool)) -> String {
        let (keys, count, complete) = found
        let shown = keys.map { PrintableText.quoted($0) }.joined(separator: ", ") + (count > keys.count ? ", …" : "")
        return "the output directory '\(output)' lies inside the sources of family '\(name)' and holds \(count)\(complete ? "" : " or more") "
            + "\(count == 1 && complete ? "image" : "images") its patterns select (\(shown)); "
            + "the output directory is never scanned, so \(count == 1 ? "it is" : "they are") not baked: move "
            + "\(count == 1 ? "it" : "them") out of the output directory, or give the manifest another output"
    }
}
