import CLibYAML

/// The mutable state of one composition: open collections, anchors and budgets.
struct ComposerState {
    /// A collection whose end event has not arrived yet.
    private struct Frame {
        let isMapping: Bool
        /// Written in brackets (`[…]`, `{…}`) rather than by indentation.
        let isFlow: Bool
        let location: SourceLocation
        let anchor: String?
        var badTag = false
        var items: [YAMLNode] = []
        var pairs: [YAMLPair] = []
        /// The key waiting for its value, or `nil` when the next node is a key.
        var key: YAMLNode?
        /// The pending pair is dropped (duplicate or complex key); its value is still composed.
        var dropPair = false
        var seenKeys: [ScalarValue.KeyIdentity: (text: String, location: SourceLocation)] = [:]
    }

    var result = YAMLComposer.Result()
    var root: YAMLNode?
    private(set) var stopped = false
    private let lax: LaxYAML
    /// The text by lines: libyaml marks the end of a text without a final line break on a line
    /// after it, and every position reported must lie inside the file.
    private let lines: SourceLines
    private var stack: [Frame] = []
    /// The flow collections among `stack`, kept so that checks need not walk it.
    private var flowDepth = 0
    private var anchors: [String: YAMLNode] = [:]
    /// Anchors of collections still open: an alias to one of them would be recursive.
    private var openAnchors: [String: Int] = [:]
    /// Documents started so far. Those after the first are composed for their YAML problems
    /// only: their nodes are dropped and their other problems not reported.
    private(set) var documents = 0
    /// Nodes so far, every alias counted as its target's whole subtree.
    private var expanded = 0

    /// Starts a composition of `lines`, the text the events come from.
    init(lines: SourceLines) {
        self.lines = lines
        lax = LaxYAML(lines: lines)
    }

    /// Records a problem that ends composition.
    mutating func fail(_ code: DiagnosticCode, _ message: String, at location: SourceLocation) {
        // A syntax error placed on a construct already reported as lax YAML says more about it.
        result.problems.removeAll { $0.code == .laxYAML && $0.location == location && code == .yamlSyntax }
        result.problems.append(.init(code: code, message: message, location: location))
        stopped = true
    }

    private mutating func report(_ code: DiagnosticCode, _ message: String, at location: SourceLocation) {
        guard documents <= 1 || code == .laxYAML else { return }
        result.problems.append(.init(code: code, message: message, location: location))
    }

    private mutating func report(_ problem: YAMLComposer.Problem?) {
        if let problem { report(problem.code, problem.message, at: problem.location) }
    }

    /// Applies one libyaml event.
    mutating func handle(_ event: yaml_event_t) {
        var at = SourceLocation(event.start_mark)
        if at.line > lines.count { at = lines.clamped(at) }
        switch event.type {
        case YAML_DOCUMENT_START_EVENT:
            documents += 1
            anchors = [:]
            if event.data.document_start.version_directive != nil {
                lax.directiveComments(before: SourceLocation(event.end_mark).line).forEach { report($0) }
            }
            if documents == 2 {
                result.problems.append(.init(code: .multipleDocuments, message: "a second YAML document starts here; a manifest is "
                                             + "exactly one document (the first is checked, the rest only for YAML syntax)", location: at))
            }
        case YAML_STREAM_END_EVENT:
            stopped = true
        case YAML_SCALAR_EVENT:
            report(lax.check(scalar: event, in: nesting))
            scalar(event, at: at)
        case YAML_ALIAS_EVENT:
            alias(String(cString: event.data.alias.anchor), at: at)
        case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
            let isMapping = event.type == YAML_MAPPING_START_EVENT
            let anchor = isMapping ? event.data.mapping_start.anchor : event.data.sequence_start.anchor
            let tag = isMapping ? event.data.mapping_start.tag : event.data.sequence_start.tag
            let isFlow = isMapping ? event.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE
                : event.data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE
            open(isMapping: isMapping, isFlow: isFlow, anchor: anchor.map { String(cString: $0) }, tag: tag.map { String(cString: $0) }, at: at)
        case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
            if flowDepth > 0, let top = stack.indices.last, stack[top].isFlow {
                lax.check(flowEnd: event, from: stack[top].location, in: nesting).forEach { report($0) }
            }
            close()
        default:
            break
        }
    }

