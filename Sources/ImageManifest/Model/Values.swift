// The rendering vocabulary (Fit, CropStrategy, RGBAColor, MemberSpec) is RenderModel's, shared
// with the pipeline and re-exported here so manifest users need one import.
@_exported import RenderModel

/// A width and height in points; pixels are points × scale.
public struct PointSize: Sendable, Hashable, CustomStringConvertible {
    /// Width in points, at least 1.
    public let width: Int
    /// Height in points, at least 1.
    public let height: Int

    /// Creates a size.
    ///
    /// - Parameters:
    ///   - width: width in points.
    ///   - height: height in points.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// `WIDTHxHEIGHT`, as manifests write it.
    public var description: String { "\(width)x\(height)" }
}
