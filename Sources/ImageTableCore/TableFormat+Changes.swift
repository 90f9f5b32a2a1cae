extension TableFormat {
    /// What differs between an earlier version of a format and this one, option by option, as
    /// people read it: `fit: cover → contain`, `size: 150x150 → 300x300`. For the notice that says
    /// why a table was rebuilt.
    ///
    /// - Parameter old: the format the table was made with.
    /// - Returns: one entry per differing option; empty when none of these differ.
    public func changes(from old: TableFormat) -> [String] {
        var out: [String] = []
        func note(_ name: String, _ a: String, _ b: String) { if a != b { out.append("\(name): \(a) → \(b)") } }
        note("size", "\(old.width)x\(old.height)", "\(width)x\(height)")
        note("style", old.style.rawValue, style.rawValue)
        note("maximumCount", "\(old.capacity)", "\(capacity)")
        note("protection", old.protection.rawValue, protection.rawValue)
        note("fit", old.rendering.fit.rawValue, rendering.fit.rawValue)
        note("crop", old.rendering.crop.rawValue, rendering.crop.rawValue)
        note("background", old.rendering.background.description, rendering.background.description)
        note("corner radius in pixels", Self.number(old.rendering.cornerRadius), Self.number(rendering.cornerRadius))
        note("upscale", "\(old.rendering.upscale)", "\(rendering.upscale)")
        note("rendering version", "\(old.renderingVersion)", "\(renderingVersion)")
        note("family", old.family, family)
        return out
    }

    private static func number(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
