import ImageTableCore
import CVips

/// PNG encoding of bitmaps, through libvips: what `imagetable extract` and `preview` write.
///
/// One band becomes a greyscale PNG, three RGB and four RGBA (straight alpha, as PNG defines
/// it), all 8 bits per channel, without metadata.
package enum PNGEncoder {
    /// Encodes `bitmap` as a PNG file's bytes.
    ///
    /// Saving builds a libvips operation, so it runs under the global lock: encoding does not
    /// overlap another thread's libvips calls (the worker that calls this has no others).
    ///
    /// - Parameters:
    ///   - bitmap: the pixels; 1, 3 or 4 bands.
    ///   - name: what errors name, such as the output path.
    ///   - compression: zlib level 0 (fastest) … 9 (smallest).
    /// - Returns: the PNG file's bytes.
    /// - Throws: ``ImageTableError`` `libraryUnavailable` or `renderFailed`.
    package static func encode(_ bitmap: Bitmap, name: String, compression: Int = 6) throws(ImageTableError) -> [UInt8] {
        try PipelineRuntime.start()
        let scope = VipsScope(sourceName: name)
        defer { scope.release() }
        let image = try scope.image(copying: bitmap)
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        try scope.build("encode the PNG", .renderFailed) {
            cv_pngsave_buffer(image.pointer, &buffer, &length, Int32(min(max(compression, 0), 9)))
        }
        guard let buffer else { throw ImageTableError(.renderFailed, "could not encode the PNG: libvips returned no bytes", path: name) }
        defer { cv_free(buffer) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: length))
    }
}
