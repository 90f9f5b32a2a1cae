/// A scalar's value under the YAML 1.2 core schema, restricted to decimal integers.
///
/// YAML 1.1's surprises are deliberately absent: `yes`, `no`, `on` and `off` are strings, not
/// booleans (the "Norway problem"), and `012` is twelve, not octal ten. Quoted and block scalars
/// are always strings, so `"250"` is not a number.
enum ScalarValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A decimal integer; `nil` when it does not fit in 64 bits.
    case int(Int?)
    case float(Double)
    case string(String)

    /// Resolves a scalar as written.
    ///
    /// - Parameters:
    ///   - text: the scalar's text.
    ///   - style: plain scalars are resolved; quoted and block ones are strings.
    ///   - tag: an explicit standard tag's short name forces that type when the text allows it.
    static func resolve(_ text: String, style: YAMLScalar.Style, tag: String?) -> ScalarValue {
        switch tag {
        case "str": return .string(text)
        case "null": return .null
        case "bool": return boolean(text).map { .bool($0) } ?? .string(text)
        case "int": return integer(text) ?? .string(text)
        case "float": return integer(text).flatMap(\.asDouble).map { .float($0) } ?? float(text) ?? .string(text)
        default: break
        }
        guard style == .plain else { return .string(text) }
        if ["", "~", "null", "Null", "NULL"].contains(text) { return .null }
        if let b = boolean(text) { return .bool(b) }
        return integer(text) ?? float(text) ?? .string(text)
    }

    private static func boolean(_ text: String) -> Bool? {
        switch text {
        case "true", "True", "TRUE": true
        case "false", "False", "FALSE": false
        default: nil
        }
    }

    private static func integer(_ text: String) -> ScalarValue? {
        var digits = Substring(text)
        if digits.first == "-" || digits.first == "+" { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return .int(Int(text.first == "+" ? String(text.dropFirst()) : text))
    }

    private static func float(_ text: String) -> ScalarValue? {
        switch text {
        case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF": return .float(.infinity)
        case "-.inf", "-.Inf", "-.INF": return .float(-.infinity)
        case ".nan", ".NaN", ".NAN": return .float(.nan)
        default: break
        }
        // Swift's parser also takes hex floats, "inf" and "nan"; YAML allows only these characters.
        guard text.utf8.allSatisfy({ (48...57).contains($0) || $0 == 46 || $0 == 101 || $0 == 69 || $0 == 43 || $0 == 45 }),
              text.utf8.contains(where: { (48...57).contains($0) }), let value = Double(text) else { return nil }
        return .float(value)
    }

    private var asDouble: Double? {
        if case .int(let i?) = self { return Double(i) }
        return nil
    }

    /// The type as messages name it.
    var typeDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int: "an integer"
        case .float: "a number"
        case .string: "a string"
        }
    }

    // Equatable by hand because NaN must equal itself for tests to compare resolutions.
    static func == (lhs: ScalarValue, rhs: ScalarValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case let (.bool(a), .bool(b)): a == b
        case let (.int(a), .int(b)): a == b
        case let (.float(a), .float(b)): a == b || (a.isNaN && b.isNaN)
        case let (.string(a), .string(b)): a == b
        default: false
        }
    }
}
