/// Which formats of a family an entry's pixels were drawn beside: a 16-bit digest recorded in
/// each index record (`familyTag`, docs/FORMAT.md).
///
/// A producer that decodes a source once for a whole family (the bake, and the runtime cache
/// with the libvips renderer) decodes at the size that covers the family's largest member and
/// resizes each member from that decode or from a larger member's intermediate. So one format's
/// pixels move by a few levels when another format of its family is added, removed or resized,
/// while its own parameters, which the header's hash covers, stay the same. Each entry records
/// the tag of the family it was drawn for; a bake draws again the entries whose tag is not the
/// manifest's, entry by entry, whatever happened since (a bake stopped part-way, sources that
/// failed or were away, a bake state lost or restored, shards merged).
public enum FamilyTag {
    /// The tag of entries whose producer did not say (tables written before tags were recorded,
    /// producers that draw each format on its own): taken as drawn for the family as it is.
    public static let unknown: UInt16 = 0

    /// The tag of a family: a digest of ``signature(of:)``, never ``unknown``.
    ///
    /// - Parameter formats: every format of the family, at each of its scales.
    /// - Returns: the 16-bit tag. Two families collide once in 65,535: their entries would then
    ///   not be drawn again, and stay a few levels off.
    public static func of(_ formats: [TableFormat]) -> UInt16 {
        let digest = SHA1.digest(Array(signature(of: formats).utf8))
        let tag = UInt16(digest[0]) << 8 | UInt16(digest[1])
        return tag == unknown ? 1 : tag
    }

    /// What a member's pixels depend on among its siblings: each member's pixel size, fit, crop
    /// and upscaling, and the pipeline's rendering version, sorted and without repeats. A name, a
    /// style, a background or a corner radius (drawn per member, after resizing) and a scale
    /// whose pixel size another member already has change nothing.
    ///
    /// - Parameter formats: every format of the family, at each of its scales.
    public static func signature(of formats: [TableFormat]) -> String {
        let members = Set(formats.map { format in
            let r = format.rendering
            return "\(format.width)x\(format.height) fit=\(r.fit.rawValue) crop=\(r.crop.rawValue) upscale=\(r.upscale ? 1 : 0)"
        })
        return "pipeline=\(TableFormat.pipelineRenderingVersion)\n" + members.sorted().joined(separator: "\n")
    }
}
