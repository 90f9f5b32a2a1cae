import CLibvips
import Foundation
import ImagePipeline
import ImageTableCore

/// Fixtures made with libvips itself: re-encodings, profiles, odd shapes, grey and alpha
/// variants of the corpus photos, and JPEG marker surgery for ICC profiles.
extension Reference {
    /// Writes a transformed copy of `path` (to an ICC profile, e.g. "cmyk" or "p3") as JPEG,
    /// progressive if asked.
    static func jpegWithProfile(_ path: String, profile: String, to output: String, progressive: Bool = false) throws {
        try transformed(path, { cvips_icc_transform_to($0, $1, profile) }) {
            progressive ? cvips_jpegsave_progressive($0, output, 90) : cvips_jpegsave($0, output, 90)
        }
    }

    /// Loads `path`, applies `operation` (a libvips call: 0 on success, its result in the second
    /// argument) and saves the result with `save`, releasing both images.
    private static func transformed(_ path: String,
                                    _ operation: (UnsafeMutablePointer<VipsImage>, UnsafeMutablePointer<UnsafeMutablePointer<VipsImage>?>) -> Int32,
                                    save: (UnsafeMutablePointer<VipsImage>) -> Int32) throws {
        try PipelineRuntime.withLibvips {
            guard let image = cvips_load_file(path) else { throw referenceError() }
            defer { g_object_unref(image) }
            var out: UnsafeMutablePointer<VipsImage>?
            guard operation(image, &out) == 0, let out else { throw referenceError() }
            defer { g_object_unref(out) }
            guard save(out) == 0 else { throw referenceError() }
        }
    }

    /// Writes `path` decoded at full size and converted to sRGB with its embedded profile (CMYK
    /// included) as PNG: the whole image, for references of colour-managed sources.
    static func sRGB(_ path: String, to output: String) throws {
        try transformed(path, { cvips_icc_transform_to($0, $1, "srgb") }) { cvips_pngsave($0, output) }
    }

    /// Writes `path` resized to exactly `width` × `height` (stretched) in the format `output`'s
    /// suffix names: thin and odd-shaped fixtures.
    static func stretched(_ path: String, width: Int, height: Int, to output: String) throws {
        try PipelineRuntime.withLibvips {
            var out: UnsafeMutablePointer<VipsImage>?
            guard cvips_reference_thumbnail(path, &out, Int32(width), Int32(height), VIPS_SIZE_FORCE, VIPS_INTERESTING_NONE) == 0,
                  let image = out else { throw referenceError() }
            defer { g_object_unref(image) }
            guard cvips_write_to_file(image, output) == 0 else { throw referenceError() }
        }
    }

    /// `jpeg` with `segment` (a whole APP2 marker segment, from `FF E2`) inserted after its SOI.
    static func inserting(segment: Data, into jpeg: Data) -> Data {
        var out = jpeg
        out.insert(contentsOf: segment, at: out.startIndex + 2)
        return out
    }

    /// An APP2 ICC_PROFILE segment (chunk 1 of 1) holding `payload`.
    static func iccSegment(_ payload: Data) -> Data {
        let body = Data("ICC_PROFILE\0".utf8) + Data([1, 1]) + payload
        return Data([0xFF, 0xE2, UInt8((body.count + 2) >> 8), UInt8((body.count + 2) & 0xFF)]) + body
    }

