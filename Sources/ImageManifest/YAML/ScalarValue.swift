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
    ///   - tag: an explicit standard tag's short name forces that type when the text allows it;
    ///     the non-specific tag `!` makes the scalar a string, as YAML 1.2 says.
    static func resolve(_ text: String, style: YAMLScalar.Style, tag: String?) -> ScalarValue {
        switch tag {
        case "str", "!": return .string(text)
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

extension ScalarValue {
    /// What makes two mapping keys the same key: their values, not their spelling. `1`, `01`
    /// and `!!int 1` are one key; `1` and `"1"` are two (an integer and a string).
    enum KeyIdentity: Hashable {
        case null, merge
        case bool(Bool)
        /// The canonical decimal digits, so that integers too large for 64 bits compare too.
        case int(String)
        /// The bit pattern, with every NaN one value and -0 equal to 0.
        case float(UInt64)
        case string(ExactText)
    }

    /// Text compared code point by code point, as YAML compares strings: `é` written as one
    /// code point and as `e` with a combining accent are two keys, where Swift's `==` (canonical
    /// equivalence) called the second a duplicate of the first.
    struct ExactText: Hashable {
        let text: String

        static func == (a: ExactText, b: ExactText) -> Bool { a.text.utf8.elementsEqual(b.text.utf8) }

        func hash(into hasher: inout Hasher) {
            hasher.combine(text.utf8.count)
            for byte in text.utf8 { hasher.combine(byte) }
        }
    }

    /// The decimal spelling of `text` when it is an integer written another way that YAML 1.2
    /// (`0x10`, `0o17`) or 1.1 (`0b101`, `1_000`) reads as one, which manifests take as a string;
    /// `nil` otherwise, or when it does not fit in 64 bits.
    static func decimalSpelling(ofNonDecimal text: String) -> String? {
        var body = Substring(text)
        let negative = body.first == "-"
        if body.first == "-" || body.first == "+" { body = body.dropFirst() }
        let radix: Int, digits: Substring
        switch body.prefix(2) {
        case "0x": (radix, digits) = (16, body.dropFirst(2))
        case "0o": (radix, digits) = (8, body.dropFirst(2))
        case "0b": (radix, digits) = (2, body.dropFirst(2))
        default:
            guard body.contains("_"), body.first != "_", body.allSatisfy({ $0 == "_" || $0.isASCII && $0.isNumber }) else { return nil }
            (radix, digits) = (10, Substring(body.filter { $0 != "_" }))
        }
        guard !digits.isEmpty, let value = Int(digits, radix: radix) else { return nil }
        return (negative ? "-" : "") + String(value)
    }
}

extension YAMLScalar {
    /// This scalar's identity as a mapping key.
    var keyIdentity: ScalarValue.KeyIdentity {
        if tag == nil {
            guard style == .plain else { return .string(ScalarValue.ExactText(text: text)) }
            if text == "<<" { return .merge }
            // Most keys are words; only these first bytes can begin a null, a boolean or a number.
            if let first = text.utf8.first, !Self.resolvableFirstBytes.contains(first) { return .string(ScalarValue.ExactText(text: text)) }
        }
        switch resolved {
        case .null: return .null
        case .bool(let value): return .bool(value)
        case .int(let value?): return .int(String(value))
        case .int(nil):
            var digits = Substring(text.filter { $0 != "+" })
            let negative = digits.first == "-"
            digits = digits.drop { $0 == "-" || $0 == "0" }
            return .int((negative ? "-" : "") + digits)
        case .float(let value): return .float(value.isNaN ? Double.nan.bitPattern : value == 0 ? 0 : value.bitPattern)
        case .string(let value): return .string(ScalarValue.ExactText(text: value))
        }
    }

    private static let resolvableFirstBytes = Set("0123456789+-.~nNtTfF".utf8)

    /// Why this scalar is a string though its text reads as another type, as the fix to make.
    var whyString: String {
        var reasons: [String] = []
        if tag == "str" { reasons.append("remove the '!!str' tag") }
        if tag == "!" { reasons.append("remove the '!' tag, which makes any value a string") }
        if style == .quoted { reasons.append("remove the quotes") }
        if style == .block { reasons.append("write it on the key's line, without '|' or '>'") }
        return reasons.isEmpty ? "write it without quotes or tags" : reasons.joined(separator: " and ")
    }
}
