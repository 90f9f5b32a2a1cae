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
}
