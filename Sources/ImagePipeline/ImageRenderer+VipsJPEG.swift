import CVips
import ImageTableCore

/// JPEGs the direct path declines but whose members it could draw: CMYK, a profile lcms2
/// cannot use, a grey JPEG with a grey profile, or data libjpeg warns about. libvips decodes them (shrink-on-load, its colour management, its
/// words for damage) and our Lanczos-3 resizes, as for any plain JPEG.
///
/// `vips_thumbnail` would resize the shrunk decode as if it were the whole image: where a side
/// is not a multiple of the shrink, libvips' `jpegload` drops the last partial block (1601
/// pixels at 1/4 decode to 400, which cover 1600), and `vips_resize` centres its output on the
/// pixels it has, so the image came out stretched by a fraction of a pixel: 1.6–5.8 mean off
/// the whole image resized, for a 1601×1067 photo into 64×64 to 150×150. Here the decoded
/// pixels start where the source does and reach its size divided by the shrink, as in the
/// direct path.
extension ImageRenderer {
    /// Whether ``renderJPEGWithVips(_:source:header:isCMYK:hasICC:orientation:plan:geometries:targets:)``
    /// applies: a JPEG of three bands, CMYK, or grey.
    func drawsJPEGItself(loader: String, header: VImage, isCMYK: Bool) -> Bool {
        loader.hasPrefix("jpegload") && (isCMYK || (header.bands == 3 && header.interpretation == CV_INTERPRETATION_sRGB)
            || (header.bands == 1 && header.interpretation == CV_INTERPRETATION_B_W))
    }

    /// Whether the embedded profile is for the image's colour space: `RGB ` for three bands,
    /// `GRAY` for one, `CMYK` for CMYK (bytes 16–19 of a profile's header). Pillow keeps an
    /// image's profile when it turns it grey, so a grey JPEG carrying an sRGB profile is common;
    /// libvips 8.14 refuses the pair ("unable to load or find any compatible input profile"),
    /// and took a grey profile on an RGB image for one of five bands.
    func profileFits(_ scope: VipsScope, header: VImage, isCMYK: Bool) -> Bool {
        guard let profile = scope.blob(header, "icc-profile-data"), profile.count >= 20 else { return false }
        let space = String(decoding: profile[16..<20], as: UTF8.self)
        return space == (isCMYK ? "CMYK" : header.bands == 1 ? "GRAY" : "RGB ")
    }

    /// libvips' `smartcrop` of a member's resized image, for the direct path's resampler: the
    /// crop `vips_thumbnail` makes of its own resize, on our resize. Each call opens and
    /// releases its own scope.
    ///
    /// - Parameter name: the source's name for errors.
    func smartCropper(name: String) -> DirectJPEG.SmartCrop {
        { (image: Raster, width: Int, height: Int, strategy: CropStrategy) throws(ImageTableError) -> Raster in
            try PipelineRuntime.start()
            let scope = VipsScope(sourceName: name)
            defer { scope.release() }
            let count = image.width * image.height * 3
            let wrapped = try scope.image(copying: Bitmap(width: image.width, height: image.height, bands: 3, pixels: Array(image.bytes.prefix(count))))
            let interesting = strategy == .entropy ? CV_INTERESTING_ENTROPY : CV_INTERESTING_ATTENTION
            let cropped = try scope.image("crop", .renderFailed) { cv_smartcrop(wrapped.pointer, $0, Int32(width), Int32(height), interesting) }
            guard cropped.width == width, cropped.height == height else {
                throw ImageTableError(.renderFailed, "libvips cropped to \(cropped.width)×\(cropped.height), not \(width)×\(height)", path: name)
            }
            return try scope.raster(of: cropped, step: "crop", code: .renderFailed)
        }
    }

