/// Warnings libvips logs for sound images, which a bake would print for every such source.
///
/// libvips 8.14's HEIF loader logs `source: bad seek to N` (N past the end of the file: libheif
/// probing how long the file is) for every HEIC and AVIF, and `heifload: ignoring nclx profile`
/// for every AVIF that states its colours as code points (ISO/IEC 23091-2) rather than an ICC
/// profile. The first says nothing about the image. The second matters only when the code
/// points are not sRGB's: libvips then draws, say, Display P3 pixels as sRGB. Both are dropped
/// from a source that rendered, the second only when its `nclx` box says sRGB (BT.709) or
/// nothing; they stay in a failure's cause, where they may explain it.
package enum BenignWarnings {
    /// `warnings` without those that say nothing about the source in `bytes`.
    ///
    /// - Parameters:
    ///   - warnings: what libvips logged while rendering the source.
    ///   - bytes: the encoded source.
    /// - Returns: the warnings worth a user's attention, in order.
    package static func filter(_ warnings: [String], bytes: UnsafeRawBufferPointer) -> [String] {
        guard !warnings.isEmpty else { return warnings }
        return warnings.filter { warning in
            if warning.hasPrefix("source: bad seek to ") { return !isHEIF(bytes) }
            if warning == "heifload: ignoring nclx profile" { return !nclxIsSRGB(bytes) }
            return true
        }
    }

    /// Whether `bytes` begin as an ISO base media file (HEIC, AVIF): a box whose type is `ftyp`.
    static func isHEIF(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 8 && Array(bytes[4..<8]) == Array("ftyp".utf8)
    }

    /// Whether the first `colr` box of type `nclx` in a HEIF file gives sRGB's primaries (1,
    /// BT.709) or unspecified ones (2), with a transfer function libvips' sRGB stands for (1
    /// BT.709, 2 unspecified, 6 BT.601, 13 sRGB). The box is `size` `colr` `nclx`, then the
    /// primaries, transfer and matrix as 16-bit big-endian numbers; it lies in the `meta` box
    /// near the start, so only the first 64 KiB are searched.
    package static func nclxIsSRGB(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let tag: [UInt8] = Array("colrnclx".utf8)
        let end = min(bytes.count, 65_536) - tag.count - 4
        guard end > 0 else { return false }
        for i in 0..<end where bytes[i] == tag[0] {
            guard (0..<tag.count).allSatisfy({ bytes[i + $0] == tag[$0] }) else { continue }
            let primaries = Int(bytes[i + 8]) << 8 | Int(bytes[i + 9])
            let transfer = Int(bytes[i + 10]) << 8 | Int(bytes[i + 11])
            return [1, 2].contains(primaries) && [1, 2, 6, 13].contains(transfer)
        }
        return false
    }
}
