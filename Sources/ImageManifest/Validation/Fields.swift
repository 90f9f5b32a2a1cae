/// The keys of a mapping with a fixed set of keys (the root, a family, a format), after merge
/// keys are applied and `x-` extension keys are set aside.
struct Fields {
    /// The owning mapping's key path.
    let path: String
    /// Known keys present, by name.
    private(set) var pairs: [String: YAMLPair] = [:]
    /// For keys that came from a merge, where the merged mapping is named: the alias after
    /// `<<` (or the mapping itself), so that what repeats through it can be reported there.
    private(set) var mergedThrough: [String: SourceLocation] = [:]

    subscript(_ key: String) -> YAMLPair? { pairs[key] }

    /// Reads a mapping, reporting unknown and missing keys.
    ///
    /// Merge keys (`<<: *defaults`, or a list of aliases) follow YAML 1.1: keys written in the
    /// mapping win over merged ones, and earlier merged mappings over later ones. Keys starting
    /// with `x-` are ignored, so that a manifest can keep anchors in them, as Docker Compose does.
    ///
    /// - Parameters:
    ///   - node: the mapping.
    ///   - path: its key path.
    ///   - what: how messages name it, such as `format 'small'`.
    ///   - known: the keys it may have.
    ///   - required: the keys it must have.
    ///   - owner: where missing keys are reported: the key that names the mapping.
    ///   - context: where problems go.
    /// - Returns: the fields, or `nil` when `node` is not a mapping.
    init?(_ node: YAMLNode, path: String, what: String, known: [String], required: [String],
          owner: SourceLocation, context: ValidationContext) {
        self.path = path
        guard case .mapping(let explicit) = node.kind else {
            if !node.isInvalid {
                context.report(.wrongType, "\(what) must be a mapping of keys, not \(node.typeDescription)",
                               at: node.location, keyPath: path)
            }
            return nil
        }
        var merged: [(pair: YAMLPair, through: SourceLocation)] = []
        // A misspelt required key is reported once, as unknown with a suggestion, not also as missing.
        var suggested: Set<String> = []
        // A misspelt key's value is read as the key suggested: `formts:` hid every error in the
        // formats below it until it was fixed, a second round trip for each misspelt section.
        var adopted: [String: YAMLPair] = [:]
        // Keys written here are not suggested for another (`limit: 5` beside `maximumCount: 5`).
        let written = Set(explicit.map(\.name))
        let unwritten = known.filter { !written.contains($0) }
        // A merge of an undefined alias (already reported) may have held the required keys.
        var mergeUnknown = false
        for pair in explicit {
            if Self.isMergeKey(pair.key) {
                merged += Self.mergedPairs(pair.value, path: path, context: context)
                if case .sequence(let items) = pair.value.kind { mergeUnknown = mergeUnknown || items.contains(where: \.isInvalid) }
                mergeUnknown = mergeUnknown || pair.value.isInvalid
                continue
            }
            guard !pair.name.hasPrefix("x-") else { continue }
            guard known.contains(pair.name) else {
                if context.isFull { continue }
                let suggestion = Suggestion.nearest(to: pair.name, in: unwritten)
                if let suggestion {
                    suggested.insert(suggestion)
                    if adopted[suggestion] == nil { adopted[suggestion] = pair }
                }
                let hint = suggestion.map { "; did you mean '\($0)'?" } ?? "; known keys: \(known.joined(separator: ", "))"
                context.report(.unknownKey, "unknown key '\(pair.name)' in \(what)\(hint)",
                               at: pair.key.location, keyPath: path.appendingKey(pair.name))
                continue
            }
            pairs[pair.name] = pair
        }
        for (name, pair) in adopted where pairs[name] == nil { pairs[name] = pair }
        for (pair, through) in merged where pairs[pair.name] == nil && known.contains(pair.name) {
            pairs[pair.name] = pair
            mergedThrough[pair.name] = through
        }
        for (pair, _) in merged where !known.contains(pair.name) && !pair.name.hasPrefix("x-") {
            // As for a key written here: the key suggested is not then also reported missing.
            let suggestion = Suggestion.nearest(to: pair.name, in: known.filter { pairs[$0] == nil })
            if let suggestion { suggested.insert(suggestion) }
            context.report(.unknownKey, "unknown key '\(pair.name)' merged into \(what)\(suggestion.map { "; did you mean '\($0)'?" } ?? "")",
                           at: pair.key.location, keyPath: path.appendingKey(pair.name))
        }
        for key in required where pairs[key] == nil && !suggested.contains(key) && !mergeUnknown {
            context.report(.missingKey, "\(what) is missing the required key '\(key)'", at: owner, keyPath: path.appendingKey(key))
        }
    }

    private static func isMergeKey(_ key: YAMLNode) -> Bool {
        guard let s = key.scalar else { return false }
        return s.text == "<<" && s.style == .plain && s.tag == nil
    }

    /// The pairs a merge key brings in, first source first, nested merges applied.
    private static func mergedPairs(_ value: YAMLNode, path: String, context: ValidationContext)
        -> [(pair: YAMLPair, through: SourceLocation)] {
        let sources: [YAMLNode]
        switch value.kind {
        case .mapping: sources = [value]
        case .sequence(let items): sources = items
        case .invalid: return []
        case .scalar:
            context.report(.wrongType, "'<<' merges a mapping or a list of mappings (usually an alias like *defaults), not \(value.typeDescription)",
                           at: value.location, keyPath: path.appendingKey("<<"))
            return []
        }
        var result: [(pair: YAMLPair, through: SourceLocation)] = []
        for source in sources {
            let through = source.aliasLocation ?? source.location
            guard case .mapping(let pairs) = source.kind else {
                if !source.isInvalid {
                    context.report(.wrongType, "'<<' merges mappings, not \(source.typeDescription)",
                                   at: source.location, keyPath: path.appendingKey("<<"))
                }
                continue
            }
            // Depth is bounded by the composer's limit, so this recursion is too.
            let own = pairs.filter { !isMergeKey($0.key) }
            let nested = pairs.filter { isMergeKey($0.key) }.flatMap { mergedPairs($0.value, path: path, context: context) }
            let ownNames = Set(own.map(\.name))
            result += (own + nested.map(\.pair).filter { !ownNames.contains($0.name) }).map { ($0, through) }
        }
        return result
    }
}