    private mutating func count(_ nodes: Int, at location: SourceLocation, alias: String? = nil) -> Bool {
        expanded += nodes
        guard expanded > ManifestLimits.maxNodes else { return true }
        if let alias {
            fail(.aliasExpansion, "alias *\(alias) would expand the document past \(ManifestLimits.maxNodes) nodes; "
                 + "manifests need far fewer (is this a \"billion laughs\" document?)", at: location)
        } else {
            fail(.tooManyNodes, "the manifest has more than \(ManifestLimits.maxNodes) nodes", at: location)
        }
        return false
    }

    private mutating func scalar(_ event: yaml_event_t, at location: SourceLocation) {
        let data = event.data.scalar
        guard count(1, at: location) else { return }
        let anchor = data.anchor.map { String(cString: $0) }
        let node: YAMLNode
        if data.length > ManifestLimits.maxScalarBytes {
            report(.scalarTooLarge, "this value is \(data.length) bytes long; the limit is \(ManifestLimits.maxScalarBytes)", at: location)
            node = YAMLNode(.invalid, at: location)
        } else {
            let text = String(decoding: UnsafeBufferPointer(start: data.value, count: data.length), as: UTF8.self)
            let style: YAMLScalar.Style = switch data.style {
            case YAML_PLAIN_SCALAR_STYLE: .plain
            case YAML_LITERAL_SCALAR_STYLE, YAML_FOLDED_SCALAR_STYLE: .block
            default: .quoted
            }
            switch Self.shortTag(data.tag.map { String(cString: $0) }, allowed: Self.scalarTags) {
            case .success(let tag):
                let scalar = YAMLScalar(text: text, style: style, tag: tag)
                // `!!int 16BitBGR`: the value is not what its tag says (it was taken as the string).
                // (`!!null` makes any text null, so it never disagrees.)
                if let tag, let kind = ["int": "an integer", "float": "a number", "bool": "true or false"][tag],
                   case .string = scalar.resolved {
                    // `!!int 0x10` is sixteen in YAML 1.2, and manifests take decimal numbers only.
                    if let decimal = ScalarValue.decimalSpelling(ofNonDecimal: text) {
                        report(.unsupportedTag, "'\(text)' under tag !!\(tag): manifests take decimal numbers only; write \(decimal)", at: location)
                    } else {
                        report(.unsupportedTag, "tag !!\(tag) says this value is \(kind), and '\(text)' is not; remove the tag", at: location)
                    }
                    node = YAMLNode(.invalid, at: location)
                } else {
                    node = YAMLNode(.scalar(scalar), at: location)
                }
            case .failure(let error):
                report(.unsupportedTag, error.message, at: location)
                node = YAMLNode(.invalid, at: location)
            }
        }
        if let anchor { anchors[anchor] = node }
        attach(node)
    }

    private mutating func alias(_ name: String, at location: SourceLocation) {
        if openAnchors[name, default: 0] > 0 {
            report(.recursiveAlias, "alias *\(name) refers to a collection that contains it", at: location)
            return attach(YAMLNode(.invalid, at: location))
        }
        guard let target = anchors[name] else {
            // An anchor's misspelt name, else what `include: *jpg` (a pattern to the writer, an
            // alias to YAML) needs, or an anchor defined too late.
            let advice = Suggestion.nearest(to: name, in: Array(anchors.keys).sorted()).map { "did you mean *\($0)?" }
                ?? "if it is a pattern, quote it: '*\(name)'; else define &\(name) on a value above this line"
            report(.undefinedAlias, "alias *\(name) refers to no anchor &\(name) defined before it; " + advice, at: location)
            return attach(YAMLNode(.invalid, at: location))
        }
        guard stack.count + target.height <= ManifestLimits.maxDepth else {
            return fail(.tooDeep, "alias *\(name) would nest collections deeper than \(ManifestLimits.maxDepth) levels", at: location)
        }
        guard count(target.weight, at: location, alias: name) else { return }
        attach(YAMLNode(aliasOf: target, at: location))
    }

    private mutating func open(isMapping: Bool, isFlow: Bool, anchor: String?, tag: String?, at location: SourceLocation) {
        guard stack.count < ManifestLimits.maxDepth else {
            return fail(.tooDeep, "collections nest deeper than \(ManifestLimits.maxDepth) levels; manifests need 6", at: location)
        }
        guard count(1, at: location) else { return }
        var frame = Frame(isMapping: isMapping, isFlow: isFlow, location: location, anchor: anchor)
        if case .failure(let error) = Self.shortTag(tag, allowed: isMapping ? ["map"] : ["seq"]) {
            report(.unsupportedTag, error.message, at: location)
            frame.badTag = true
        }
        if let anchor { openAnchors[anchor, default: 0] += 1 }
        if isFlow { flowDepth += 1 }
        stack.append(frame)
    }

