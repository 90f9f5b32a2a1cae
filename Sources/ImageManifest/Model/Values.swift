/// A width and height in points, as a manifest writes a format's `size`; pixels are points × scale.
struct PointSize: Sendable, Hashable, CustomStringConvertible {
    /// Width in points, at least 1.
    let width: Int
    /// Height in points, at least 1.
    let height: Int

    /// Creates a size.
    ///
    /// - Parameters:
    ///   - width: width in points.
    ///   - height: height in points.
    init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// `WIDTHxHEIGHT`, as manifests write it.
    var description: String { "\(width)x\(height)" }
}
