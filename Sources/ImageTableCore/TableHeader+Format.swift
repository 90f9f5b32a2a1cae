extension TableHeader {
    /// Where this header disagrees with the header `format` would write, field by field, as
    /// `style 16BitBGR, expected 32BitBGRA`; empty when every field agrees.
    ///
    /// The parameter hash alone is not proof: it is a checksum anyone can recompute, so a header
    /// whose `style` was changed and whose checksum was fixed up still carries the old hash. A
    /// writer that trusted it would render one style into slots laid out for another. The page
    /// size is not compared: a table made on a machine with other pages is still laid out by its
    /// own header, which decoding has checked.
    ///
    /// - Parameter format: the format the caller expects.
    /// - Returns: one description per field that differs.
    public func disagreements(with format: TableFormat) -> [String] {
        var out: [String] = []
        func compare(_ field: String, _ actual: String, _ expected: String) {
            if actual != expected { out.append("\(field) \(PrintableText.quoted(actual)), expected \(PrintableText.quoted(expected))") }
        }
        compare("name", name, format.name)
        compare("family", family, format.family)
        compare("scale", "\(scale)", "\(format.scale)")
        compare("protection", protection.rawValue, format.protection.rawValue)
        compare("style", layout.style.rawValue, format.style.rawValue)
        compare("width", "\(layout.width)", "\(format.width)")
        compare("height", "\(layout.height)", "\(format.height)")
        compare("capacity", "\(layout.capacity)", "\(format.capacity)")
        return out
    }

    /// Whether this header is the one `format` would write: the same parameter hash and every
    /// field agreeing (``disagreements(with:)``).
    ///
    /// - Parameter format: the format the caller expects.
    public func matches(_ format: TableFormat) -> Bool {
        parametersHash == format.parametersHash && disagreements(with: format).isEmpty
    }
}
