/// A node of a composed YAML document, with the position it was written at.
///
/// Our own tree rather than `Yams.Node`: it is built by ``YAMLComposer`` under budgets, keeps
/// how each scalar was written (quoted or plain, explicit tag) so that types resolve the way the
/// YAML 1.2 core schema says, and records each subtree's expanded size and height so that an
/// alias can be charged for everything it stands for without expanding it.
final class YAMLNode: Sendable {
    /// What the node is.
    enum Kind: Sendable {
        /// A scalar, unresolved.
        case scalar(YAMLScalar)
        /// A mapping's pairs in document order; duplicate and complex keys were dropped and reported.
        case mapping([YAMLPair])
        /// A sequence's items.
        case sequence([YAMLNode])
        /// A node the composer already reported (bad alias, oversized scalar, unknown tag);
        /// validation skips it rather than report it again.
        case invalid
    }

    let kind: Kind
    let location: SourceLocation
    /// Where the alias that stands for this node is written (`*name`), when it is one; its
    /// ``location`` is then the anchored node's.
    let aliasLocation: SourceLocation?
    /// Nodes in this subtree, aliases expanded, capped just past ``ManifestLimits/maxNodes``.
    let weight: Int
    /// Collections on the deepest path through this subtree; 0 for scalars.
    let height: Int

    /// An alias: the anchored node, shared, as used at `location`. Costs no copy; its weight is
    /// the target's, which the composer has already charged.
    init(aliasOf target: YAMLNode, at location: SourceLocation) {
        kind = target.kind
        self.location = target.location
        aliasLocation = location
        weight = target.weight
        height = target.height
    }

    init(_ kind: Kind, at location: SourceLocation) {
        self.kind = kind
        self.location = location
        aliasLocation = nil
        switch kind {
        case .scalar, .invalid:
            weight = 1
            height = 0
        case .mapping(let pairs):
            weight = pairs.reduce(1) { min($0 &+ $1.key.weight &+ $1.value.weight, ManifestLimits.maxNodes + 1) }
            height = 1 + pairs.reduce(0) { max($0, $1.value.height) }
        case .sequence(let items):
            weight = items.reduce(1) { min($0 &+ $1.weight, ManifestLimits.maxNodes + 1) }
            height = 1 + items.reduce(0) { max($0, $1.height) }
        }
    }

    /// The scalar, when this is one.
    var scalar: YAMLScalar? {
        if case .scalar(let s) = kind { return s }
        return nil
    }

    /// Whether the composer already reported this node.
    var isInvalid: Bool {
        if case .invalid = kind { return true }
        return false
    }

    /// The YAML type, as messages name it: "a string", "a mapping"…
    var typeDescription: String {
        switch kind {
        case .scalar(let s): s.resolved.typeDescription
        case .mapping: "a mapping"
        case .sequence: "a list"
        case .invalid: "an invalid value"
        }
    }
}

/// One key–value pair of a mapping. Keys are always scalars.
struct YAMLPair: Sendable {
    let key: YAMLNode
    let value: YAMLNode

    /// The key's text.
    var name: String { key.scalar?.text ?? "" }
}

/// A scalar as written: its text, whether it was quoted, and its explicit tag.
struct YAMLScalar: Sendable {
    /// How the scalar was written; only plain scalars are subject to type resolution.
    enum Style: Sendable { case plain, quoted, block }

    let text: String
    let style: Style
    /// The explicit tag's short name (`str`, `int`…), `!` for the non-specific tag (which
    /// makes the scalar a string), or `nil` when untagged.
    let tag: String?

    /// The value under the YAML 1.2 core schema (decimal integers only).
    var resolved: ScalarValue { ScalarValue.resolve(text, style: style, tag: tag) }
}
