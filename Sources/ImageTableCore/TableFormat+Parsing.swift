extension TableFormat {
    /// Reads a format back from its ``canonicalParameters``, as the worker protocol carries it:
    /// one text, the same one the parameter hash is made of, so that what a worker renders is
    /// exactly what the table it writes into was opened with.
    ///
    /// Only rendering signatures written by this package parse; a table made by another
    /// producer with an opaque signature cannot be rendered by this pipeline anyway.
    ///
    /// - Parameters:
    ///   - text: the canonical parameter string.
    ///   - scale: the scale, which the string does not hold (it decides no pixel).
    /// - Throws: ``ImageTableError`` `invalidArgument` naming the line that does not parse.
    public init(canonicalParameters text: String, scale: Int = 1) throws(ImageTableError) {
        func invalid(_ why: String) -> ImageTableError {
            ImageTableError(.invalidArgument, "not a canonical parameter string: \(why)")
        }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.last == "" else { throw invalid("it does not end with a line break") }
        lines.removeLast()
        let names = ["name", "family", "width", "height", "style", "capacity", "protection", "rendering"]
        guard lines.count == names.count + 1, lines[0] == "imagetable/1" else {
            throw invalid("expected 'imagetable/1' and \(names.count) fields")
        }
        var values: [String] = []
        for (line, field) in zip(lines.dropFirst(), names) {
            guard line.hasPrefix(field + "=") else { throw invalid("expected '\(field)=' in '\(PrintableText.escaped(line))'") }
            values.append(String(line.dropFirst(field.count + 1)))
        }
        guard let width = Int(values[2]), let height = Int(values[3]), let capacity = Int(values[5]) else {
            throw invalid("width, height and capacity must be integers")
        }
        guard let style = PixelStyle(rawValue: values[4]) else { throw invalid("unknown style '\(PrintableText.escaped(values[4]))'") }
        guard let protection = ProtectionMode(rawValue: values[6]) else {
            throw invalid("unknown protection '\(PrintableText.escaped(values[6]))'")
        }
        let (version, rendering) = try Self.parseSignature(values[7])
        self.init(name: values[0], family: values[1], width: width, height: height, style: style, capacity: capacity,
                  protection: protection, scale: scale, rendering: rendering, renderingVersion: version)
        guard canonicalParameters == text else { throw invalid("it does not round-trip (a non-canonical number or colour)") }
    }

    /// `pipeline=1;fit=cover;crop=centre;background=#ffffffff;radius=0;upscale=0`.
    private static func parseSignature(_ signature: String) throws(ImageTableError) -> (Int, RenderingOptions) {
        var fields: [String: String] = [:]
        for part in signature.split(separator: ";") {
            guard let eq = part.firstIndex(of: "=") else { continue }
            fields[String(part[..<eq])] = String(part[part.index(after: eq)...])
        }
        guard fields.count == 6, let version = fields["pipeline"].flatMap({ Int($0) }),
              let fit = fields["fit"].flatMap(Fit.init(rawValue:)),
              let crop = fields["crop"].flatMap(CropStrategy.init(rawValue:)),
              let background = fields["background"].flatMap(RGBAColor.init(hex:)),
              let radius = fields["radius"].flatMap(Double.init), radius.isFinite, radius >= 0,
              let upscale = fields["upscale"], upscale == "0" || upscale == "1" else {
            throw ImageTableError(.invalidArgument, "not a rendering signature of this package: '\(PrintableText.escaped(signature))'")
        }
        return (version, RenderingOptions(fit: fit, crop: crop, background: background, cornerRadius: radius, upscale: upscale == "1"))
    }
}
