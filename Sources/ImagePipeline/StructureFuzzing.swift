import ImageTableCore

/// The readers of a source's bytes that ``ImageRenderer`` runs beside libvips rather than before
/// it, gathered for the fuzz target `FuzzSourceBytes` (`make fuzz`), whose renders never load
/// libvips and so never reach them.
///
/// Each reads bytes a hostile source controls, through unsafe pointers: none may crash, hang or
/// read outside `bytes`, whatever they hold. This is no API for anything else (`@_spi`).
@_spi(Fuzzing) public enum StructureReaders {
    /// Runs every reader over `bytes` and discards what each found, but for a number that keeps
    /// the work from being optimised away.
    ///
    /// The readers: the GIF frame count that decides a `gifload` is cut short, the TIFF and
    /// generic truncation checks that word a libvips failure, HEIF's colour box, libjpeg's pass
    /// for a warning at the end of a JPEG (the strictest `failOn`) and the signature peek; and,
    /// over any bytes, two a render runs on some only: the JPEG scan count (a render's for a
    /// progressive JPEG whose header libjpeg took) and the EXIF orientation (an APP1 payload's).
    /// The WebP and TIFF refusals are not here: a render reaches them for every input the
    /// direct JPEG path declines.
    ///
    /// libjpeg's pass runs, as in a render, only for a JPEG whose header passed the checks made
    /// before either decoder (`JPEGDecoder`: the pixel limit, data enough for its blocks):
    /// 700 bytes that claim 65,495 × 64,484 pixels took it 10 s, where a render refuses them
    /// at once.
    ///
    /// - Parameters:
    ///   - bytes: any bytes.
    ///   - maxPixels: the renderer's pixel limit (`DecodeOptions.maxPixels`).
    /// - Returns: a number made of what the readers found, meaningless but for that.
    public static func readAll(_ bytes: UnsafeRawBufferPointer, maxPixels: Int) -> Int {
        var found = 0
        if let frame = GIFStructure.firstFrame(bytes) { found &+= frame.decoded &+ (frame.badCode ? 1 : 0) }
        if TIFFStructure.isTIFF(bytes), TIFFStructure.endsEarly(bytes) { found &+= 2 }
        if Truncation.looksTruncated(bytes) { found &+= 4 }
        if BenignWarnings.isHEIF(bytes), BenignWarnings.nclxIsSRGB(bytes) { found &+= 8 }
        found &+= JPEGScans.count(in: bytes, upTo: 1_000)
        if (try? JPEGDecoder(bytes, maxPixels: maxPixels)) != nil {
            found &+= JPEGDecoder.warningAtTheEnd(bytes)?.utf8.count ?? 0
        }
        found &+= ExifOrientation.parse(bytes)
        found &+= ImageSignature.format(of: Array(bytes.prefix(64)))?.utf8.count ?? 0
        return found
    }
}
