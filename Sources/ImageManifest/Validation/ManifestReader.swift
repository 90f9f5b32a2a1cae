import ImageTableCore

/// Walks a composed document into a ``Manifest``: the root, families, paths and globs here,
/// formats in ``FormatReader``, table sizes in ``TablePlanner``.
///
/// Each part reports its own problems and carries on with the next, so one run lists them all.
struct ManifestReader {
    let context: ValidationContext

    static let rootKeys = ["version", "output", "families"]
    static let familyKeys = ["sources", "include", "exclude", "failOn", "formats"]
    /// The keys every family must have.
    static let familyRequired = ["sources", "formats"]

    /// `'a'`, `'a' and 'b'`, `'a', 'b' and 'c'`: names quoted and listed for a message.
    static func listed(_ names: [String]) -> String {
        let quoted = names.map { "'\($0)'" }
        return quoted.count < 2 ? quoted.joined() : quoted.dropLast().joined(separator: ", ") + " and " + quoted.last!
    }

    /// The manifest, or `nil` when an error was reported (other than the disk budget's, which
    /// the validator judges).
    ///
    /// - Parameters:
    ///   - root: the first document's root.
    ///   - isOnlyDocument: whether no other document follows, for the message about an empty one.
    func read(_ root: YAMLNode, isOnlyDocument: Bool = true) -> Manifest? {
        if root.isEmptyScalar {
            context.report(.emptyFile, "the manifest's \(isOnlyDocument ? "only" : "first") document is empty; it needs 'version', "
                           + "'output' and 'families'", at: .start, keyPath: "")
            return nil
        }
        if case .scalar = root.kind, !root.isInvalid {
            context.report(.wrongType, "the manifest must be a mapping with 'version', 'output' and 'families', not \(root.typeDescription)",
                           at: root.location, keyPath: "")
            return nil
        }
        guard let fields = Fields(root, path: "", what: "the manifest", known: Self.rootKeys, required: Self.rootKeys,
                                  owner: root.location, context: context) else { return nil }
        let version = fields["version"].flatMap(readVersion)
        let output = fields["output"].flatMap { readPath($0, path: "output", isSources: false) }
        var families: [Manifest.Family] = []
        var formats = FormatRegistry()
        var sized = false
        var sources: [FamilySources] = []
        if let pair = fields["families"] {
            families = readFamilies(pair, names: &formats, sources: &sources)
            // Sized even when other parts have errors, so that one run reports everything.
            sized = TablePlanner(context: context).check(formats.valid, at: pair)
        }
        if let output { checkOutputIsNotSources(output, sources) }
        // The disk budget does not stop a manifest's plan from being shown, nor its sources from
        // being counted (their warnings vanished when the only error was the budget).
        var blocking: Bool { context.diagnostics.contains { $0.severity == .error && $0.code != .diskBudgetExceeded } }
        if context.options.countsSources, !blocking { checkSourceCounts(families, formats.valid, output: output) }
        guard let version, let output, sized, !blocking else { return nil }
        return Manifest(file: context.file, directory: context.directory, version: version, output: output.written,
                        outputPath: output.resolved, families: families)
    }

    private func readVersion(_ pair: YAMLPair) -> Int? {
        guard let value = context.integer(pair, path: "version") else { return nil }
        guard value == 1 else {
            context.report(.unsupportedVersion, "manifest version \(pair.value.scalar?.text ?? "?") is not supported; this imagetable reads version 1",
                           at: pair.value.location, keyPath: "version")
            return nil
        }
        return 1
    }

    /// A family's `sources` as read, whether or not the rest of the family is valid: the output
    /// check reports one that is the output directory in the same run as the family's other errors.
    private struct FamilySources {
        let family: String
        let path: CheckedPath
        let location: SourceLocation
    }

