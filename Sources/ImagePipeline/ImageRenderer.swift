import CVips
import Foundation
import ImageTableCore
import Synchronization

/// Renders one source image into the slots of several member formats, decoding it once.
///
/// ```swift
/// let renderer = ImageRenderer()
/// let report = try renderer.render(.file("photos/cat.jpg"), into: [
///     RenderTarget(format: large, reservation: slotA),   // TableFormat: 150×150 32BitBGRA
///     RenderTarget(format: small, reservation: slotB),   // 75×75 16BitBGR, cornerRadius 8
/// ])
/// // report.members[i].contentRect goes into each entry's record.
/// ```
///
/// One call reads the header (refusing images over `DecodeOptions.maxPixels` before any
/// decoding), decodes once with shrink-on-load to the smallest size that covers every member,
/// auto-rotated by EXIF orientation and converted to 8-bit sRGB (ICC profiles and CMYK
/// included), then derives each member from the smallest uncropped intermediate at least twice
/// its size and writes it straight into its destination in the member's pixel style. See
/// `docs/PIPELINE.md`.
///
/// Thread safety: a renderer may be used from any number of threads at once. Every libvips call
/// that builds or frees objects runs under one process-wide lock; decoding and resampling run
/// outside it, on libvips' threads. The call is synchronous and blocks its thread for the whole
/// render (tens of milliseconds for a photo).
public final class ImageRenderer: Sendable {
    /// Limits and strictness.
    public let options: DecodeOptions
    /// Decodes so far; the libvips path (ImageRenderer+Vips.swift) counts its own.
    let decodes = Atomic<Int>(0)

    /// Creates a renderer. Cheap: libvips starts on the first render.
    ///
    /// - Parameter options: limits and strictness.
    public init(options: DecodeOptions = DecodeOptions()) {
        self.options = options
        directJPEG = true
    }

    /// Whether JPEGs take the direct path (libjpeg, our own resampler, lcms2 for a profile) instead of
    /// libvips; tests and benchmarks turn it off to compare the two.
    package let directJPEG: Bool

    /// A renderer with the direct JPEG path on or off (tests and benchmarks).
    package init(options: DecodeOptions = DecodeOptions(), directJPEG: Bool) {
        self.options = options
        self.directJPEG = directJPEG
    }

    /// How many times this renderer has decoded a source's pixels (one per ``render(_:into:planningWith:)``
    /// that got past the header checks, whatever the number of members). Summaries show it; tests
    /// use it to prove one decode per source.
    public var decodeCount: Int { decodes.load(ordering: .relaxed) }

    /// Renders `source` into every target.
    ///
    /// On success every destination holds the member's pixels in its style, row padding zeroed.
    /// On failure the destinations' contents are unspecified: abandon those slots.
    ///
    /// - Parameters:
    ///   - source: the image's file or bytes.
    ///   - targets: the members to draw and where; may be empty (the source is then only checked
    ///     and decoded).
    ///   - planned: more formats of the family that are not drawn now but shape the decode as
    ///     when they are (see ``render(bytes:name:into:planningWith:)``); none by default.
    /// - Returns: per-target content rectangles, the number of decodes and facts about the source.
    /// - Throws: `ImageTableError` naming the source, for unreadable, empty, oversized, corrupt,
    ///   truncated or unsupported sources and for invalid targets.
    public func render(_ source: SourceImage, into targets: [RenderTarget],
                       planningWith planned: [TableFormat] = []) throws(ImageTableError) -> RenderReport {
        let name = source.name
        try validate(targets, name: name)
        switch source {
        case .file(let path):
            let read = try SourceRead(path: path, maxBytes: options.maxSourceBytes, fingerprinting: false, keepingBytes: true)
            return try render(bytes: read.bytes ?? [], name: name, into: targets, planningWith: planned)
        case .data(let data, _):
            guard !data.isEmpty else { throw ImageTableError(.empty, "the source has no bytes", path: name) }
            guard data.count <= options.maxSourceBytes else {
                throw ImageTableError(.sourceTooLarge, "\(data.count) bytes is over the limit of \(options.maxSourceBytes)", path: name)
            }
            return try data.withUnsafeBytes { raw in
                Result { () throws(ImageTableError) in try render(raw, name: name, targets, planned: planned) }
            }.get()
        }
    }

    /// Renders a source's bytes, already read (a worker reads each source once, fingerprints
    /// those very bytes and renders them).
    ///
    /// - Parameters:
    ///   - bytes: the encoded image.
    ///   - name: what errors name, such as the file's path.
    ///   - targets: the members to draw and where.
    ///   - planned: more formats of the family that are not drawn now but shape the decode as
    ///     when they are: a member's pixels then depend only on its source and its family's
    ///     formats, not on which of them a call happens to draw.
    /// - Returns: per-target content rectangles, the number of decodes and facts about the source.
    /// - Throws: as ``render(_:into:planningWith:)``.
    public func render(bytes: [UInt8], name: String, into targets: [RenderTarget],
                       planningWith planned: [TableFormat] = []) throws(ImageTableError) -> RenderReport {
        try validate(targets, name: name)
        guard !bytes.isEmpty else { throw ImageTableError(.empty, "the source has no bytes", path: name) }
        return try bytes.withUnsafeBytes { raw in
            Result { () throws(ImageTableError) in try render(raw, name: name, targets, planned: planned) }
        }.get()
    }

