import ImageTableCore
import Foundation
import CVips

/// A libvips image owned by a ``VipsScope``: valid until the scope releases everything.
struct VImage {
    /// A `VipsImage *`.
    let pointer: OpaquePointer

    var width: Int { Int(cv_image_get_width(pointer)) }
    var height: Int { Int(cv_image_get_height(pointer)) }
    var bands: Int { Int(cv_image_get_bands(pointer)) }
    var format: CVBandFormat { cv_image_get_format(pointer) }
    var interpretation: CVInterpretation { cv_image_get_interpretation(pointer) }
}

enum Vips {
    /// Copies and clears libvips' process-wide error buffer; `nil` when it was empty.
    static func takeErrorBuffer() -> String? {
        guard let copy = cv_error_buffer_copy() else { return nil }
        defer { cv_free(copy) }
        let text = String(cString: copy).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }
}

/// The one choke point through which rendering calls libvips.
///
/// A scope belongs to one render call on one thread. It
/// - runs every call that builds or frees libvips objects under the global lock
///   (``PipelineRuntime/libvipsLock``) and runs pixel evaluation outside it;
/// - owns every object those calls return and releases them all, under the lock, in ``release()``,
///   so no last reference to a libvips object is ever dropped outside the lock (liborc 0.4.33
///   frees compiled code on that path without its own lock);
/// - checks every return code, copies and clears libvips' error buffer, adds the warnings libvips
///   logged on this thread during the call, and throws a ``ImageTableError`` naming the source.
final class VipsScope {
    /// The source's path or name, for errors.
    let sourceName: String
    /// Every warning libvips logged on this thread during the render, release included.
    private let sink = WarningSink()
    private var owned: [OpaquePointer] = []
    private var released = false
    /// This scope's place in ``LibvipsGate``, from creation to release.
    private let entry: LibvipsGate.Entry
    /// Whether a libvips call of this scope failed, whose words are read from the shared buffer.
    private var failedInLibvips = false
    /// The thread's visit to ``LibvipsGate`` that this scope ended, when it was the outermost;
    /// known once released.
    private(set) var visit: LibvipsGate.Visit?

    /// Whether the owner asks ``LibvipsGate/mixed(_:)`` about a wordy ``visit``.
    private let decides: Bool

    /// Creates a scope, inside ``LibvipsGate``.
    ///
    /// - Parameters:
    ///   - sourceName: the source's path or name, for errors.
    ///   - decides: whether the owner will ask ``LibvipsGate/mixed(_:)`` about the ``visit``
    ///     when it is wordy (it must then).
    init(sourceName: String, decides: Bool = false) {
        self.sourceName = sourceName
        self.decides = decides
        entry = LibvipsGate.shared.enter()
    }

    deinit {
        precondition(released || owned.isEmpty, "VipsScope dropped without release()")
        if !released { _ = LibvipsGate.shared.leave(entry, wordy: wordy) }  // (no one decides of a scope never released)
    }

    /// Whether words went through libvips' shared error buffer in this scope: a failure of a
    /// libvips call, or warnings read from the buffer (see ``LibvipsGate``).
    var wordy: Bool { failedInLibvips || sink.heardSharedBuffer }

    /// Whether words that went through the shared buffer came back empty: a libvips failure
    /// without a word, or the JPEG loader's "read gave N warnings" with none of them. Another
    /// thread may have taken or wiped them.
    private(set) var lostWords = false

    /// Takes ownership of a GObject reference (an image or a source).
    func own(_ pointer: OpaquePointer) -> OpaquePointer {
        owned.append(pointer)
        return pointer
    }

    /// Releases every owned object under the global lock, and frees this thread's libvips
    /// buffers (`vips_thread_shutdown`, which libvips asks of threads it did not create).
    func release() {
        guard !released else { return }
        released = true
        // Loaders may log while they are torn down ("read gave 1 warnings"): still this render's.
        sink.capture {
            PipelineRuntime.libvipsLock.withLock { _ in
                let logged = sink.loaderLogs
                for object in owned.reversed() { cv_object_unref(UnsafeMutableRawPointer(object)) }
                cv_thread_shutdown()
                // libvips' JPEG loader logs the whole buffer as it is freed and leaves it there,
                // where the next failure, whoever's, said it too (a PNG beside it, or after it).
                // Taken now; words of another thread taken with it leave that render without
                // them, which it notices (`lostWords`) and is drawn again for.
                if sink.loaderLogs > logged { _ = Vips.takeErrorBuffer() }
            }
        }
        owned.removeAll()
        if sink.heardSharedBuffer && sink.messages.isEmpty { lostWords = true }
        visit = LibvipsGate.shared.leave(entry, wordy: wordy, deciding: decides)
    }

