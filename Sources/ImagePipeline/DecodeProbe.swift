/// The direct path's decode alone, for `imagetable-bench render`: what a source costs before
/// anything of ours runs on it.
package enum DecodeProbe {
    /// Decodes `bytes` (a plain JPEG) at the shrink-on-load scale a bake into `box`×`box` cover
    /// formats would use; returns the decoded size, or `nil` where the direct path declines.
    package static func decodeAtBakeScale(_ bytes: [UInt8], box: Int) -> (width: Int, height: Int)? {
        bytes.withUnsafeBytes { raw -> (width: Int, height: Int)? in
            guard let jpeg = try? JPEGDecoder(raw) else { return nil }
            let scale = max(Double(box) / Double(jpeg.width), Double(box) / Double(jpeg.height))
            guard case .pixels(let raster) = jpeg.decode(shrink: ImageRenderer.jpegShrink(forScale: min(1, scale))) else { return nil }
            return (raster.width, raster.height)
        }
    }

    /// The direct path's decode of `bytes` at 1/`shrink`: size and packed RGB bytes, or `nil`
    /// where the direct path declines (tests compare it with libvips' own decode).
    package static func decode(_ bytes: [UInt8], shrink: Int) -> (width: Int, height: Int, pixels: [UInt8])? {
        bytes.withUnsafeBytes { raw -> (width: Int, height: Int, pixels: [UInt8])? in
            guard let jpeg = try? JPEGDecoder(raw), case .pixels(let raster) = jpeg.decode(shrink: shrink) else { return nil }
            return (raster.width, raster.height, Array(raster.bytes.prefix(raster.width * raster.height * 3)))
        }
    }
}
