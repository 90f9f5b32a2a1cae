import ImageTableCore

extension TableFormat {
    /// A format for tests that only care how pixels are drawn: a small capacity and a fixed name.
    ///
    /// - Parameters:
    ///   - width: slot width in pixels.
    ///   - height: slot height in pixels.
    ///   - style: the pixel style.
    ///   - fit: the fit; cover by default.
    ///   - crop: the crop; centre by default.
    ///   - background: the background; white by default.
    ///   - cornerRadius: the corner radius in pixels; 0 by default.
    ///   - upscale: whether to enlarge small sources; no by default.
    public init(width: Int, height: Int, style: PixelStyle, fit: Fit = .cover, crop: CropStrategy = .centre,
                background: RGBAColor = .white, cornerRadius: Double = 0, upscale: Bool = false) {
        self.init(name: "test", width: width, height: height, style: style, capacity: 1,
                  rendering: RenderingOptions(fit: fit, crop: crop, background: background, cornerRadius: cornerRadius, upscale: upscale))
    }
}
