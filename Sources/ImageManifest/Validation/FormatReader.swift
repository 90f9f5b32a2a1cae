import ImageTableCore

/// A format as the manifest writes it: its name and where, and the table format it makes at each
/// of its scales.
struct ReadFormat {
    let name: String
    let family: String
    let location: SourceLocation
    /// One per scale, ascending.
    let tables: [TableFormat]
    /// `capped: true`: more sources than `maximumCount` is meant, not warned of.
    var capped = false
}

/// Reads one format: each value on its own, then the rules that relate several of them.
struct FormatReader {
    let context: ValidationContext

    static let keys = ["size", "scales", "style", "maximumCount", "protection", "fit", "crop", "background",
                       "cornerRadius", "upscale", "capped"]
    /// The keys every format must have.
    static let required = ["size", "style", "maximumCount"]

    /// The format, or `nil` when it has errors (all of them reported).
    func read(_ pair: YAMLPair, family: String, path: String) -> ReadFormat? {
        let what = "format '\(pair.name)'"
        let errorsAtStart = context.errorCount
        guard let f = Fields(pair.value, path: path, what: what, known: Self.keys,
                             required: Self.required, owner: pair.key.location, context: context) else { return nil }
        let errorsBefore = context.errorCount
        func at(_ key: String) -> String { path.appendingKey(key) }

        let size = f["size"].flatMap { readSize($0, path: at("size")) }
        let scales = f["scales"].map { readScales($0, path: at("scales")) } ?? [1]
        let style = f["style"].flatMap {
            context.choice($0, path: at("style"), code: .unknownStyle, what: "style",
                           allowed: PixelStyle.allCases.map(\.rawValue), parse: PixelStyle.init(rawValue:))
        }
        let maximumCount = f["maximumCount"].flatMap { readMaximumCount($0, path: at("maximumCount")) }
        let protection = f["protection"].map {
            context.choice($0, path: at("protection"), code: .unknownProtection, what: "protection mode",
                           allowed: ProtectionMode.allCases.map(\.rawValue), parse: ProtectionMode.init(rawValue:))
        } ?? ProtectionMode.none
        let fit = f["fit"].map {
            context.choice($0, path: at("fit"), code: .unknownFit, what: "fit", allowed: Fit.allCases.map(\.rawValue),
                           parse: Fit.init(rawValue:))
        } ?? .cover
        let crop = f["crop"].map {
            context.choice($0, path: at("crop"), code: .unknownCrop, what: "crop", allowed: CropStrategy.allCases.map(\.rawValue),
                           parse: CropStrategy.init(manifestValue:))
        } ?? .centre
        let background = f["background"].map { readColor($0, path: at("background")) } ?? .white
        let cornerRadius = f["cornerRadius"].map { readCornerRadius($0, path: at("cornerRadius")) } ?? 0
        let upscale = f["upscale"].map { context.boolean($0, path: at("upscale")) } ?? false
        let capped = f["capped"].map { context.boolean($0, path: at("capped")) } ?? false

        if let cropPair = f["crop"], let fit, fit != .cover {
            context.report(.cropWithoutCover, "'crop' has no effect with fit '\(fit.rawValue)'; it only applies to 'cover'",
                           at: cropPair.key.location, keyPath: at("crop"))
        }
        if let size, let scales { checkPixelSize(size, scales: scales, pair: f["size"]!, path: at("size")) }
        // Needs only the size: with a bad `scales` beside it, it was not reported until that was fixed.
        if let size, let radius = cornerRadius, let radiusPair = f["cornerRadius"], radius * 2 > Double(min(size.width, size.height)) {
            context.report(.cornerRadiusTooLarge, "cornerRadius \(radiusPair.value.scalar?.text ?? "") is more than half the smaller side of \(size) points (at most \(Double(min(size.width, size.height)) / 2))",
                           at: radiusPair.value.location, keyPath: at("cornerRadius"))
        }
        if let style, !style.hasAlpha, let background, background.alpha < 255, let bgPair = f["background"] {
            context.report(.backgroundAlphaIgnored, "background \(bgPair.value.scalar?.text ?? "") is not opaque, but style \(style.rawValue) has no alpha; the colour is used as if opaque",
                           at: bgPair.value.location, keyPath: at("background"))
        }
        // The letterbox, the margins of `inside` and rounded corners are transparent where the
        // style keeps alpha, and nothing is flattened: the colour was ignored without a word.
        // Only of a format that is otherwise sound: `color: "#fff"` is an unknown key already.
        if let style, style.hasAlpha, background != nil, context.errorCount == errorsAtStart, let bgPair = f["background"] {
            context.report(.backgroundUnused, "'background' has no effect with style \(style.rawValue), which keeps alpha: letterboxing, "
                           + "margins and rounded corners stay transparent", at: bgPair.key.location, keyPath: at("background"))
        }
        guard context.errorCount == errorsBefore, let size, let scales, let style, let maximumCount, let protection, let fit,
              let crop, let background, let cornerRadius, let upscale, let capped else { return nil }
        // Checked above (`size-too-large`); again here so that a report missed cannot become an
        // overflow trap on a hostile manifest, as one did when repeated reports went uncounted.
        guard scales.allSatisfy({ !size.width.multipliedReportingOverflow(by: $0).overflow
                                  && !size.height.multipliedReportingOverflow(by: $0).overflow }) else { return nil }
        // Pixels are points × scale, the corner radius included.
        let tables = scales.map { scale in
            TableFormat(name: pair.name, family: family, width: size.width * scale, height: size.height * scale,
                        style: style, capacity: maximumCount, protection: protection, scale: scale,
                        rendering: RenderingOptions(fit: fit, crop: crop, background: background,
                                                    cornerRadius: cornerRadius * Double(scale), upscale: upscale))
        }
        return ReadFormat(name: pair.name, family: family, location: pair.key.location, tables: tables, capped: capped)
    }

