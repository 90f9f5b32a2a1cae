import CVips
import ImageTableCore

/// The libvips path of ``ImageRenderer``: every source the direct JPEG path declines (other
/// formats, CMYK, profiles it cannot convert, damaged files). A JPEG is decoded here at its DCT
/// scale (`ImageRenderer+VipsJPEG.swift`); the rest take one decode with shrink-on-load through
/// `vips_thumbnail`. Members of a decode without alpha are resized by our own resampler
/// (`DirectJPEG.draw`), those with alpha by libvips; all are written by our own packing loop.
extension ImageRenderer {
    /// Renders `bytes` through libvips inside `scope`, which owns every object it makes.
    ///
    /// - Parameters:
    ///   - bytes: the encoded image.
    ///   - scope: the libvips objects' owner and the source's name for errors.
    ///   - targets: the members to draw and where.
    ///   - formats: the targets' formats, then the family's other formats that shape the decode.
    ///   - decoding: set once the source is past its header checks and is decoded (the caller
    ///     counts the decodes of the render it keeps).
    /// - Returns: per-target content rectangles, the number of decodes and facts about the source.
    /// - Throws: `ImageTableError` for oversized, corrupt or unsupported sources and libvips failures.
    func renderWithVips(_ bytes: UnsafeRawBufferPointer, scope: VipsScope, _ targets: [RenderTarget],
                        formats: [TableFormat], decoding: inout Bool) throws(ImageTableError) -> RenderReport {
        let name = scope.sourceName
        // A memory source: libvips reads our copy of the bytes, never the file itself.
        var sourceObject: OpaquePointer?
        try scope.build("open the source", .decodeFailed) {
            sourceObject = cv_source_new_from_memory(bytes.baseAddress, bytes.count)
            if let sourceObject { _ = scope.own(sourceObject) }
            return sourceObject == nil ? -1 : 0
        }
        let source = sourceObject!
        let failOn = options.failOn.vips

        // 1. Header only: size, orientation, loader, colour. Nothing is decoded yet.
        let header = try scope.image("read the header", .decodeFailed) { cv_header_from_source(source, failOn) }
        let loader = scope.string(header, "vips-loader") ?? "unknown"
        let (pixels, overflow) = header.width.multipliedReportingOverflow(by: header.height)
        guard !overflow, pixels <= options.maxPixels else {
            throw ImageTableError(.tooManyPixels, "\(header.width)×\(header.height) is over the limit of \(options.maxPixels) pixels", path: name)
        }
        if loader.hasPrefix("gifload"), let frame = GIFStructure.firstFrame(bytes), frame.decoded < frame.pixels, !frame.badCode {
            // libnsgif draws the missing rows of such a frame, at every fail level, and says
            // nothing (a code its table does not hold it refuses itself, in its own words).
            throw ImageTableError(.truncated, "the image data ends early", path: name,
                                  cause: "the GIF's first frame's data ends after \(frame.decoded) of its \(frame.pixels) pixels")
        }
        let orientation = scope.int(header, "orientation").flatMap { (1...8).contains($0) ? $0 : nil } ?? 1
        let swaps = orientation >= 5
        let sw = swaps ? header.height : header.width, sh = swaps ? header.width : header.height
        let isCMYK = header.interpretation == CV_INTERPRETATION_CMYK
        let hasICC = scope.has(header, "icc-profile-data")

        let geometries = formats.map { MemberGeometry(sourceWidth: sw, sourceHeight: sh, format: $0) }
        let plan = RenderPlan(sourceWidth: sw, sourceHeight: sh, geometries: geometries, formats: formats)

        // 2. The one decode.
        decoding = true
        if drawsJPEGItself(loader: loader, header: header, isCMYK: isCMYK) {
            let decoded = try renderJPEGWithVips(scope, source: source, header: header, isCMYK: isCMYK, hasICC: hasICC,
                                                 orientation: orientation, plan: plan, geometries: geometries, targets: targets)
            let info = SourceInfo(width: sw, height: sh, loader: loader, orientation: orientation, hasAlpha: false, hasICCProfile: hasICC,
                                  isCMYK: isCMYK, decodedWidth: decoded.width, decodedHeight: decoded.height)
            return RenderReport(members: geometries.prefix(targets.count).map { MemberResult(contentRect: $0.contentRect) }, decodes: 1, source: info)
        }
        var decoded: VImage
        var thumbnailShrink: Double?
        // An 8-bit RGB profile without alpha is converted per member by a transform kept for the
        // process (ColourTransform), after resizing as vips_thumbnail's export_profile would,
        // but without building an lcms2 transform for every image.
        var colour: ColourTransform?
        if hasICC && !isCMYK && header.bands == 3 && header.format == CV_FORMAT_UCHAR && header.interpretation == CV_INTERPRETATION_sRGB,
           let profile = scope.blob(header, "icc-profile-data") {
            colour = profile.withUnsafeBytes { ColourTransform.toSRGB(from: $0) }
        }
        if isCMYK {
            let shrink: Int
            (decoded, shrink) = try decodeCMYK(scope, header: header, orientation: orientation, shrink: Self.jpegShrink(forScale: plan.decodeScale))
            // Its uniform scale, as a thumbnail's: vips_shrink rounds the size it gives.
            if shrink > 1 { thumbnailShrink = Double(shrink) }
        } else {
            let box = plan.decodeBox(sourceWidth: sw, sourceHeight: sh)
            let options = "fail_on=\(self.options.failOn.rawValue)"
            decoded = try scope.image("decode", .decodeFailed) { out in
                cv_thumbnail_source(source, out, Int32(box.width), Int32(box.height), options, hasICC && colour == nil ? "srgb" : nil)
            }
            // vips_thumbnail's own uniform scale (it fits inside the box, never enlarging).
            thumbnailShrink = max(1, Double(sw) / Double(box.width), Double(sh) / Double(box.height))
        }
        decoded = try toSRGB8(scope, decoded)
        let hasAlpha = decoded.bands == 4
        let (width, height) = (decoded.width, decoded.height)
        let info = SourceInfo(width: sw, height: sh, loader: loader, orientation: orientation, hasAlpha: hasAlpha,
                              hasICCProfile: hasICC, isCMYK: isCMYK, decodedWidth: width, decodedHeight: height)
        let report = RenderReport(members: geometries.prefix(targets.count).map { MemberResult(contentRect: $0.contentRect) }, decodes: 1, source: info)
        // The decoded image's scale from the upright source: the thumbnail's uniform scale when
        // its size agrees with it (it does, to rounding), else what the size says per axis.
        var baseScale = (x: Double(width) / Double(sw), y: Double(height) / Double(sh))
        if let shrink = thumbnailShrink, abs(Double(sw) / shrink - Double(width)) <= 1, abs(Double(sh) / shrink - Double(height)) <= 1 {
            baseScale = (1 / shrink, 1 / shrink)
        }

        // 3. Members: each group from the smallest uncropped intermediate ≥ 2× its size. Without
        // alpha, our resampler draws them as it draws JPEGs, its grids centred as libvips'
        // reduce centres them (an enlargement too, which vips_resize draws half a pixel right
        // and down), from the decode evaluated once into its raster; with alpha, libvips resizes
        // premultiplied floats from the decode copied to memory.
        if !hasAlpha {
            try DirectJPEG.draw(try scope.raster(of: decoded), scale: baseScale, extent: (Double(width), Double(height)),
                                orientation: 1, colour: colour, smartCrop: smartCropper(name: name), unscaledAsIs: true,
                                plan: plan, geometries: geometries, into: targets)
            return report
        }
        let base = try scope.copyToMemory("decode", .decodeFailed, decoded)
        let work = try scope.image("premultiply", .renderFailed) { cv_premultiply(base.pointer, $0) }
        let sources = plan.sources(decodedWidth: base.width, decodedHeight: base.height)
        let needed = plan.needed(drawn: targets.count, sources: sources)
        let reused = Set(sources.compactMap { $0 })
        var intermediates: [(image: VImage, x: Double, y: Double)?] = []
        for (gi, group) in plan.groups.enumerated() {
            guard needed[gi] else {
                intermediates.append(nil)
                continue
            }
            let from = sources[gi].map { intermediates[$0]! } ?? (work, baseScale.x, baseScale.y)
            var resized = try resize(scope, from, to: group)
            if reused.contains(gi) { resized = try scope.copyToMemory("resize", .renderFailed, resized) }
            intermediates.append((resized, group.scaleX, group.scaleY))

            let straight = try scope.image("unpremultiply", .renderFailed) { cv_unpremultiply(resized.pointer, $0) }
            // What the Swift loop reads is guaranteed here, whatever libvips did: the drawn size,
            // and 4 × Float per pixel.
            var cropped = try exactSize(scope, try crop(scope, straight, group), group.contentWidth, group.contentHeight)
            if cropped.format != CV_FORMAT_FLOAT {
                let input = cropped
                cropped = try scope.image("convert", .renderFailed) { cv_cast(input.pointer, $0, CV_FORMAT_FLOAT) }
            }
            guard cropped.bands == 4 else {
                throw ImageTableError(.renderFailed, "libvips produced \(cropped.bands) bands", path: name)
            }
            try scope.withPixels("render", .renderFailed, of: cropped) { buffer in
                let content = ContentPixels(base: buffer.baseAddress!, width: cropped.width, height: cropped.height, hasAlpha: true)
                precondition(buffer.count >= content.width * content.height * content.bytesPerPixel)
                for (ti, target) in targets.enumerated() where plan.groupOfTarget[ti] == gi {
                    PixelWriter.write(content, placement: geometries[ti].placement, format: target.format,
                                      into: target.pixels.baseAddress!, bytesPerRow: target.bytesPerRow)
                }
            }
        }
        return report
    }

