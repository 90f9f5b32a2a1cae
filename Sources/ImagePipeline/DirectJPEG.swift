import ImageTableCore

/// The direct JPEG path: a JPEG decoded by libjpeg at the shrink-on-load scale libvips
/// would use, resized by our own Lanczos-3, turned upright, cropped and packed into every member,
/// with no libvips object at all (`docs/PIPELINE.md`, "The direct JPEG path").
///
/// libvips' per-image machinery (operation objects, a thread pool per evaluation, liborc code
/// generated per resize) cost 2–4× the decode itself; this path costs little more than the decode.
/// It covers the common case only and declines (returns `nil`) everything else, which libvips
/// then renders as before: other formats, CMYK, ICC profiles that are not RGB or that lcms2
/// cannot read, attention and entropy crops when no cropper is given (the renderer gives
/// libvips' `smartcrop`), and any file libjpeg warns about or fails on (so damage is reported by
/// libvips, in its words). An RGB profile (a phone's Display P3) is
/// converted to sRGB by a ``ColourTransform`` kept per profile, after resizing.
enum DirectJPEG {
    /// Crops a member's resized, upright image to `width` × `height` by an attention or entropy
    /// strategy (libvips' `smartcrop`, which this module calls without linking libvips here).
    typealias SmartCrop = (_ image: Raster, _ width: Int, _ height: Int, _ strategy: CropStrategy) throws(ImageTableError) -> Raster

    /// Renders `bytes` into `targets`, or returns `nil` when the direct path does not apply.
    ///
    /// - Parameters:
    ///   - bytes: the encoded image.
    ///   - name: what errors name.
    ///   - targets: the members, already validated.
    ///   - formats: the targets' formats, then the formats only planned (see
    ///     ``ImageRenderer/render(bytes:name:into:planningWith:)``).
    ///   - options: limits.
    ///   - smartCrop: how members with an attention or entropy crop are cropped; without it,
    ///     such members send the source to libvips.
    /// - Returns: the report, or `nil` to fall back to libvips.
    /// - Throws: ``ImageTableError`` `too-many-pixels`, as the libvips path would, and
    ///   `truncated` for data that ends before the image (libjpeg only warns, and pads with grey),
    ///   or a header claiming more blocks than the data can hold, CMYK and other JPEGs included.
    static func render(_ bytes: UnsafeRawBufferPointer, name: String, targets: [RenderTarget], formats: [TableFormat],
                       options: DecodeOptions, smartCrop: SmartCrop? = nil) throws(ImageTableError) -> RenderReport? {
        guard PipelineRuntime.settings.loaders.contains(.jpeg),
              let jpeg = try JPEGDecoder(bytes, name: name, maxPixels: options.maxPixels) else { return nil }
        let swaps = jpeg.orientation >= 5
        let sw = swaps ? jpeg.height : jpeg.width, sh = swaps ? jpeg.width : jpeg.height
        let geometries = formats.map { MemberGeometry(sourceWidth: sw, sourceHeight: sh, format: $0) }
        let plan = RenderPlan(sourceWidth: sw, sourceHeight: sh, geometries: geometries, formats: formats)
        guard smartCrop != nil || plan.groups.allSatisfy({ $0.crop == nil || $0.crop == .centre }) else { return nil }
        var colour: ColourTransform?
        if let profile = jpeg.iccProfile {
            // A grey JPEG's profile is grey (or mislabelled): libvips decides what it means.
            guard jpeg.components == 3, let transform = profile.withUnsafeBytes({ ColourTransform.toSRGB(from: $0) }) else { return nil }
            colour = transform
        }

        let shrink = ImageRenderer.jpegShrink(forScale: plan.decodeScale, width: jpeg.width, height: jpeg.height)
        let base: Raster
        var warnings: [String] = []
        switch jpeg.decode(shrink: shrink) {
        case .pixels(let raster): base = raster
        case .declined: return nil
        case .refused(let message):
            throw ImageTableError(.decodeFailed, "could not decode", path: name, cause: "libjpeg: \(message)")
        case .warnedAtTheEnd(let raster, let message):
            // Damage libvips never reads (it stops at the last row): `failOn: warning` refuses
            // it as libvips refuses the warnings it sees; below that, it is kept, and said.
            guard options.failOn != .warning else {
                throw ImageTableError(.decodeFailed, "could not decode", path: name, cause: "libjpeg: \(message)")
            }
            base = raster
            warnings = ["libjpeg: \(message)"]
        case .truncated(let message):
            // libvips itself lets some of these through as grey (a header claiming far more rows
            // than the data holds); every failOn level refuses a file that ends early.
            throw ImageTableError(.truncated, "the image data ends early", path: name, cause: "libjpeg: \(message)")
        }
        let decodedWidth = swaps ? base.height : base.width, decodedHeight = swaps ? base.width : base.height
        try draw(base, storedWidth: jpeg.width, storedHeight: jpeg.height, shrink: shrink, orientation: jpeg.orientation,
                 colour: colour, smartCrop: smartCrop, plan: plan, geometries: geometries, into: targets)
        let info = SourceInfo(width: sw, height: sh, loader: "libjpeg", orientation: jpeg.orientation, hasAlpha: false,
                              hasICCProfile: colour != nil, isCMYK: false, decodedWidth: decodedWidth, decodedHeight: decodedHeight)
        var report = RenderReport(members: geometries.prefix(targets.count).map { MemberResult(contentRect: $0.contentRect) }, decodes: 1, source: info)
        report.warnings = warnings
        return report
    }

