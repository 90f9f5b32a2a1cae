/// "Did you mean" suggestions for misspelt keys and values.
public enum Suggestion {
    /// The candidate nearest to `word`, when it is near enough to be a plausible typo.
    ///
    /// Case is ignored first (`maximumcount` → `maximumCount` is always suggested), then the
    /// Damerau–Levenshtein distance must be at most a third of the word, so `stlye` finds `style`
    /// but `colour` does not find `scales`. Long words are not compared: they are not typos, and
    /// comparing them would cost time proportional to their length for every unknown key.
    ///
    /// - Parameters:
    ///   - word: what the user wrote.
    ///   - candidates: the valid spellings.
    public static func nearest(to word: String, in candidates: [String]) -> String? {
        let lowered = word.lowercased()
        if let exact = candidates.first(where: { $0.lowercased() == lowered }) { return exact }
        if let meant = synonyms[lowered], candidates.contains(meant) { return meant }
        guard word.count <= 64 else { return nil }
        let limit = max(1, word.count / 3)
        var best: (String, Int)?
        for candidate in candidates {
            let d = distance(Array(lowered), Array(candidate.lowercased()))
            if d <= limit, d < (best?.1 ?? .max) { best = (candidate, d) }
        }
        return best?.0
    }

    /// Other tools' words for a key (Eleventy Image, asset catalogs, FastImageCache's own
    /// `maximumCount`), lowercased: too far from the key's spelling to be found as a typo.
    static let synonyms: [String: String] = [
        "maxcount": "maximumCount", "count": "maximumCount", "capacity": "maximumCount",
        "limit": "maximumCount", "maxentries": "maximumCount",
        "radius": "cornerRadius", "corner": "cornerRadius", "rounded": "cornerRadius",
        "color": "background", "colour": "background", "bg": "background", "backgroundcolor": "background",
        "protect": "protection", "permissions": "protection",
        "src": "sources", "source": "sources", "inputs": "sources",
        "out": "output", "outdir": "output", "outputdir": "output", "dest": "output", "destination": "output",
        "family": "families", "format": "formats", "scale": "scales", "dimensions": "size", "resize": "fit",
        "pattern": "include", "patterns": "include", "glob": "include", "ignore": "exclude",
    ]


    /// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
    /// adjacent characters each cost 1 (a swap is the most common typo).
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}