    /// CMYK of another format than JPEG (a TIFF): libvips 8.14.1's thumbnail mishandles CMYK with
    /// an export profile, so load, transform with the embedded profile (or libvips' CMYK profile)
    /// to sRGB, block-shrink by `shrink` (1, 2, 4 or 8: the DCT scale a JPEG would be decoded at,
    /// leaving at least a factor of two to the resampler), then auto-rotate ourselves. (CMYK
    /// JPEGs take `renderJPEGWithVips`.) The shrink streams: a CMYK TIFF of 12000² held the whole
    /// converted image, 1.3 GB in a worker, where `vipsthumbnail` needs 84 MB. Not with alpha: a
    /// block mean of straight colour darkens the edges of transparent areas.
    ///
    /// - Returns: the image, and the shrink applied (1 when none).
    fileprivate func decodeCMYK(_ scope: VipsScope, header: VImage, orientation: Int,
                                shrink: Int) throws(ImageTableError) -> (VImage, shrink: Int) {
        var srgb = try scope.image("convert CMYK to sRGB", .decodeFailed) { cv_icc_transform_cmyk_to_srgb(header.pointer, $0) }
        var applied = 1
        if shrink > 1, srgb.bands == 3, srgb.width >= shrink * 4, srgb.height >= shrink * 4 {
            let full = srgb
            srgb = try scope.image("shrink", .decodeFailed) { cv_shrink(full.pointer, $0, Int32(shrink)) }
            applied = shrink
        }
        let decoded = try scope.copyToMemory("decode", .decodeFailed, srgb)
        guard orientation != 1 else { return (decoded, applied) }
        return (try scope.image("rotate upright", .decodeFailed) { cv_autorot(decoded.pointer, $0) }, applied)
    }

