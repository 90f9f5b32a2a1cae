import ImageTableCore

extension SourceScanner {
    /// Leaves one file of each run of names that differ only in their Unicode normalization,
    /// and reports the others (`ambiguous-name`).
    ///
    /// Swift compares strings by canonical equivalence, so `café` spelt with one code point and
    /// with a combining accent are one key to the bake's plan, while a table tells entries apart
    /// by their bytes: two such files were both baked, each seen as the other's entry, and every
    /// bake decoded them again. Such names sort next to each other; the one kept is the one in
    /// NFC (the form most systems and keyboards produce), or else the first by bytes, so every
    /// scan keeps the same one.
    ///
    /// - Parameters:
    ///   - sources: files sorted by key.
    ///   - skipped: where the files left out are reported.
    static func dropAmbiguousNames(_ sources: inout [SourceFile], into skipped: inout [ImageTableError]) {
        // Almost every scan has none: one pass to find out, and no copy.
        guard sources.indices.dropLast().contains(where: { sources[$0].key == sources[$0 + 1].key }) else { return }
        var kept: [SourceFile] = []
        kept.reserveCapacity(sources.count)
        var start = 0
        while start < sources.count {
            var end = start + 1
            while end < sources.count && sources[end].key == sources[start].key { end += 1 }
            let run = sources[start..<end]
            let winner = run.first { KeyNormalization.isNFC($0.key) }
                ?? run.min { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }!
            kept.append(winner)
            for file in run where !file.key.utf8.elementsEqual(winner.key.utf8) {
                skipped.append(ImageTableError(.ambiguousName, "another source has this name in another Unicode normalization "
                                               + "(\(Self.codePoints(file.key)) here, \(Self.codePoints(winner.key)) in \(winner.path)): "
                                               + "two keys that look the same, and that the bake takes for one, so only that one is "
                                               + "baked; rename one of them", path: file.path, key: file.key))
            }
            start = end
        }
        sources = kept
    }

    /// The code points of `name` outside ASCII, as `U+00E9`: what tells apart two names that
    /// look the same.
    private static func codePoints(_ name: String) -> String {
        let marks = name.unicodeScalars.filter { !$0.isASCII }.map { scalar in
            let hex = String(scalar.value, radix: 16, uppercase: true)
            return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
        return marks.isEmpty ? "ASCII" : marks.joined(separator: " ")
    }
}