    private mutating func close() {
        guard let frame = stack.popLast() else { return }
        if frame.isFlow { flowDepth -= 1 }
        let node: YAMLNode
        if frame.badTag {
            node = YAMLNode(.invalid, at: frame.location)
        } else {
            node = YAMLNode(frame.isMapping ? .mapping(frame.pairs) : .sequence(frame.items), at: frame.location)
        }
        if let anchor = frame.anchor {
            openAnchors[anchor, default: 1] -= 1
            anchors[anchor] = node
        }
        attach(node)
    }

    private mutating func attach(_ node: YAMLNode) {
        guard !stack.isEmpty else {
            if documents <= 1 { root = node }
            return
        }
        let top = stack.count - 1
        guard stack[top].isMapping else {
            stack[top].items.append(node)
            return
        }
        guard let key = stack[top].key else {
            stack[top].key = node
            stack[top].dropPair = isDroppedKey(node, top: top)
            return
        }
        if !stack[top].dropPair { stack[top].pairs.append(YAMLPair(key: key, value: node)) }
        stack[top].key = nil
    }

    /// Whether `key` must be dropped: it is complex, a duplicate, or already reported.
    private mutating func isDroppedKey(_ key: YAMLNode, top: Int) -> Bool {
        switch key.kind {
        case .invalid:
            return true
        case .mapping, .sequence:
            report(.complexKey, "a key must be a plain value, not \(key.typeDescription)", at: key.location)
            return true
        case .scalar(let s):
            // Keys are equal when their values are: `1` and `01` are the same integer, `1` and
            // `"1"` are not the same value.
            let identity = s.keyIdentity
            if let first = stack[top].seenKeys[identity] {
                let same = first.text == s.text ? "" : " as '\(first.text)', the same value"
                report(.duplicateKey, "duplicate key '\(s.text)'; it is already defined at line \(first.location.line), column \(first.location.column)\(same)",
                       at: key.location)
                return true
            }
            stack[top].seenKeys[identity] = (s.text, key.location)
            return false
        }
    }

    private static let scalarTags: Set<String> = ["str", "int", "float", "bool", "null"]

    /// The short name of a standard tag (`tag:yaml.org,2002:str` → `str`), `!` for the
    /// non-specific tag on a scalar (which makes it a string), `nil` for none.
    private static func shortTag(_ tag: String?, allowed: Set<String>) -> Result<String?, TagError> {
        guard let tag else { return .success(nil) }
        if tag == "!" { return .success(allowed.contains("str") ? "!" : nil) }
        let prefix = "tag:yaml.org,2002:"
        if tag.hasPrefix(prefix), allowed.contains(String(tag.dropFirst(prefix.count))) {
            return .success(String(tag.dropFirst(prefix.count)))
        }
        let shown = tag.hasPrefix(prefix) ? "!!" + tag.dropFirst(prefix.count) : tag
        // A standard tag on the wrong kind of node (`!!map` on a scalar) is supported, just not there.
        let misplaced = ["map": "a mapping", "seq": "a list", "str": "a scalar", "int": "a scalar", "float": "a scalar",
                         "bool": "a scalar", "null": "a scalar"][String(tag.dropFirst(prefix.count))]
        if tag.hasPrefix(prefix), let misplaced {
            return .failure(TagError(message: "tag \(shown) belongs on \(misplaced), not on this value; remove it"))
        }
        return .failure(TagError(message: "tag \(shown) is not supported here; manifests use plain YAML values"))
    }

    struct TagError: Error {
        let message: String
    }

    // MARK: YAML 1.2 forms libyaml lets through

    /// Where the next event sits, as the lax checks need it.
    private var nesting: LaxYAML.Nesting {
        let block = stack.indices.last { !stack[$0].isFlow }
        // A flow value's lines need one more space than the innermost block collection's
        // indentation (its first key or `-`), none at the top level.
        return LaxYAML.Nesting(flowDepth: flowDepth, innermostIsFlow: flowDepth > 0 && stack[stack.count - 1].isFlow,
                               required: block.map { stack[$0].location.column } ?? 0)
    }
}