    /// libvips' own rule (vips_thumbnail): block-shrink in the decoder, leaving at least a
    /// factor of two for the resampling that follows.
    static func jpegShrink(forScale scale: Double) -> Int {
        let shrink = 1 / max(scale, 1e-9)
        return shrink >= 16 ? 8 : shrink >= 8 ? 4 : shrink >= 4 ? 2 : 1
    }

    /// The same for a JPEG of `width` × `height`, halved until both sides keep at least four
    /// decoded pixels. A side's last block is padded by repeating its edge, and the decoded pixel
    /// that covers it averages the padding in: on a thin image that pixel is the whole side (5
    /// columns at 1/8 came out leaning to the last one, 16.8 mean off the whole image), and
    /// libvips' `jpegload`, which rounds a shrunk side down, made it 0 pixels, which libvips 8.14
    /// aborts the process on (an assertion).
    static func jpegShrink(forScale scale: Double, width: Int, height: Int) -> Int {
        var shrink = jpegShrink(forScale: scale)
        while shrink > 1 && (width < 4 * shrink || height < 4 * shrink) { shrink /= 2 }
        return shrink
    }

    /// 8-bit sRGB, 3 bands or 4 with alpha: grey, 16-bit and other spaces converted.
    func toSRGB8(_ scope: VipsScope, _ image: VImage) throws(ImageTableError) -> VImage {
        var image = image
        if image.interpretation != CV_INTERPRETATION_sRGB || image.bands < 3 {
            image = try scope.image("convert to sRGB", .decodeFailed) { cv_colourspace(image.pointer, $0, CV_INTERPRETATION_sRGB) }
        }
        if image.format != CV_FORMAT_UCHAR {
            image = try scope.image("convert to 8 bits", .decodeFailed) { cv_cast(image.pointer, $0, CV_FORMAT_UCHAR) }
        }
        guard image.bands == 3 || image.bands == 4 else {
            throw ImageTableError(.unsupportedFormat, "images with \(image.bands) bands after conversion to sRGB are not supported", path: scope.sourceName)
        }
        return image
    }