    /// A minimal ICC v2 profile of a grey display whose tone curve is the power `gamma` (libvips
    /// 8.14 has no grey profile of its own): header, description, white point, `kTRC`.
    static func greyProfile(gamma: Double) -> Data {
        func be32(_ v: Int) -> Data { Data([UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]) }
        func s15(_ v: Double) -> Data { be32(Int((v * 65536).rounded())) }
        let d50 = s15(0.9642) + s15(1.0) + s15(0.8249)
        let text = Data("grey \(gamma)\0".utf8)
        let tags: [(String, Data)] = [
            ("desc", Data("desc".utf8) + be32(0) + be32(text.count) + text + Data(count: 4 + 4 + 3 + 67)),
            ("wtpt", Data("XYZ ".utf8) + be32(0) + d50),
            ("kTRC", Data("curv".utf8) + be32(0) + be32(1) + Data([UInt8(Int(gamma * 256) >> 8), UInt8(Int(gamma * 256) & 0xFF), 0, 0])),
            ("cprt", Data("text".utf8) + be32(0) + Data("none\0".utf8)),
        ]
        var table = Data(), data = Data()
        let start = 128 + 4 + 12 * tags.count
        for (signature, body) in tags {
            while (start + data.count) % 4 != 0 { data.append(0) }
            table += Data(signature.utf8) + be32(start + data.count) + be32(body.count)
            data += body
        }
        while data.count % 4 != 0 { data.append(0) }
        var header = be32(start + data.count) + Data(count: 4) + be32(0x0210_0000) + Data("mntrGRAYXYZ ".utf8) + Data(count: 12)
        header += Data("acsp".utf8) + Data(count: 4 * 4 + 8 + 4) + d50 + Data(count: 4 + 16 + 28)
        precondition(header.count == 128)
        return header + be32(tags.count) + table + data
    }

    /// The first APP2 ICC_PROFILE segment of a JPEG file, whole.
    static func iccSegment(of path: String) throws -> Data {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        var i = bytes.startIndex + 2
        while i + 4 <= bytes.endIndex, bytes[i] == 0xFF {
            let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            if bytes[i + 1] == 0xE2, bytes[(i + 4)...].starts(with: Data("ICC_PROFILE".utf8)) { return bytes[i..<(i + 2 + length)] }
            i += 2 + length
        }
        throw ImageTableError(.renderFailed, "no ICC profile in \(path)")
    }

    /// Writes `path` at most `maxSize` pixels a side as a progressive JPEG of quality 85, chroma
    /// not subsampled; `scratch` is a PNG path for the resized image.
    static func progressiveJPEG(_ path: String, maxSize: Int, to output: String, scratch: String) throws {
        try convert(path, to: scratch, maxSize: maxSize)
        try PipelineRuntime.withLibvips {
            guard let image = cvips_load_file(scratch) else { throw referenceError() }
            defer { g_object_unref(image) }
            guard cvips_jpegsave_progressive(image, output, 85) == 0 else { throw referenceError() }
        }
    }

    /// Writes `path` turned grey (one band) as a JPEG of quality 85.
    static func greyJPEG(_ path: String, to output: String) throws {
        try transformed(path, { cvips_colourspace($0, $1, VIPS_INTERPRETATION_B_W) }) { cvips_jpegsave($0, output, 85) }
    }

    /// Rewrites the PNG at `path` with an opaque alpha band added (its profile kept).
    static func addAlpha(_ path: String) throws {
        try withBand(path, value: 255, to: path + ".tmp.png")
        guard rename(path + ".tmp.png", path) == 0 else { throw referenceError() }
    }

    /// Writes `path` with a band of `value` added, in the format `output`'s suffix names (a TIFF
    /// keeps any number of bands).
    static func withBand(_ path: String, value: Double, to output: String) throws {
        try transformed(path, { cvips_bandjoin_const1($0, $1, value) }) { cvips_write_to_file($0, output) }
    }

    /// Writes `path` re-encoded in the format `output`'s suffix names.
    /// With `maxSize`, the image is first thumbnailed to fit inside `maxSize` × `maxSize`.
    static func convert(_ path: String, to output: String, maxSize: Int? = nil) throws {
        try PipelineRuntime.withLibvips {
            var out: UnsafeMutablePointer<VipsImage>?
            if let maxSize {
                guard cvips_reference_thumbnail(path, &out, Int32(maxSize), Int32(maxSize), VIPS_SIZE_DOWN, VIPS_INTERESTING_NONE) == 0 else {
                    throw referenceError()
                }
            } else {
                out = cvips_load_file(path)
            }
            guard let image = out else { throw referenceError() }
            defer { g_object_unref(image) }
            guard cvips_write_to_file(image, output) == 0 else { throw referenceError() }
        }
    }

    /// Writes `path` re-encoded as PNG.
    static func png(_ path: String, to output: String) throws {
        try PipelineRuntime.withLibvips {
            guard let image = cvips_load_file(path) else { throw referenceError() }
            defer { g_object_unref(image) }
            guard cvips_pngsave(image, output) == 0 else { throw referenceError() }
        }
    }
}
