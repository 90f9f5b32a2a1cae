import ImageManifest
import ImageTableCore

/// What a family's tables' pixels depend on beyond each table's own format: the geometry of
/// every member of the family.
///
/// A source is decoded once per family, at the size that covers its largest member, and each
/// member is resized from that decode or from a larger member's intermediate
/// ([PIPELINE.md](../../docs/PIPELINE.md), "Decode strategy"); a member asking for an attention
/// or entropy crop sends every member through libvips instead of the direct JPEG path. So adding,
/// removing or resizing one format changes its siblings' pixels by a level or three, while their
/// own parameters, which a table's header records, stay the same: a bake kept their entries, and
/// a table baked over such a change never equalled a fresh bake of the same manifest, nor
/// exported the same bytes. The bake state records this signature per table; a table whose
/// family's signature changed has every entry rendered again.
enum FamilyLineage {
    /// The signature of `formats` (one family's, at every scale): each member's pixel size, fit,
    /// crop and upscaling, and the pipeline's rendering version, sorted and without repeats, so
    /// that a renamed format, a new scale's identical twin or a change of style, background or
    /// corner radius (drawn per member, after resizing) changes nothing.
    ///
    /// - Parameter formats: the family's formats at each of their scales.
    static func signature(of formats: [TableFormat]) -> String {
        let members = Set(formats.map { format in
            let r = format.rendering
            return "\(format.width)x\(format.height) fit=\(r.fit.rawValue) crop=\(r.crop.rawValue) upscale=\(r.upscale ? 1 : 0)"
        })
        return "pipeline=\(TableFormat.pipelineRenderingVersion)\n" + members.sorted().joined(separator: "\n")
    }

    /// The signature of each family of `manifest`, by family name.
    ///
    /// - Parameter manifest: the manifest being baked.
    static func signatures(of manifest: Manifest) -> [String: String] {
        Dictionary(manifest.families.map { ($0.name, signature(of: $0.formats)) }, uniquingKeysWith: { first, _ in first })
    }

    /// The members that differ between two signatures, for a notice: `added 300x300 fit=cover…`.
    ///
    /// - Parameters:
    ///   - old: the signature recorded at the last bake.
    ///   - new: the signature now.
    static func change(from old: String, to new: String) -> String {
        let before = Set(old.split(separator: "\n").dropFirst()), after = Set(new.split(separator: "\n").dropFirst())
        let added = after.subtracting(before).sorted(), removed = before.subtracting(after).sorted()
        var parts: [String] = []
        if !added.isEmpty { parts.append("added " + added.joined(separator: ", ")) }
        if !removed.isEmpty { parts.append("removed " + removed.joined(separator: ", ")) }
        return parts.isEmpty ? "rendering version" : parts.joined(separator: "; ")
    }
}
