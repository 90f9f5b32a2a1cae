/// Whether a file's first bytes are those of an image format the pipeline decodes: JPEG, PNG,
/// GIF, WebP, TIFF, or HEIF/AVIF. Files selected by a family's patterns that are not images by
/// this test are skipped with a warning (`not-an-image`) rather than failed.
public enum ImageSignature {
    /// The format the header's magic bytes name, or `nil` for none of ours.
    ///
    /// - Parameter header: at least the first 12 bytes of the file (fewer for a tiny file).
    public static func format(of header: [UInt8]) -> String? {
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            header.count >= offset + magic.count && Array(header[offset..<offset + magic.count]) == magic
        }
        if starts([0xFF, 0xD8, 0xFF]) { return "JPEG" }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "PNG" }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return "GIF" }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return "WebP" }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return "TIFF" }
        if starts(Array("ftyp".utf8), at: 4), header.count >= 12 {
            let brand = String(decoding: header[8..<12], as: UTF8.self)
            if ["heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1", "avif", "avis"].contains(brand) { return "HEIF" }
        }
        return nil
    }
}