    /// Resizes `from` (at scale `x`, `y` of the upright source) to the group's scale, then to
    /// exactly its size (libvips rounds a fractional edge pixel either way).
    fileprivate func resize(_ scope: VipsScope, _ from: (image: VImage, x: Double, y: Double), to group: RenderGroup) throws(ImageTableError) -> VImage {
        let image = from.image
        guard image.width != group.resizedWidth || image.height != group.resizedHeight else { return image }
        // An axis already at its size is scaled by exactly 1: computed, the scale can come out a
        // rounding above it (1.0000000000000002), which libvips' resize takes for an enlargement
        // and draws half a pixel right and down.
        func scale(_ ratio: Double, _ size: Int, _ target: Int) -> Double {
            size == target || abs(ratio - 1) < 1e-9 ? 1 : ratio
        }
        let h = scale(group.scaleX / from.x, image.width, group.resizedWidth)
        let v = scale(group.scaleY / from.y, image.height, group.resizedHeight)
        let resized = try scope.image("resize", .renderFailed) { cv_resize(image.pointer, $0, h, v) }
        return try exactSize(scope, resized, group.resizedWidth, group.resizedHeight)
    }

    fileprivate func exactSize(_ scope: VipsScope, _ image: VImage, _ width: Int, _ height: Int) throws(ImageTableError) -> VImage {
        var image = image
        if image.width < width || image.height < height {
            let w = max(width, image.width), h = max(height, image.height)
            image = try scope.image("resize", .renderFailed) { cv_embed_copy(image.pointer, $0, 0, 0, Int32(w), Int32(h)) }
        }
        if image.width > width || image.height > height {
            // Keep the top-left origin: the excess is a rounded fraction of an edge pixel.
            image = try scope.image("resize", .renderFailed) {
                cv_extract_area(image.pointer, $0, 0, 0, Int32(width), Int32(height))
            }
        }
        return image
    }

    fileprivate func crop(_ scope: VipsScope, _ image: VImage, _ group: RenderGroup) throws(ImageTableError) -> VImage {
        guard let strategy = group.crop else { return image }
        let w = group.contentWidth, h = group.contentHeight
        switch strategy {
        case .centre:
            let x = (image.width - w) / 2, y = (image.height - h) / 2
            return try scope.image("crop", .renderFailed) { cv_extract_area(image.pointer, $0, Int32(x), Int32(y), Int32(w), Int32(h)) }
        case .attention, .entropy:
            let interesting = strategy == .attention ? CV_INTERESTING_ATTENTION : CV_INTERESTING_ENTROPY
            return try scope.image("crop", .renderFailed) { cv_smartcrop(image.pointer, $0, Int32(w), Int32(h), interesting) }
        }
    }
}

extension FailLevel {
    var vips: CVFailOn {
        switch self {
        case .truncated: CV_FAIL_ON_TRUNCATED
        case .error: CV_FAIL_ON_ERROR
        case .warning: CV_FAIL_ON_WARNING
        }
    }
}