    /// ``draw(_:scale:extent:orientation:colour:smartCrop:plan:geometries:into:)`` for a JPEG
    /// decoded at a DCT scale: `base` is at 1/`shrink` (1, 2, 4 or 8) of the source as stored
    /// (`storedWidth` × `storedHeight`, before turning it upright); its pixels start where the
    /// source does and reach its size divided by `shrink`, whether the decoder rounded that up
    /// (libjpeg: a last pixel covering part of a block) or down (libvips' `jpegload`).
    ///
    /// - Throws: what `smartCrop` throws.
    static func draw(_ base: Raster, storedWidth: Int, storedHeight: Int, shrink: Int, orientation: Int, colour: ColourTransform? = nil,
                     smartCrop: SmartCrop? = nil, plan: RenderPlan, geometries: [MemberGeometry],
                     into targets: [RenderTarget]) throws(ImageTableError) {
        let scale = 1 / Double(shrink)
        try draw(base, scale: (scale, scale), extent: (Double(storedWidth) * scale, Double(storedHeight) * scale), orientation: orientation,
                 colour: colour, smartCrop: smartCrop, plan: plan, geometries: geometries, into: targets)
    }

    /// Resizes `base`, the image as stored (not yet upright), into every member of `plan` that
    /// `targets` draws or that another resizes from, with our Lanczos-3, then turns each result
    /// upright, crops it and packs it into its targets.
    ///
    /// - Parameters:
    ///   - base: the decoded image, 3 channels, as stored.
    ///   - scale: `base`'s scale from the source as stored, per stored axis.
    ///   - extent: how far the source reaches in `base`'s pixels (`Lanczos3.Taps`), per stored
    ///     axis: the source's size times `scale`, a fraction of a pixel off `base`'s own size
    ///     when its decoder or resizer rounded it.
    ///   - orientation: the EXIF orientation (1…8) that turns `base` upright.
    ///   - colour: the conversion of an embedded profile to sRGB, applied to each member's
    ///     pixels after resizing; `nil` when `base` is sRGB.
    ///   - smartCrop: how members with an attention or entropy crop are cropped, from their
    ///     whole resized image, upright and in sRGB (as `vips_thumbnail` crops); required when
    ///     `plan` has such members.
    ///   - unscaledAsIs: whether a member at `base`'s own scale takes `base`'s pixels from its top
    ///     left, without resampling, when `base` is as large or a pixel larger (`vips_thumbnail`
    ///     made `base` as that member, a pixel wider on a side its crop cuts).
    ///   - plan: the render plan of the upright source.
    ///   - geometries: each format's placement.
    ///   - targets: the members to draw and where.
    /// - Throws: what `smartCrop` throws.
    static func draw(_ base: Raster, scale baseScale: (x: Double, y: Double), extent: (x: Double, y: Double), orientation: Int,
                     colour: ColourTransform? = nil, smartCrop: SmartCrop? = nil, unscaledAsIs: Bool = false, plan: RenderPlan,
                     geometries: [MemberGeometry], into targets: [RenderTarget]) throws(ImageTableError) {
        let swaps = orientation >= 5 && orientation <= 8
        let decodedWidth = swaps ? base.height : base.width, decodedHeight = swaps ? base.width : base.height
        // Intermediates stay in the stored orientation (turning a small result upright is cheaper
        // than turning the decoded image); scales are per stored axis.
        let sources = plan.sources(decodedWidth: decodedWidth, decodedHeight: decodedHeight)
        let needed = plan.needed(drawn: targets.count, sources: sources)
        var intermediates: [(raster: Raster, x: Double, y: Double)?] = []
        for (gi, group) in plan.groups.enumerated() {
            guard needed[gi] else {
                intermediates.append(nil)
                continue
            }
            let from = sources[gi].map { intermediates[$0]! } ?? (raster: base, x: baseScale.x, y: baseScale.y)
            let (gx, gy) = swaps ? (group.scaleY, group.scaleX) : (group.scaleX, group.scaleY)
            let (w, h) = swaps ? (group.resizedHeight, group.resizedWidth) : (group.resizedWidth, group.resizedHeight)
            var same = from.raster.width == w && from.raster.height == h && from.x == gx && from.y == gy
            let asIs = !same && unscaledAsIs && abs(gx / from.x - 1) < 1e-9 && abs(gy / from.y - 1) < 1e-9
                && from.raster.width >= w && from.raster.height >= h
            // A group that later groups resize from keeps its whole image; one that is only drawn
            // is resized only where its centre crop lies.
            let feedsOthers = sources.enumerated().contains { $0.element == gi && needed[$0.offset] }
            // A smart crop needs the whole resized image; a centre crop is known in advance.
            let smart = group.crop.flatMap { $0 == .centre ? nil : $0 }
            let crop = smart != nil ? Lanczos3.Window(x: 0, y: 0, width: w, height: h)
                : Self.storedCrop(width: w, height: h, contentWidth: group.contentWidth, contentHeight: group.contentHeight,
                                  orientation: orientation)
            let resized: Raster
            if same {
                resized = from.raster
            } else if asIs {
                resized = from.raster.cropped(to: Lanczos3.Window(x: 0, y: 0, width: w, height: h))
                same = true
            } else {
                // The decoded image covers the source from its top left corner to its true size
                // at the DCT scale (1601 pixels at 1/8 are 200.125 of the 201 decoded); an
                // intermediate's grid is centred on the source's, as its resize made it.
                resized = Lanczos3.resize(from.raster, width: w, height: h, scaleX: gx / from.x, scaleY: gy / from.y,
                                          extent: sources[gi] == nil ? extent : nil, window: feedsOthers ? nil : crop)
            }
            intermediates.append(feedsOthers || same ? (resized, gx, gy) : nil)
            var content = (same || feedsOthers ? resized.cropped(to: crop) : resized).upright(orientation: orientation)
            colour?.apply(&content)
            if let smart {
                guard let smartCrop else { preconditionFailure("a smart crop without a cropper") }
                content = try smartCrop(content, group.contentWidth, group.contentHeight, smart)
            }
            content.bytes.withUnsafeBytes { raw in
                let pixels = ContentPixels(base: raw.baseAddress!, width: group.contentWidth, height: group.contentHeight,
                                           hasAlpha: false, rowBytes: content.rowBytes)
                for (ti, target) in targets.enumerated() where plan.groupOfTarget[ti] == gi {
                    PixelWriter.write(pixels, placement: geometries[ti].placement, format: target.format,
                                      into: target.pixels.baseAddress!, bytesPerRow: target.bytesPerRow)
                }
            }
        }
    }

