import ImageTableCore
import RenderModel

extension Manifest {
    /// One validated format: how every image of its family is rendered into its tables, one
    /// table per scale.
    ///
    /// Every value is in range and consistent with the others; defaults are filled in.
    public struct Format: Sendable, Hashable {
        /// The format's name, unique in the manifest; the base of its table files' names.
        public let name: String
        /// The name of the family the format belongs to.
        public let family: String
        /// The slot size in points.
        public let size: PointSize
        /// The scales to bake, ascending; one table each. `[1]` when the manifest gives none.
        public let scales: [Int]
        /// The pixel style of every slot.
        public let style: PixelStyle
        /// The capacity of each table: a hard cap, as in FastImageCache.
        public let maximumCount: Int
        /// Who may read the table files.
        public let protection: ProtectionMode
        /// How images are fitted into the slot.
        public let fit: Fit
        /// Which part `cover` keeps.
        public let crop: CropStrategy
        /// The colour behind letterboxing, rounded corners and flattened alpha.
        public let background: RGBAColor
        /// The rounded-corner clip radius in points; 0 for square corners.
        public let cornerRadius: Double
        /// Whether images smaller than the slot are enlarged; when false they are never upscaled.
        public let upscale: Bool
        /// Where the format's name is written in the manifest.
        public let location: SourceLocation

        /// The slot size in pixels at `scale`.
        ///
        /// - Parameter scale: one of ``scales``.
        public func pixelSize(scale: Int) -> (width: Int, height: Int) {
            (size.width * scale, size.height * scale)
        }

        /// The table file's name at `scale`: `<name>.imagetable` at scale 1, `<name>@<scale>x.imagetable`
        /// otherwise, as Apple names image assets. Names cannot contain `@`, so these never collide.
        ///
        /// - Parameter scale: one of ``scales``.
        public func tableFileName(scale: Int) -> String {
            scale == 1 ? "\(name).imagetable" : "\(name)@\(scale)x.imagetable"
        }

        /// How the pipeline renders this format at `scale`: the pixel size, and the corner radius
        /// in pixels (points × scale).
        ///
        /// - Parameter scale: one of ``scales``.
        public func memberSpec(scale: Int) -> MemberSpec {
            let pixels = pixelSize(scale: scale)
            return MemberSpec(width: pixels.width, height: pixels.height, style: style, fit: fit, crop: crop,
                              background: background, cornerRadius: cornerRadius * Double(scale), upscale: upscale)
        }

        /// The descriptor the baker opens the table at `scale` with.
        ///
        /// - Parameters:
        ///   - scale: one of ``scales``.
        ///   - pipelineVersion: the version of the pixel pipeline that renders the table.
        /// Its rendering signature (``MemberSpec/renderingSignature(pipelineVersion:)``) puts every
        /// rendering option and the pipeline version into the table's parameter hash, so a change
        /// to any of them rebuilds the table rather than mixing old and new pixels.
        public func descriptor(scale: Int, pipelineVersion: Int = ImagePipelineInfo.renderingVersion) -> FormatDescriptor {
            let pixels = pixelSize(scale: scale)
            return FormatDescriptor(name: name, family: family, width: pixels.width, height: pixels.height, style: style,
                                    capacity: maximumCount, protection: protection, scale: scale,
                                    renderingSignature: memberSpec(scale: scale).renderingSignature(pipelineVersion: pipelineVersion))
        }
    }
}
