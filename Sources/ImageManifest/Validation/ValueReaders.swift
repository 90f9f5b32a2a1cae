/// Typed reads of scalar values; each reports a `wrong-type` diagnostic naming the key, the type
/// found and, where a likely cause is known, the fix (quotes added or removed).
extension ValidationContext {
    /// A string value.
    func string(_ pair: YAMLPair, path: String) -> String? {
        let value = pair.value
        guard case .scalar(let s) = value.kind else {
            return typeMismatch(pair, expected: "a string", path: path)
        }
        if case .string(let text) = s.resolved { return text }
        if case .null = s.resolved { return typeMismatch(pair, expected: "a string", path: path) }
        report(.wrongType, "'\(pair.name)' must be a string, not \(value.typeDescription); quote it: \"\(s.text)\"",
               at: value.location, keyPath: path)
        return nil
    }

    /// An integer value; `.some(nil)` when it does not fit in 64 bits, so range checks report it.
    func integer(_ pair: YAMLPair, path: String) -> Int?? {
        guard let s = pair.value.scalar else { return typeMismatch(pair, expected: "an integer", path: path) }
        switch s.resolved {
        case .int(let value): return .some(value)
        case .string(let text) where ScalarValue.resolve(text, style: .plain, tag: nil).isInteger:
            report(.wrongType, "'\(pair.name)' must be an integer, not a string; \(s.whyString)", at: pair.value.location, keyPath: path)
            return nil
        case .string(let text) where s.style == .plain && s.tag == nil && ScalarValue.decimalSpelling(ofNonDecimal: text) != nil:
            reportNonDecimal(pair, text, path: path)
            return nil
        default: return typeMismatch(pair, expected: "an integer", path: path)
        }
    }

    /// `0x10` where a number belongs: YAML 1.2 reads it as sixteen, manifests as a string, and
    /// the message says which spelling to use.
    private func reportNonDecimal(_ pair: YAMLPair, _ text: String, path: String, what: String = "integer") {
        let decimal = ScalarValue.decimalSpelling(ofNonDecimal: text) ?? ""
        report(.wrongType, "'\(pair.name)' must be a decimal \(what); manifests read '\(text)' as a string, since they accept "
               + "only decimal numbers: write \(decimal)", at: pair.value.location, keyPath: path)
    }

    /// A number, integer or not.
    func number(_ pair: YAMLPair, path: String) -> Double? {
        guard let s = pair.value.scalar else { return typeMismatch(pair, expected: "a number", path: path) }
        switch s.resolved {
        case .int(let value): return value.map(Double.init) ?? .infinity
        case .float(let value): return value
        case .string(let text) where s.style == .plain && s.tag == nil && ScalarValue.decimalSpelling(ofNonDecimal: text) != nil:
            reportNonDecimal(pair, text, path: path, what: "number")
            return nil
        case .string(let text) where ScalarValue.resolve(text, style: .plain, tag: nil).isNumber:
            report(.wrongType, "'\(pair.name)' must be a number, not a string; \(s.whyString)", at: pair.value.location, keyPath: path)
            return nil
        default: return typeMismatch(pair, expected: "a number", path: path)
        }
    }

    /// `true` or `false`.
    func boolean(_ pair: YAMLPair, path: String) -> Bool? {
        guard let s = pair.value.scalar else { return typeMismatch(pair, expected: "true or false", path: path) }
        if case .bool(let value) = s.resolved { return value }
        if case .string(let text) = s.resolved, case .bool = ScalarValue.resolve(text, style: .plain, tag: nil) {
            report(.wrongType, "'\(pair.name)' must be true or false, not a string; \(s.whyString)", at: pair.value.location, keyPath: path)
            return nil
        }
        if ["yes", "no", "on", "off", "y", "n"].contains(s.text.lowercased()) && s.style == .plain {
            report(.wrongType, "'\(pair.name)' must be true or false; YAML 1.2 reads '\(s.text)' as a string",
                   at: pair.value.location, keyPath: path)
            return nil
        }
        return typeMismatch(pair, expected: "true or false", path: path)
    }