    private func readFamilies(_ pair: YAMLPair, names: inout FormatRegistry, sources: inout [FamilySources]) -> [Manifest.Family] {
        guard case .mapping(let pairs) = pair.value.kind else {
            context.reportWrongType(pair, expected: "a mapping of family names to families", path: "families")
            return []
        }
        if pairs.isEmpty {
            context.report(.emptyCollection, "'families' is empty; a manifest needs at least one family",
                           at: pair.value.location, keyPath: "families")
        }
        return pairs.compactMap { isMergeKey($0, kind: "family", path: "families") ? nil : readFamily($0, names: &names, sources: &sources) }
    }

    /// Whether `pair` is shared settings kept under an `x-` name among families or formats, as
    /// the top level allows (`x-defaults: &d {size: …}`): an `x-` name that lacks a key every
    /// family or format needs, or is not a mapping. Reported once, as such, where each missing
    /// and unknown key was. (An `x-` name with them all is a family or format like any other.)
    func isMisplacedExtension(_ pair: YAMLPair, kind: String, required: [String], path: String) -> Bool {
        guard pair.name.hasPrefix("x-"), !pair.value.isInvalid else { return false }
        if case .mapping(let pairs) = pair.value.kind, required.allSatisfy({ key in pairs.contains { $0.name == key } }) { return false }
        context.report(.invalidName, "'\(pair.name)' names a \(kind), but is not one (a \(kind) needs "
                       + "\(Self.listed(required))): 'x-' keys are ignored only at the top level and "
                       + "inside a family or a format; move it to the top level", at: pair.key.location, keyPath: path)
        return true
    }

    private func readFamily(_ pair: YAMLPair, names: inout FormatRegistry, sources read: inout [FamilySources]) -> Manifest.Family? {
        let name = pair.name
        let path = "families".appendingKey(name)
        if isMisplacedExtension(pair, kind: "family", required: Self.familyRequired, path: path) { return nil }
        let nameIsValid = checkName(name, kind: "family", at: pair.key.location, path: path)
        guard let fields = Fields(pair.value, path: path, what: "family '\(name)'", known: Self.familyKeys,
                                  required: Self.familyRequired, owner: pair.key.location, context: context) else { return nil }
        let sources = fields["sources"].flatMap { readPath($0, path: path.appendingKey("sources"), isSources: true) }
        if let sources { read.append(FamilySources(family: name, path: sources, location: fields["sources"]!.value.location)) }
        let include = fields["include"].map { readGlobs($0, path: path.appendingKey("include"), mayBeEmpty: false) }
            ?? [GlobPattern.images]
        let exclude = fields["exclude"].map { readGlobs($0, path: path.appendingKey("exclude"), mayBeEmpty: true) } ?? []
        let failOn = fields["failOn"].map {
            context.choice($0, path: path.appendingKey("failOn"), code: .unknownFailLevel, what: "failOn level",
                           allowed: FailLevel.allCases.map(\.rawValue), parse: FailLevel.init(rawValue:))
        } ?? FailLevel.error
        var formats: [ReadFormat] = []
        if let formatsPair = fields["formats"] {
            // A family or formats written as an alias repeats the anchor's format names: the
            // repeat is where the alias is.
            let through = pair.value.aliasLocation ?? fields.mergedThrough["formats"] ?? formatsPair.value.aliasLocation
            formats = readFormats(formatsPair, family: name, path: path.appendingKey("formats"), through: through, names: &names)
        }
        guard nameIsValid, let sources, let include, let exclude, let failOn else { return nil }
        return Manifest.Family(name: name, sources: sources.written, sourcesPath: sources.resolved,
                               sourcesLocation: fields["sources"]!.value.location, include: include,
                               exclude: exclude, failOn: failOn, formats: formats.flatMap(\.tables), location: pair.key.location,
                               cappedFormats: Set(formats.filter(\.capped).map(\.name)))
    }

