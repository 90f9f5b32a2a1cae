import CJPEG
import ImageTableCore

/// libjpeg(-turbo) called directly, for JPEGs that need nothing libvips adds: 8-bit greyscale,
/// YCbCr or RGB, with or without an ICC profile (which the caller converts with
/// ``ColourTransform``). Header first, then one decode at 1/1, 1/2, 1/4 or 1/8 (the DCT scaling
/// libvips calls shrink-on-load) into RGB.
///
/// The decoder never decides what damage means: any error or warning makes it give up (`nil`),
/// and the renderer hands the source to libvips, which reports it exactly as it always has.
package final class JPEGDecoder {
    private let decoder: UnsafeMutablePointer<cjpeg_decoder>
    /// The encoded bytes; libjpeg reads them in place, so they must outlive the decoder.
    private let bytes: UnsafeRawBufferPointer

    /// The stored (not yet upright) size.
    let width: Int
    let height: Int
    /// The EXIF orientation, 1…8.
    let orientation: Int
    /// The embedded ICC profile, its chunks joined; `nil` when there is none.
    let iccProfile: [UInt8]?
    /// 1 for greyscale, 3 for YCbCr or RGB.
    let components: Int

    /// The most scans a progressive JPEG may have, on either path (`CJPEG_MAX_SCANS`).
    static let maxScans = Int(CJPEG_MAX_SCANS)

    /// Reads the header, or returns `nil` when the direct path does not apply: not a JPEG, a
    /// damaged header, CMYK or another colour space, an ICC profile whose chunks do not add up.
    ///
    /// - Parameters:
    ///   - bytes: the encoded image; must stay valid while the decoder lives.
    ///   - name: what errors name.
    ///   - maxPixels: the most pixels a source may have.
    /// - Throws: ``ImageTableError`` `too-many-pixels` over `maxPixels`, then `truncated` when the
    ///   header claims more blocks than the data can hold (``fitsItsData(blocks:arithmetic:bytes:)``),
    ///   then `decode-failed` for a progressive JPEG of more than ``maxScans`` scans
    ///   (``JPEGScans``), whichever path would decode it.
    init?(_ bytes: UnsafeRawBufferPointer, name: String = "", maxPixels: Int = .max) throws(ImageTableError) {
        guard bytes.count > 3, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF,
              let decoder = cjpeg_new() else { return nil }
        self.decoder = decoder
        self.bytes = bytes
        let data = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
        guard cjpeg_read_header(decoder, data, UInt(bytes.count)) == 0 else {
            cjpeg_free(decoder)
            return nil
        }
        let (w, h) = (Int(cjpeg_width(decoder)), Int(cjpeg_height(decoder)))
        let (pixels, overflow) = w.multipliedReportingOverflow(by: h)
        guard !overflow, pixels <= maxPixels else {
            cjpeg_free(decoder)
            throw ImageTableError(.tooManyPixels, "\(w)×\(h) is over the limit of \(maxPixels) pixels", path: name)
        }
        let blocks = cjpeg_blocks(decoder)
        guard Self.fitsItsData(blocks: blocks, arithmetic: cjpeg_arithmetic(decoder) != 0, bytes: bytes.count) else {
            cjpeg_free(decoder)
            throw ImageTableError(.truncated, "the image data ends early", path: name,
                                  cause: "the header claims \(w)×\(h) pixels, \(blocks) blocks, more than its \(bytes.count) bytes can hold")
        }
        if decoder.pointee.cinfo.progressive_mode != 0, JPEGScans.count(in: bytes, upTo: Self.maxScans) > Self.maxScans {
            cjpeg_free(decoder)
            throw ImageTableError(.decodeFailed, "could not decode", path: name, cause: "libjpeg: more than \(Self.maxScans) scans")
        }
        guard decoder.pointee.warnings == 0, case let components = Int(cjpeg_plain_colour(decoder)), components != 0 else {
            cjpeg_free(decoder)
            return nil
        }
        if cjpeg_has_icc(decoder) != 0 {
            var length: UInt32 = 0
            let profile = cjpeg_icc_profile(decoder, &length)
            defer { cjpeg_free_icc(profile) }
            guard let profile, decoder.pointee.warnings == 0 else {
                cjpeg_free(decoder)
                return nil
            }
            iccProfile = Array(UnsafeBufferPointer(start: profile, count: Int(length)))
        } else {
            iccProfile = nil
        }
        self.components = components
        width = Int(cjpeg_width(decoder))
        height = Int(cjpeg_height(decoder))
        var length: UInt32 = 0
        if let exif = cjpeg_exif(decoder, &length) {
            orientation = ExifOrientation.parse(UnsafeRawBufferPointer(start: exif, count: Int(length)))
        } else {
            orientation = 1
        }
    }

    deinit { cjpeg_free(decoder) }

    /// Whether `bytes` of a JPEG can hold `blocks` 8×8 blocks: a Huffman code is a bit at least,
    /// so each block costs a bit at least in its first scan. Arithmetic coding has no such
    /// floor (`jpegtran -arithmetic` makes 16000×16000 of white 128 bytes, a page of text of
    /// 9000×9000 412 KB, both good files), so it is held to the pixel limit alone.
    ///
    /// A progressive or multi-scan JPEG has libjpeg (libvips' too) allocate 128 bytes of
    /// coefficients for every block before reading a scan: 2,873 bytes claiming 16383×16383
    /// took a worker to 1.6 GB before it failed as truncated.
    ///
    /// - Parameters:
    ///   - blocks: the blocks the header's components cover.
    ///   - arithmetic: whether the JPEG is arithmetic-coded.
    ///   - bytes: the file's size.
    package static func fitsItsData(blocks: UInt64, arithmetic: Bool, bytes: Int) -> Bool {
        arithmetic || blocks <= UInt64(bytes) * 8
    }

    /// What a decode gave.
    enum Decoded {
        /// Every row, with no warning.
        case pixels(Raster)
        /// The data ended before the image did: libjpeg's "Premature end of JPEG file" or
        /// "premature end of data segment", which it only warns about, padding the rest with
        /// grey. `message` is its text.
        case truncated(message: String)
        /// An error, or a warning about damage: libvips decodes it again and says what is wrong.
        case declined
        /// More scans than anyone writes (libvips would go over every block for each of them):
        /// refused, not handed on. `message` says why.
        case refused(message: String)
        /// Every row, and then a warning as libjpeg read on to the end of the file ("15
        /// extraneous bytes before marker 0xd9", damage in the last scan): libvips, which stops
        /// at the last row, never sees it. `message` is its text.
        case warnedAtTheEnd(Raster, message: String)
    }

    /// Decodes at 1/`shrink` into an RGB raster (stored orientation).
    ///
    /// - Parameter shrink: 1, 2, 4 or 8.
    func decode(shrink: Int) -> Decoded {
        // A libjpeg error: the scan limit's refusal, or damage for libvips to report.
        func failed() -> Decoded {
            decoder.pointee.too_many_scans != 0 ? .refused(message: Self.text(decoder.pointee.error)) : .declined
        }
        guard cjpeg_start(decoder, Int32(shrink)) == 0 else { return failed() }
        // libjpeg writes every row, padding a file that ends early with grey; a decode that
        // fails midway returns nothing, so no byte of this is ever read unwritten.
        var raster = Raster(uninitializedWidth: Int(cjpeg_output_width(decoder)), height: Int(cjpeg_output_height(decoder)), channels: 3)
        let rowBytes = raster.rowBytes
        let status = raster.bytes.withUnsafeMutableBufferPointer { pixels in
            cjpeg_read_rows(decoder, pixels.baseAddress!, rowBytes)
        }
        if decoder.pointee.too_many_scans != 0 { return failed() }
        if decoder.pointee.premature_end != 0 { return .truncated(message: Self.text(decoder.pointee.premature_warning)) }
        guard status == 0, decoder.pointee.warnings == 0 else { return .declined }
        guard cjpeg_finish(decoder) == 0 else { return failed() }
        if decoder.pointee.premature_end != 0 { return .truncated(message: Self.text(decoder.pointee.premature_warning)) }
        return decoder.pointee.warnings == 0 ? .pixels(raster) : .warnedAtTheEnd(raster, message: Self.text(decoder.pointee.first_warning))
    }

    /// The first warning libjpeg gives reading a JPEG that libvips decoded without one, to its
    /// end marker: damage in the last scan that no row showed ("Corrupt JPEG data: 15 extraneous
    /// bytes before marker 0xd9"), which libvips, stopping at the last row, never reads. The
    /// direct path learns it from its own decode (``Decoded/warnedAtTheEnd(_:message:)``); this
    /// is for the JPEGs it leaves to libvips (CMYK, profiles it does not convert), read again at
    /// 1/8 in their own colour space, a row at a time.
    ///
    /// - Parameter bytes: the encoded image.
    /// - Returns: the first warning's text, or the error's where libjpeg gave up before the end
    ///   marker with no warning ("Unsupported marker type 0x02", a second SOF after the scan:
    ///   worse than the warnings this refuses); `nil` when the file reads to its end cleanly.
    static func warningAtTheEnd(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard bytes.count > 3, let decoder = cjpeg_new() else { return nil }
        defer { cjpeg_free(decoder) }
        guard cjpeg_read_header(decoder, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt(bytes.count)) == 0 else { return nil }
        let status = cjpeg_read_to_end(decoder)
        if decoder.pointee.warnings > 0 { return text(decoder.pointee.first_warning) }
        return status == -1 ? text(decoder.pointee.error) : nil
    }

    /// One of the shim's fixed-size message buffers as text, up to its terminating zero.
    private static func text<Buffer>(_ buffer: Buffer) -> String {
        withUnsafeBytes(of: buffer) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
