import Foundation
import ImageTableCore

extension FormatReader {
    /// `[1, 2, 3]` or a single scale; ascending, no repeats.
    func readScales(_ pair: YAMLPair, path: String) -> [Int]? {
        let items: [(node: YAMLNode, path: String)]
        switch pair.value.kind {
        case .sequence(let nodes): items = nodes.enumerated().map { ($1, path.appendingIndex($0)) }
        case .scalar(let s) where s.style == .plain && s.text.contains(",")
                && s.text.split(separator: ",").allSatisfy({ Int($0.trimmingCharacters(in: .whitespaces)) != nil }):
            // `scales: 1, 2`: a plain scalar with commas is one string, not a list.
            let list = s.text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
            context.report(.wrongType, "'scales' must be a list, not the string '\(s.text)'; write it in brackets: [\(list)]",
                           at: pair.value.location, keyPath: path)
            return nil
        case .scalar: items = [(pair.value, path)]
        default: return context.typeMismatch(pair, expected: "a list of scales, like [1, 2]", path: path)
        }
        if items.isEmpty {
            context.report(.emptyCollection, "'scales' is empty; leave it out for scale 1, or list scales like [1, 2]",
                           at: pair.value.location, keyPath: path)
            return nil
        }
        var scales: [Int] = []
        var seen: [Int: SourceLocation] = [:]
        var ok = true
        for item in items {
            guard let value = context.integer(YAMLPair(key: pair.key, value: item.node), path: item.path) else {
                ok = false
                continue
            }
            guard let scale = value, ManifestLimits.scales.contains(scale) else {
                context.report(.invalidScale, "scale \(item.node.scalar?.text ?? "") is outside \(ManifestLimits.scales.lowerBound)…\(ManifestLimits.scales.upperBound)",
                               at: item.node.location, keyPath: item.path)
                ok = false
                continue
            }
            if let first = seen[scale] {
                context.report(.duplicateScale, "scale \(scale) is already listed at line \(first.line), column \(first.column)",
                               at: item.node.location, keyPath: item.path)
                ok = false
                continue
            }
            seen[scale] = item.node.location
            scales.append(scale)
        }
        return ok ? scales.sorted() : nil
    }

    /// 1 … ``ManifestLimits/maxCapacity``.
    func readMaximumCount(_ pair: YAMLPair, path: String) -> Int? {
        guard let value = context.integer(pair, path: path) else { return nil }
        guard let count = value, (1...ManifestLimits.maxCapacity).contains(count) else {
            context.report(.maximumCountOutOfRange, "maximumCount \(pair.value.scalar?.text ?? "") is outside 1…\(ManifestLimits.maxCapacity)",
                           at: pair.value.location, keyPath: path)
            return nil
        }
        return count
    }

    /// `#rgb`, `#rgba`, `#rrggbb` or `#rrggbbaa`.
    func readColor(_ pair: YAMLPair, path: String) -> RGBAColor? {
        let usage = "write a quoted CSS hex colour: \"#rgb\", \"#rgba\", \"#rrggbb\" or \"#rrggbbaa\""
        if pair.value.isEmptyScalar {
            // `background: #fff` is a key with no value and a comment: the commonest colour mistake.
            let line = context.sourceLine(pair.key.location.line)
            let hint = line.contains("#") ? "'\(pair.name)' has no value because an unquoted # starts a YAML comment; " : "'\(pair.name)' has no value; "
            context.report(.invalidColor, hint + usage, at: pair.key.location, keyPath: path)
            return nil
        }
        guard let text = context.string(pair, path: path) else { return nil }
        guard let color = RGBAColor(hex: text) else {
            context.report(.invalidColor, "'\(text)' is not a colour; \(usage)", at: pair.value.location, keyPath: path)
            return nil
        }
        return color
    }

    /// A finite number of points, at least 0.
    func readCornerRadius(_ pair: YAMLPair, path: String) -> Double? {
        guard let radius = context.number(pair, path: path) else { return nil }
        guard radius.isFinite, radius >= 0 else {
            context.report(.invalidCornerRadius, "cornerRadius \(pair.value.scalar?.text ?? "") must be a finite number of points, 0 or more",
                           at: pair.value.location, keyPath: path)
            return nil
        }
        return radius
    }
}
