/// One format to draw a source into, and the memory its pixels go to: typically a reserved table
/// slot, or scratch memory that a family write copies into a slot once the source has decoded.
///
/// The destination holds `format.height` rows, `bytesPerRow` apart, each starting with
/// `format.width × bytesPerPixel` bytes of pixels in `format.style`; the rest of each row is
/// padding, which renderers set to zero. Table slots have rows starting at multiples of 64 bytes.
public struct RenderTarget {
    /// What to draw.
    public var format: TableFormat
    /// Where to draw it: at least `bytesPerRow × format.height` bytes.
    public var pixels: UnsafeMutableRawBufferPointer
    /// The distance between row starts, at least `format.width × bytesPerPixel`.
    public var bytesPerRow: Int

    /// Creates a target from raw memory.
    ///
    /// - Parameters:
    ///   - format: what to draw.
    ///   - pixels: the destination, at least `bytesPerRow × format.height` bytes.
    ///   - bytesPerRow: the distance between row starts.
    public init(format: TableFormat, pixels: UnsafeMutableRawBufferPointer, bytesPerRow: Int) {
        self.format = format
        self.pixels = pixels
        self.bytesPerRow = bytesPerRow
    }

    /// Creates a target that draws into a reserved table slot.
    ///
    /// - Parameters:
    ///   - format: what to draw; its size and style must be the reservation's.
    ///   - reservation: the slot, from ``ImageTableWriter/reserve(key:sourceUUID:evicting:staged:replacingOwn:)``.
    public init(format: TableFormat, reservation: SlotReservation) {
        self.init(format: format, pixels: reservation.pixels, bytesPerRow: reservation.bytesPerRow)
        reservedSize = (reservation.width, reservation.height, reservation.style)
    }

    /// The reservation's own size and style, which renderers check against ``format``.
    public private(set) var reservedSize: (width: Int, height: Int, style: PixelStyle)?

    /// Why this target cannot be drawn into, or `nil` when it can: a format out of range, a
    /// reservation of another size or style, a stride or buffer too small.
    public var problem: String? {
        let f = format
        guard (1...TableLimits.maxDimension).contains(f.width), (1...TableLimits.maxDimension).contains(f.height) else {
            return "size \(f.width)×\(f.height) is outside 1…\(TableLimits.maxDimension)"
        }
        let radius = f.rendering.cornerRadius
        guard radius.isFinite, radius >= 0 else { return "corner radius \(radius) is not ≥ 0" }
        if let r = reservedSize, r.width != f.width || r.height != f.height || r.style != f.style {
            return "the slot is \(r.width)×\(r.height) \(r.style.rawValue) but the format asks for \(f.width)×\(f.height) \(f.style.rawValue)"
        }
        let rowBytes = f.width * f.style.bytesPerPixel
        guard bytesPerRow >= rowBytes else { return "bytesPerRow \(bytesPerRow) is less than \(rowBytes)" }
        guard pixels.baseAddress != nil, pixels.count >= bytesPerRow * f.height else {
            return "destination of \(pixels.count) bytes is smaller than \(bytesPerRow) × \(f.height)"
        }
        return nil
    }
}