    /// A string or a list of strings, each with its node and key path.
    func stringList(_ pair: YAMLPair, path: String) -> [(text: String, node: YAMLNode, path: String)]? {
        if case .sequence(let items) = pair.value.kind {
            var result: [(String, YAMLNode, String)] = []
            for (i, item) in items.enumerated() {
                if let text = string(YAMLPair(key: pair.key, value: item), path: path.appendingIndex(i)) {
                    result.append((text, item, path.appendingIndex(i)))
                }
            }
            return result.count == items.count ? result : nil
        }
        // A mapping (`{jpg,png}` unquoted) or nothing at all: say that a list would do too.
        if case .mapping = pair.value.kind { return typeMismatch(pair, expected: "a string or a list of strings", path: path) }
        if pair.value.scalar.map({ if case .null = $0.resolved { true } else { false } }) ?? false {
            return typeMismatch(pair, expected: "a string or a list of strings", path: path)
        }
        return string(pair, path: path).map { [($0, pair.value, path)] }
    }

    /// One of a fixed set of names, with a suggestion when it is not.
    func choice<T>(_ pair: YAMLPair, path: String, code: DiagnosticCode, what: String, allowed: [String],
                   parse: (String) -> T?) -> T? {
        guard let text = string(pair, path: path) else { return nil }
        if let value = parse(text) { return value }
        let hint = Suggestion.nearest(to: text, in: allowed).map { "; did you mean '\($0)'?" }
            ?? "; use one of \(allowed.joined(separator: ", "))"
        report(code, "unknown \(what) '\(text)'\(hint)", at: pair.value.location, keyPath: path)
        return nil
    }

    /// Reports a value of the wrong type and returns `nil`.
    func typeMismatch<T>(_ pair: YAMLPair, expected: String, path: String) -> T? {
        reportWrongType(pair, expected: expected, path: path)
        return nil
    }

    /// Reports a value of the wrong type, unless the composer already reported the value.
    func reportWrongType(_ pair: YAMLPair, expected: String, path: String) {
        guard !pair.value.isInvalid else { return }
        if pair.value.isEmptyScalar {
            // An empty value has no text to point at; its key is what the user sees.
            report(.wrongType, "'\(pair.name)' has no value; it must be \(expected)", at: pair.key.location, keyPath: path)
        } else {
            report(.wrongType, "'\(pair.name)' must be \(expected), not \(pair.value.typeDescription)\(braceHint(pair.value, expected: expected))",
                   at: pair.value.location, keyPath: path)
        }
    }

    /// `include: {jpg,png}`: a brace pattern unquoted is a YAML mapping of keys without values;
    /// where text was expected, the message shows it quoted.
    private func braceHint(_ value: YAMLNode, expected: String) -> String {
        guard expected.contains("string"), case .mapping(let pairs) = value.kind, !pairs.isEmpty,
              pairs.allSatisfy({ $0.value.isEmptyScalar && $0.key.scalar != nil }) else { return "" }
        let pattern = "{" + pairs.map { $0.key.scalar!.text }.joined(separator: ",") + "}"
        return "; a value in braces is a YAML mapping: quote a brace pattern, '\(ValidationContext.printable(pattern, limit: 60))'"
    }
}

extension YAMLNode {
    /// Whether this is a plain scalar with no text at all (`key:` followed by nothing).
    var isEmptyScalar: Bool { scalar.map { $0.style == .plain && $0.text.isEmpty && $0.tag == nil } ?? false }
}

extension ScalarValue {
    /// Whether this is an integer or a float (used to suggest removing quotes).
    var isNumber: Bool {
        if case .float = self { return true }
        return isInteger
    }

    /// Whether this is an integer (used to suggest removing quotes).
    var isInteger: Bool {
        if case .int = self { return true }
        return false
    }
}
