import ImageTableCore
import CVips

/// Resizing bitmaps with libvips' default kernel (Lanczos 3), for the contact sheet's tiles.
package enum Resampler {
    /// `bitmap` resized to exactly `width` × `height`.
    ///
    /// Channels are resampled independently, so an RGBA bitmap should be premultiplied first:
    /// resampling straight alpha bleeds the colour of transparent pixels into their neighbours.
    /// The kernel may ring; values are clamped to 0…255, and a premultiplied result may have a
    /// colour channel slightly above its alpha.
    ///
    /// - Parameters:
    ///   - bitmap: the pixels.
    ///   - width: the new width, at least 1.
    ///   - height: the new height, at least 1.
    ///   - name: what errors name.
    /// - Returns: the resized bitmap, with as many bands as `bitmap`.
    /// - Throws: ``ImageTableError`` `libraryUnavailable`, `invalidRequest` or `renderFailed`.
    package static func resize(_ bitmap: Bitmap, width: Int, height: Int, name: String) throws(ImageTableError) -> Bitmap {
        guard width > 0, height > 0 else { throw ImageTableError(.invalidRequest, "cannot resize to \(width)×\(height)", path: name) }
        if width == bitmap.width && height == bitmap.height { return bitmap }
        try PipelineRuntime.start()
        let scope = VipsScope(sourceName: name)
        defer { scope.release() }
        let source = try scope.image(copying: bitmap)
        let hscale = Double(width) / Double(bitmap.width), vscale = Double(height) / Double(bitmap.height)
        var resized = try scope.image("resize", .renderFailed) { cv_resize(source.pointer, $0, hscale, vscale) }
        // libvips rounds the output size; a pixel more or less is trimmed or repeated.
        if resized.width != width || resized.height != height {
            let trimmed = resized
            let w = min(trimmed.width, width), h = min(trimmed.height, height)
            let cropped = try scope.image("trim the resized image", .renderFailed) {
                cv_extract_area(trimmed.pointer, $0, 0, 0, Int32(w), Int32(h))
            }
            resized = try scope.image("pad the resized image", .renderFailed) {
                cv_embed_copy(cropped.pointer, $0, 0, 0, Int32(width), Int32(height))
            }
        }
        return try scope.bitmap("resize", of: resized)
    }
}