    /// Decodes a JPEG through libvips at its DCT scale, converts it to 8-bit sRGB there (an
    /// embedded profile, or libvips' CMYK profile), and draws every member with the direct
    /// path's resampler.
    ///
    /// Colour is converted before resizing, where `vips_thumbnail` converts an RGB profile after
    /// it: the resampler works on sRGB pixels only, and the two orders differ by less than a
    /// level on average (`SourceTests`).
    ///
    /// - Parameters:
    ///   - scope: the libvips objects' owner and the source's name for errors.
    ///   - source: the libvips source of the bytes.
    ///   - header: the image opened for its header (the decode itself when the shrink is 1).
    ///   - isCMYK: whether the JPEG is CMYK.
    ///   - hasICC: whether it has an embedded profile.
    ///   - orientation: its EXIF orientation, 1…8.
    ///   - plan: the render plan of the upright source.
    ///   - geometries: each format's placement.
    ///   - targets: the members to draw and where.
    /// - Returns: the decoded image's size, upright.
    /// - Throws: `ImageTableError` `decode-failed` with libvips' message.
    func renderJPEGWithVips(_ scope: VipsScope, source: OpaquePointer, header: VImage, isCMYK: Bool, hasICC: Bool,
                            orientation: Int, plan: RenderPlan, geometries: [MemberGeometry],
                            targets: [RenderTarget]) throws(ImageTableError) -> (width: Int, height: Int) {
        let shrink = Self.jpegShrink(forScale: plan.decodeScale, width: header.width, height: header.height)
        var image = header
        if shrink > 1 {
            image = try scope.image("decode", .decodeFailed) { cv_jpeg_from_source_shrunk(source, options.failOn.vips, Int32(shrink)) }
        }
        // A profile for another colour space is left out, as libvips leaves out a CMYK or Lab
        // profile on an RGB image ("profile incompatible with image"; for CMYK it says so
        // itself, and takes its own CMYK profile).
        let profile = hasICC && profileFits(scope, header: header, isCMYK: isCMYK)
        if hasICC && !profile && !isCMYK {
            scope.warn("the embedded ICC profile is not for \(header.bands == 1 ? "grey" : "RGB") images; it is ignored")
        }
        if isCMYK || profile {
            let input = image
            image = try scope.image("convert to sRGB", .decodeFailed) {
                isCMYK ? cv_icc_transform_cmyk_to_srgb(input.pointer, $0) : cv_icc_transform_embedded_to_srgb(input.pointer, $0)
            }
        }
        image = try toSRGB8(scope, image)
        guard image.bands == 3 else {
            throw ImageTableError(.unsupportedFormat, "JPEGs with \(image.bands) bands after conversion to sRGB are not supported",
                                  path: scope.sourceName)
        }
        let (width, height) = (image.width, image.height)
        try DirectJPEG.draw(try scope.raster(of: image), storedWidth: header.width, storedHeight: header.height, shrink: shrink, orientation: orientation,
                            smartCrop: smartCropper(name: scope.sourceName), plan: plan, geometries: geometries, into: targets)
        return orientation >= 5 ? (height, width) : (width, height)
    }
}

extension VipsScope {
    /// The pixels of an 8-bit, 3-band image as a raster for our resampler, evaluated outside the
    /// global lock.
    ///
    /// - Parameters:
    ///   - image: the image; a lazy one is evaluated here, once.
    ///   - step: what the evaluation does, for a failure's message ("decode", "crop").
    ///   - code: the error code of such a failure.
    /// - Throws: `code` when libvips fails; `render-failed` when the image is not 8-bit RGB.
    func raster(of image: VImage, step: String = "decode", code: ImageTableError.Code = .decodeFailed) throws(ImageTableError) -> Raster {
        let (width, height) = (image.width, image.height)
        guard image.format == CV_FORMAT_UCHAR, image.bands == 3 else {
            throw ImageTableError(.renderFailed, "could not \(step): libvips made \(image.bands) bands of format \(image.format.rawValue)",
                                  path: sourceName)
        }
        return try withPixels(step, code, of: image) { pixels in
            var raster = Raster(uninitializedWidth: width, height: height, channels: 3)
            precondition(pixels.count >= width * height * 3)
            raster.bytes.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: pixels[0..<(width * height * 3)])) }
            return raster
        }
    }
}