    private func validate(_ targets: [RenderTarget], name: String) throws(ImageTableError) {
        for (i, t) in targets.enumerated() {
            if let problem = t.problem { throw ImageTableError(.invalidRequest, "target \(i): \(problem)", path: name) }
        }
    }

    private func render(_ bytes: UnsafeRawBufferPointer, name: String, _ targets: [RenderTarget],
                        planned: [TableFormat] = []) throws(ImageTableError) -> RenderReport {
        // Formats that are drawn need no planning twice; the rest follow the targets.
        let drawn = Set(targets.map(\.format))
        let formats = targets.map(\.format) + planned.filter { !drawn.contains($0) }
        // JPEGs skip libvips (but for a smart crop's `smartcrop`); everything the direct path
        // declines (other formats, CMYK, damaged files) goes through libvips below. A damaged JPEG is
        // thus decoded twice, so that libvips reports its damage in its own words; only the
        // decode that produced the pixels is counted.
        if directJPEG, let report = try DirectJPEG.render(bytes, name: name, targets: targets, formats: formats, options: options,
                                                          smartCrop: smartCropper(name: name)) {
            countDecode()
            if !report.warnings.isEmpty { PipelineRuntime.deliver(report.warnings) }
            return report
        }
        // Refused, not handed on: libvips would look at every frame, chunk or page first, for
        // minutes (WebPStructure, TIFFStructure), as a JPEG of too many scans is refused.
        if let cause = WebPStructure.refusal(bytes) ?? TIFFStructure.refusal(bytes) {
            throw ImageTableError(.decodeFailed, "could not decode", path: name, cause: cause)
        }
        try PipelineRuntime.start()
        var attempt = attemptWithVips(bytes, name: name, targets, formats: formats)
        // Words that went through libvips' shared buffer (a failure's, warnings read from it)
        // while another render's did may be the other's, or ours may have gone to it; and
        // words lost beside anyone may have been wiped: drawn again with nobody else in (see
        // LibvipsGate). Warnings of this thread's own (libpng's, ours) and failures the
        // pipeline raises itself are its own.
        if let visit = attempt.visit, visit.wordy, LibvipsGate.shared.mixed(visit) || (visit.crowded && attempt.lostWords) {
            attempt = LibvipsGate.shared.alone { attemptWithVips(bytes, name: name, targets, formats: formats) }
        }
        // The decode of the render kept: a render drawn twice decoded once as far as its
        // report and the counts go (they prove one decode per source per family).
        if attempt.decoded {
            countDecode()
        }
        let report = try attempt.result.get()
        // The strictest level refuses a JPEG damaged past its last row, as the direct path does;
        // reading it again adds about a fifth to a CMYK photo's render, so only there. (libvips
        // at this level fails on any warning libjpeg gives it, so none of this file's damage was
        // said before: the warnings here, a profile ignored, are ours.)
        if options.failOn == .warning, report.source.loader.hasPrefix("jpegload"), let warning = JPEGDecoder.warningAtTheEnd(bytes) {
            throw ImageTableError(.decodeFailed, "could not decode", path: name, cause: "libjpeg: \(warning)")
        }
        PipelineRuntime.deliver(report.warnings)
        return report
    }

    /// Counts one decode, this renderer's and the process's.
    private func countDecode() {
        decodes.add(1, ordering: .relaxed)
        PipelineRuntime.decodeCounter.add(1, ordering: .relaxed)
    }

    /// One render through libvips, and what decides whether it is drawn again.
    private struct VipsAttempt {
        var result: Result<RenderReport, ImageTableError>
        /// Whether it got past the header checks to decode.
        var decoded: Bool
        /// Its visit to LibvipsGate (`nil` when drawn inside another's, as a retry is), and
        /// whether words went through libvips' shared error buffer during it.
        var visit: LibvipsGate.Visit?
        /// Whether words that went through the shared buffer came back empty.
        var lostWords: Bool
    }

    private func attemptWithVips(_ bytes: UnsafeRawBufferPointer, name: String, _ targets: [RenderTarget],
                                 formats: [TableFormat]) -> VipsAttempt {
        let scope = VipsScope(sourceName: name, decides: true)
        var decoded = false
        let result: Result<RenderReport, ImageTableError>
        do throws(ImageTableError) {
            var report = try renderWithVips(bytes, scope: scope, targets, formats: formats, decoding: &decoded)
            scope.release()
            report.warnings = BenignWarnings.filter(scope.warnings, bytes: bytes)
            result = .success(report)
        } catch {
            scope.release()
            result = .failure(Truncation.refine(error, bytes: bytes))
        }
        return VipsAttempt(result: result, decoded: decoded, visit: scope.visit, lostWords: scope.lostWords)
    }
}