    private func readFormats(_ pair: YAMLPair, family: String, path: String, through alias: SourceLocation?,
                             names: inout FormatRegistry) -> [ReadFormat] {
        guard case .mapping(let pairs) = pair.value.kind else {
            context.reportWrongType(pair, expected: "a mapping of format names to formats", path: path)
            return []
        }
        if pairs.isEmpty {
            context.report(.emptyCollection, "family '\(family)' has no formats", at: pair.value.location, keyPath: path)
        }
        let skipped = reportKeysNotIndented(pairs, path: path)
        return pairs.enumerated().compactMap { index, format in
            if skipped.contains(index) || isMergeKey(format, kind: "format", path: path) { return nil }
            let formatPath = path.appendingKey(format.name)
            if isMisplacedExtension(format, kind: "format", required: FormatReader.required, path: formatPath) { return nil }
            let nameIsValid = checkName(format.name, kind: "format", at: format.key.location, path: formatPath)
                && names.claim(format.name, family: family, at: format.key.location, through: alias, path: formatPath, context: context)
            guard let read = FormatReader(context: context).read(format, family: family, path: formatPath), nameIsValid else {
                return nil
            }
            names.valid.append(read)
            return read
        }
    }

    /// Finds a format with no value followed by format keys at its own indentation (`small:`,
    /// then `size: 50x50` under it but not indented): one error at the format, where each key
    /// was reported as a format that is not a mapping. Returns the positions of those pairs.
    private func reportKeysNotIndented(_ pairs: [YAMLPair], path: String) -> Set<Int> {
        func isKeyValue(_ node: YAMLNode) -> Bool {
            if case .sequence = node.kind { return true }
            return node.scalar != nil
        }
        var skipped = Set<Int>()
        var index = 0
        while index < pairs.count {
            let format = pairs[index]
            var next = index + 1
            while next < pairs.count, FormatReader.keys.contains(pairs[next].name), isKeyValue(pairs[next].value) {
                next += 1
            }
            if format.value.isEmptyScalar && next > index + 1 {
                let names = pairs[(index + 1)..<next].map(\.name)
                context.report(.wrongType, "format '\(format.name)' has no keys: \(Self.listed(names)) below it \(names.count == 1 ? "is" : "are") "
                               + "not indented past it, so \(names.count == 1 ? "it reads" : "they read") as format names; "
                               + "indent \(names.count == 1 ? "it" : "them") under '\(format.name)'",
                               at: format.key.location, keyPath: path.appendingKey(format.name))
                skipped.formUnion(index..<next)
            }
            index = max(next, index + 1)
        }
        return skipped
    }

    /// Reports a family whose `sources` is the `output` directory, at its `sources` value. (An
    /// output directory inside the sources is fine: the baker does not scan it.)
    private func checkOutputIsNotSources(_ output: CheckedPath, _ sources: [FamilySources]) {
        for family in sources where family.path.resolved == output.resolved {
            let path = "families".appendingKey(family.family).appendingKey("sources")
            context.report(.outputIsSources, "'sources' of family '\(family.family)' is the 'output' directory (\(output.resolved)): the "
                           + "tables and the bake state would lie among the source images; give the tables a directory of their own, "
                           + "such as 'tables'", at: family.location, keyPath: path)
        }
    }

    /// Warns where a family has no sources, where it has more than a format's tables hold (at
    /// the format's name), and where images it selects lie in the output directory, which a
    /// bake never scans.
    private func checkSourceCounts(_ families: [Manifest.Family], _ formats: [ReadFormat], output: CheckedPath?) {
        for family in families {
            let selects = family.selects
            guard let scan = try? SourceScanner(root: family.sourcesPath, allowOutside: context.options.allowOutsidePaths,
                                                excluding: output?.resolved, selects: selects).scanAll() else { continue }
            let sources = scan.sources
            let sourcesPath = "families".appendingKey(family.name).appendingKey("sources")
            if sources.isEmpty {
                context.report(.noSources, family.noSourcesMessage, at: family.sourcesLocation, keyPath: sourcesPath)
            }
            if let output, scan.inExcluded.count > 0 {
                let shown = Manifest.displayOutput(output.written, manifest: context.file)
                context.report(.outputHoldsSources, family.outputHoldsSourcesMessage(output: shown, found: scan.inExcluded),
                               at: family.sourcesLocation, keyPath: sourcesPath)
            }
            for format in formats where format.family == family.name && !format.capped {
                guard let capacity = format.tables.first?.capacity, sources.count > capacity else { continue }
                let out = sources.count - capacity
                context.report(.moreSourcesThanSlots, "family '\(family.name)' has \(sources.count) sources but format '\(format.name)' "
                               + "holds \(capacity) (maximumCount); a bake leaves the \(out) least recently modified out of its tables "
                               + "(fewer if some files are not images or fail to decode, which validate does not check)",
                               at: format.location, keyPath: "families".appendingKey(family.name).appendingKey("formats").appendingKey(format.name))
            }
        }
    }