    /// The warnings libvips logged on this thread during the render, in order, without repeats.
    var warnings: [String] { sink.messages }

    /// Adds a warning of our own to the render's, after libvips' so far.
    ///
    /// - Parameter text: the warning.
    func warn(_ text: String) { sink.append(text) }

    /// Builds: runs `body` under the global lock; on a non-zero return, throws.
    ///
    /// - Parameters:
    ///   - step: what the call does, for the message ("read the header").
    ///   - code: the error code when libvips' text does not say something more precise.
    ///   - body: the libvips call; returns libvips' status.
    func build(_ step: String, _ code: ImageTableError.Code, _ body: () -> Int32) throws(ImageTableError) {
        let (status, text) = PipelineRuntime.libvipsLock.withLock { _ in
            sink.capture { () -> (Int32, String?) in
                // Text already in libvips' shared buffer is another render's: a failure of its
                // pixels, evaluated outside the lock, whose thread takes it under the lock. Set
                // aside and put back, so that neither takes the other's words (a corrupt PNG's
                // CRC error made another thread's PPM `decode-failed`, not `unsupported-format`).
                let others = Vips.takeErrorBuffer()
                defer { if let others { cv_error_append(others) } }
                let status = body()
                guard status == 0 else { return (status, Vips.takeErrorBuffer()) }
                // A call that succeeds can leave text for later: libvips' JPEG loader puts
                // libjpeg's warnings in the shared error buffer as it reads the header, and logs
                // the buffer only when the image is freed, by when a failure on another thread
                // may have taken it (a render's "Corrupt JPEG data" was lost about once in ten
                // runs of the test suite). Kept now, as this render's warnings.
                if let left = Vips.takeErrorBuffer() { sink.append(left, fromSharedBuffer: true) }
                return (status, nil)
            }
        }
        if status != 0 { throw failure(step, code, text, sink.messages) }
    }

    /// Builds an image: runs `body` (which stores its result through the pointer) under the
    /// global lock and takes ownership of the result.
    func image(_ step: String, _ code: ImageTableError.Code,
               _ body: (UnsafeMutablePointer<OpaquePointer?>) -> Int32) throws(ImageTableError) -> VImage {
        var out: OpaquePointer?
        try build(step, code) {
            let status = body(&out)
            if status == 0, let out { _ = own(out) }
            return status
        }
        guard let out else { throw ImageTableError(code, "could not \(step): libvips returned no image", path: sourceName) }
        return VImage(pointer: out)
    }

    /// Builds an image from a pointer-returning call (NULL on failure) under the global lock.
    func image(_ step: String, _ code: ImageTableError.Code,
               returning body: () -> OpaquePointer?) throws(ImageTableError) -> VImage {
        try image(step, code) { out in
            out.pointee = body()
            return out.pointee == nil ? -1 : 0
        }
    }

    /// Evaluates `image` into a new memory image, outside the global lock: the pixel work, on
    /// libvips' own threads. Decoding happens here for lazily loaded images.
    func copyToMemory(_ step: String, _ code: ImageTableError.Code, _ image: VImage) throws(ImageTableError) -> VImage {
        let (result, text) = sink.capture { () -> (OpaquePointer?, String?) in
            let result = cv_image_copy_memory(image.pointer)
            // Taken under the lock, as ``withPixels(_:_:of:_:)`` takes it.
            return (result, result == nil ? PipelineRuntime.libvipsLock.withLock { _ in Vips.takeErrorBuffer() } : nil)
        }
        guard let result else { throw failure(step, code, text, sink.messages) }
        // Creating a memory image builds no operation; it only needs to be owned.
        return VImage(pointer: own(result))
    }