    /// `50x50`, or `[50, 50]`.
    private func readSize(_ pair: YAMLPair, path: String) -> PointSize? {
        let usage = "write WIDTHxHEIGHT in points, like 50x50, or [50, 50]"
        var sides: [Int?] = []
        switch pair.value.kind {
        case .invalid:
            return nil
        case .scalar where pair.value.isEmptyScalar:
            context.report(.invalidSize, "'size' has no value; \(usage)", at: pair.key.location, keyPath: path)
            return nil
        case .scalar(let s):
            let parts = s.text.split(separator: "x", omittingEmptySubsequences: false)
            guard case .string = s.resolved, parts.count == 2,
                  parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { (48...57).contains($0) } }) else {
                context.report(.invalidSize, "size '\(s.text)' is not a size; \(usage)", at: pair.value.location, keyPath: path)
                return nil
            }
            sides = parts.map { Int($0) }
        case .sequence(let items):
            let values = items.map { $0.scalar?.resolved }
            guard values.count == 2, values.allSatisfy({ $0?.isInteger == true }) else {
                context.report(.invalidSize, "size must be a list of two integers; \(usage)", at: pair.value.location, keyPath: path)
                return nil
            }
            sides = values.map { if case .int(let i) = $0 { i } else { nil } }
        case .mapping:
            context.report(.invalidSize, "size must not be a mapping; \(usage)", at: pair.value.location, keyPath: path)
            return nil
        }
        guard let width = sides[0], let height = sides[1] else {
            context.report(.sizeTooLarge, "size is larger than \(ManifestLimits.maxPixelDimension) pixels per side",
                           at: pair.value.location, keyPath: path)
            return nil
        }
        guard width >= 1, height >= 1 else {
            context.report(.invalidSize, "size \(width)x\(height) must be at least 1x1 point", at: pair.value.location, keyPath: path)
            return nil
        }
        return PointSize(width: width, height: height)
    }

    /// Every scale's pixel size must fit the format's bound.
    private func checkPixelSize(_ size: PointSize, scales: [Int], pair: YAMLPair, path: String) {
        let limit = ManifestLimits.maxPixelDimension
        guard let scale = scales.first(where: { size.width > limit / $0 || size.height > limit / $0 }) else { return }
        let (w, h) = (size.width.multipliedReportingOverflow(by: scale), size.height.multipliedReportingOverflow(by: scale))
        let pixels = w.overflow || h.overflow ? "too many pixels" : "\(w.partialValue)x\(h.partialValue) pixels"
        context.report(.sizeTooLarge, "size \(size) points at scale \(scale) is \(pixels); the limit is \(limit) pixels per side",
                       at: pair.value.location, keyPath: path)
    }
}
