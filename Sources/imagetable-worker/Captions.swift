import ImagePipeline

/// Keys and titles as text masks that fit their space, or nothing when this libvips cannot
/// render text (built without Pango): the sheet is then drawn without them.
struct Captions {
    static let captionFont = "sans 8"
    static let titleFont = "sans bold 9"
    static let dpi = 96

    private(set) var available: Bool
    /// Why captions are missing, once, for a note.
    private(set) var failure: String?

    init() {
        available = TextRenderer.isAvailable
        if !available { failure = "this libvips cannot render text (built without Pango)" }
    }

    /// `text` rendered at most `width` pixels wide, shortened in the middle with `…` when it is
    /// wider (the end of a key, its file name, says the most). `nil` when text is unavailable.
    mutating func mask(_ text: String, font: String, width: Int) -> Bitmap? {
        guard available else { return nil }
        do {
            var mask = try TextRenderer.render(text, font: font, dpi: Self.dpi)
            let characters = Array(text)
            var keep = characters.count
            for _ in 0..<6 where mask.width > width && keep > 1 {
                keep = min(keep - 1, max(1, keep * width / mask.width - 1))
                mask = try TextRenderer.render(Self.middleEllipsis(characters, keep: keep), font: font, dpi: Self.dpi)
            }
            return mask
        } catch {
            available = false
            failure = "text rendering failed: \(error)"
            return nil
        }
    }

    /// The first of `candidates` that fits in `width` pixels, else the last one shortened.
    mutating func mask(firstFitting candidates: [String], font: String, width: Int) -> Bitmap? {
        for candidate in candidates.dropLast() {
            guard available, let mask = try? TextRenderer.render(candidate, font: font, dpi: Self.dpi) else { break }
            if mask.width <= width { return mask }
        }
        return candidates.last.flatMap { mask($0, font: font, width: width) }
    }

    /// `keep` characters of `characters`, a third from the start and the rest from the end,
    /// around a `…`.
    static func middleEllipsis(_ characters: [Character], keep: Int) -> String {
        guard characters.count > keep else { return String(characters) }
        let head = keep / 3, tail = keep - head
        return String(characters.prefix(head)) + "…" + String(characters.suffix(tail))
    }
}