    /// Evaluates `image` into a malloc'd buffer outside the global lock and passes it to `body`;
    /// the buffer is freed afterwards.
    func withPixels<T>(_ step: String, _ code: ImageTableError.Code, of image: VImage,
                       _ body: (UnsafeRawBufferPointer) -> T) throws(ImageTableError) -> T {
        var size = 0
        let (data, text) = sink.capture { () -> (UnsafeMutableRawPointer?, String?) in
            let data = cv_image_write_to_memory(image.pointer, &size)
            // Taken under the lock: not while another render's call has set it aside.
            return (data, data == nil ? PipelineRuntime.libvipsLock.withLock { _ in Vips.takeErrorBuffer() } : nil)
        }
        guard let data else { throw failure(step, code, text, sink.messages) }
        defer { cv_free(data) }
        return body(UnsafeRawBufferPointer(start: data, count: size))
    }

    /// Reads an integer header field; `nil` when absent.
    func int(_ image: VImage, _ name: String) -> Int? {
        var value: Int32 = 0
        // Asked first: a field that is absent (most images have no orientation) would put
        // "field not found" in the shared buffer, and taking it out takes any other render's
        // words with it.
        let status = PipelineRuntime.libvipsLock.withLock { _ -> Int32 in
            guard cv_image_get_typeof(image.pointer, name) != 0 else { return -1 }
            let status = cv_image_get_int(image.pointer, name, &value)
            if status != 0, Vips.takeErrorBuffer() != nil { sink.noteSharedBuffer() }
            return status
        }
        return status == 0 ? Int(value) : nil
    }

    /// Reads a string header field; `nil` when absent.
    func string(_ image: VImage, _ name: String) -> String? {
        PipelineRuntime.libvipsLock.withLock { _ in
            var value: UnsafePointer<CChar>?
            guard cv_image_get_typeof(image.pointer, name) != 0 else { return nil }
            guard cv_image_get_string(image.pointer, name, &value) == 0, let value else {
                if Vips.takeErrorBuffer() != nil { sink.noteSharedBuffer() }
                return nil
            }
            return String(cString: value)
        }
    }

    /// A copy of the header field `name`'s bytes (`icc-profile-data`), or `nil` when it has none.
    func blob(_ image: VImage, _ name: String) -> [UInt8]? {
        PipelineRuntime.libvipsLock.withLock { _ in
            var data: UnsafeRawPointer?
            var length = 0
            guard cv_image_get_typeof(image.pointer, name) != 0, cv_image_get_blob(image.pointer, name, &data, &length) == 0,
                  let data else {
                if Vips.takeErrorBuffer() != nil { sink.noteSharedBuffer() }
                return nil
            }
            return [UInt8](UnsafeRawBufferPointer(start: data, count: length))
        }
    }

    /// Whether a header field exists.
    func has(_ image: VImage, _ name: String) -> Bool {
        PipelineRuntime.libvipsLock.withLock { _ in cv_image_get_typeof(image.pointer, name) != 0 }
    }

    private func failure(_ step: String, _ code: ImageTableError.Code, _ text: String?, _ warnings: [String]) -> ImageTableError {
        failedInLibvips = true
        if (text ?? "").isEmpty { lostWords = true }
        // Each message once, in the order first said: libvips writes a decoder's complaint into
        // its buffer at each pass over the file (the header, then the pixels), so a JPEG with
        // extraneous bytes under `failOn: warning` gave its cause the same sentence four times.
        var parts: [String] = []
        var said = Set<String>()
        for line in (text ?? "").split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) + warnings
        where !line.isEmpty && !parts.contains(where: { $0.contains(line) }) && said.insert(line).inserted {
            parts.append(line)
        }
        let cause = parts.joined(separator: "; ")
        let refined = ErrorClassifier.refine(code, cause: cause)
        let message = switch refined {
        case .truncated: "the image data ends early"
        case .unsupportedFormat: "not an image in a format this pipeline decodes"
        default: "could not \(step)"
        }
        return ImageTableError(refined, message, path: sourceName, cause: cause)
    }
}

/// Turns libvips' text into a more precise code where it is unambiguous.
enum ErrorClassifier {
    static func refine(_ code: ImageTableError.Code, cause: String) -> ImageTableError.Code {
        let text = cause.lowercased()
        if text.contains("is not in a known format") || text.contains("not a known file format")
            || text.contains("operation is blocked") || text.contains("is not a known") {
            return .unsupportedFormat
        }
        guard code == .decodeFailed else { return code }
        let truncation = ["premature end", "truncated", "not enough data", "unexpected end", "end of file",
                          "out of data", "short read"]
        if truncation.contains(where: text.contains) { return .truncated }
        return code
    }
}
