extension Manifest.Family {
    /// What `validate` and a bake say of a family whose sources directory holds no file it
    /// selects (`no-sources`): its directory and patterns, since a pattern that matches nothing
    /// (`*.jpeg` over `.jpg` files) is the usual cause, and an empty table then ships green. Not
    /// "its tables stay empty": they keep what earlier bakes put in them.
    public var noSourcesMessage: String {
        let include = include.map(\.pattern) == [GlobPattern.images.pattern]
            ? "the image file names" : include.map { "'\($0.pattern)'" }.joined(separator: ", ")
        let excluding = exclude.isEmpty ? "" : ", excluding " + exclude.map { "'\($0.pattern)'" }.joined(separator: ", ")
        return "family '\(name)' has no sources: no file in '\(sources)' matches \(include)\(excluding); nothing is baked for it "
            + "(check 'sources' and 'include')"
    }
}