    /// The centre crop of the upright image (`contentWidth` × `contentHeight` of the upright
    /// `width` × `height` image, which is stored turned by `orientation`), as a rectangle of the
    /// stored image: the part of a resize that ends up drawn.
    static func storedCrop(width w: Int, height h: Int, contentWidth: Int, contentHeight: Int, orientation: Int) -> Lanczos3.Window {
        let swaps = orientation >= 5 && orientation <= 8
        let (uw, uh) = swaps ? (h, w) : (w, h)
        let x0 = (uw - contentWidth) / 2, y0 = (uh - contentHeight) / 2
        // Where an upright pixel is stored, as `Raster.upright` maps it.
        func stored(_ ox: Int, _ oy: Int) -> (Int, Int) {
            switch orientation {
            case 2: (w - 1 - ox, oy)
            case 3: (w - 1 - ox, h - 1 - oy)
            case 4: (ox, h - 1 - oy)
            case 5: (oy, ox)
            case 6: (oy, h - 1 - ox)
            case 7: (w - 1 - oy, h - 1 - ox)
            case 8: (w - 1 - oy, ox)
            default: (ox, oy)
            }
        }
        let a = stored(x0, y0), b = stored(x0 + contentWidth - 1, y0 + contentHeight - 1)
        return Lanczos3.Window(x: min(a.0, b.0), y: min(a.1, b.1), width: abs(a.0 - b.0) + 1, height: abs(a.1 - b.1) + 1)
    }
}