    /// Merge keys are supported where keys are fixed, not among names: there a `<<` would be
    /// taken for a family or format called `<<`, so it is reported once and skipped.
    private func isMergeKey(_ pair: YAMLPair, kind: String, path: String) -> Bool {
        guard pair.name == "<<", pair.key.scalar?.style == .plain else { return false }
        context.report(.invalidName, "merge keys ('<<') work inside a family or a format, not among \(kind) names",
                       at: pair.key.location, keyPath: path.appendingKey("<<"))
        return true
    }

    /// Names become file names and header fields: ASCII letters, digits, `-` and `_`, starting
    /// with a letter or digit, at most 63 bytes.
    private func checkName(_ name: String, kind: String, at location: SourceLocation, path: String) -> Bool {
        let bytes = Array(name.utf8)
        let allowed = { (b: UInt8) in (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) }
        guard !bytes.isEmpty, bytes.count <= ManifestLimits.maxNameBytes, allowed(bytes[0]),
              bytes.allSatisfy({ allowed($0) || $0 == 0x2D || $0 == 0x5F }) else {
            context.report(.invalidName, "\(kind) name '\(name)' is not allowed; use 1–\(ManifestLimits.maxNameBytes) ASCII letters, digits, '-' and '_', starting with a letter or digit",
                           at: location, keyPath: path)
            return false
        }
        return true
    }

    private func readGlobs(_ pair: YAMLPair, path: String, mayBeEmpty: Bool) -> [GlobPattern]? {
        guard let items = context.stringList(pair, path: path) else { return nil }
        if items.isEmpty && !mayBeEmpty {
            context.report(.emptyCollection, "'\(pair.name)' is empty, so nothing would be baked; leave it out to take every file",
                           at: pair.value.location, keyPath: path)
            return nil
        }
        var patterns: [GlobPattern] = []
        for item in items {
            do {
                patterns.append(try GlobPattern(item.text))
            } catch {
                context.report(.invalidGlob, "invalid pattern '\(item.text)': \(error.message)", at: item.node.location, keyPath: item.path)
            }
        }
        return patterns.count == items.count ? patterns : nil
    }
}

/// The formats read so far. Each format's name names its table files, so each may be used once
/// in the manifest, ignoring case (macOS file systems usually do).
struct FormatRegistry {
    /// Every valid format, in manifest order, whether or not its family is valid.
    var valid: [ReadFormat] = []
    private var seen: [String: (family: String, location: SourceLocation)] = [:]

    /// Records format `name` of `family`, written at `location`, or reports it as a repeat.
    ///
    /// - Parameter alias: where the alias is written when the name comes through one (its
    ///   `location` is then the anchor's); the repeat is reported there.
    mutating func claim(_ name: String, family: String, at location: SourceLocation, through alias: SourceLocation? = nil, path: String,
                        context: ValidationContext) -> Bool {
        if let first = seen[name.lowercased()] {
            let repeated = alias == nil ? "is already used" : "comes again through this alias (family '\(family)'); it is already used"
            context.report(.duplicateFormat, "format name '\(name)' \(repeated) at line \(first.location.line), column \(first.location.column) (family '\(first.family)'); format names name table files, so they must be unique in the manifest, ignoring case",
                           at: alias ?? location, keyPath: path)
            return false
        }
        seen[name.lowercased()] = (family, location)
        return true
    }
}
