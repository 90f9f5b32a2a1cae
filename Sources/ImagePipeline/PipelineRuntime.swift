import ImageTableCore
import CVips
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The image formats the pipeline may decode. Every other libvips loader (SVG, PDF, ImageMagick,
/// FITS, Matlab, raw, OpenEXR…) is blocked, as sharp does: see `docs/PIPELINE.md`, "Loaders".
public enum ImageLoader: String, Sendable, CaseIterable, Codable {
    /// JPEG (libjpeg-turbo), with DCT shrink-on-load.
    case jpeg
    /// PNG (libpng), including palette, grey, 16-bit and interlaced files.
    case png
    /// WebP (libwebp), with scale-on-load.
    case webp
    /// GIF (libnsgif); the first frame.
    case gif
    /// TIFF (libtiff); the first page.
    case tiff
    /// HEIF: HEIC and AVIF (libheif), when this libvips has the module.
    case heif

    /// The libvips class whose subclasses (file, buffer and source variants) load the format.
    var vipsClass: String {
        switch self {
        case .jpeg: "VipsForeignLoadJpeg"
        case .png: "VipsForeignLoadPng"
        case .webp: "VipsForeignLoadWebp"
        case .gif: "VipsForeignLoadNsgif"
        case .tiff: "VipsForeignLoadTiff"
        case .heif: "VipsForeignLoadHeif"
        }
    }
}

/// Process-wide libvips state: starting it, its settings, the loader allow-list, where its
/// warnings go, and the lock that makes concurrent use safe.
///
/// libvips starts lazily, on the first render (or an explicit ``start()``): about 70 ms that
/// commands which never touch pixels do not pay. Starting applies the batch settings: operation
/// cache off (`vips_cache_set_max(0)`), untrusted loaders blocked and only ``ImageLoader`` formats
/// allowed, GLib warnings from libvips routed to ``setWarningHandler(_:)`` instead of stderr.
public enum PipelineRuntime {
    /// Settings applied to libvips. Changing them after start applies them at once.
    public struct Settings: Sendable, Equatable {
        /// Threads libvips uses to evaluate one image: 1 unless set; `nil` for libvips' default
        /// (the `VIPS_CONCURRENCY` variable, else the number of cores).
        ///
        /// One, because parallelism belongs to the callers (a bake's worker processes, the
        /// runtime cache's render threads), and because libvips 8.14 evaluating an image on
        /// several threads now and then accepted a PNG whose data is corrupt as a blank image
        /// (91 renders in 300 of one such file, in a test process on 2 cores; none on one
        /// thread), which a cache then stored as a fresh entry.
        public var concurrency: Int?
        /// The formats that may be decoded; every other loader is blocked.
        public var loaders: Set<ImageLoader>

        /// Creates settings.
        ///
        /// - Parameters:
        ///   - concurrency: libvips threads per image, 1 by default; `nil` for libvips' default.
        ///   - loaders: the allowed formats; all of ``ImageLoader`` by default.
        public init(concurrency: Int? = 1, loaders: Set<ImageLoader> = Set(ImageLoader.allCases)) {
            self.concurrency = concurrency
            self.loaders = loaders
        }
    }

    struct State {
        var started = false
        var settings = Settings()
        var warningHandler: (@Sendable (String) -> Void)?
    }

    static let state = Mutex(State())

    /// The global libvips lock. Every call that builds or frees a libvips object (operations,
    /// images, sources) holds it; pixel evaluation does not. See `docs/PIPELINE.md`,
    /// "Thread safety", and ``withLibvips(_:)``.
    static let libvipsLock = Mutex(())

    /// Starts libvips if it has not started, applying the current settings. Thread-safe and
    /// idempotent; renderers call it themselves.
    ///
    /// - Throws: `ImageTableError.Code.libraryUnavailable` when libvips cannot be opened (not
    ///   installed, another ABI) or `vips_init` fails; the same error on every later call.
    public static func start() throws(ImageTableError) {
        try startOnce.get()
    }

    private static let startOnce: Result<Void, ImageTableError> = {
        // Opening libvips is part of starting it: a process that never needs it never loads
        // its hundred libraries.
        var reason = [CChar](repeating: 0, count: 512)
        guard cv_load(&reason, reason.count) == 0 else {
            let cause = String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return .failure(ImageTableError(.libraryUnavailable, "libvips could not be loaded", cause: cause))
        }
        installLogHandler()
        let failed: String? = libvipsLock.withLock { _ in
            switch cv_init("imagetables") {
            case 0: break
            case -2: return "this libvips has another ABI than the 8.x (soname 42) that ImageTables was written for"
            default: return Vips.takeErrorBuffer() ?? "vips_init failed"
            }
            cv_cache_set_max(0)
            defaultConcurrency = cv_concurrency_get()
            return nil
        }
        if let failed { return .failure(ImageTableError(.libraryUnavailable, "libvips could not start", cause: failed)) }
        let settings = state.withLock { s in
            s.started = true
            return s.settings
        }
        apply(settings)
        return .success(())
    }()

    /// Whether libvips has started in this process.
    public static var isStarted: Bool { state.withLock { $0.started } }

    /// The current settings.
    public static var settings: Settings { state.withLock { $0.settings } }

    /// Changes the settings; applied at once when libvips is running, else when it starts.
    /// Does not start libvips.
    ///
    /// - Parameter settings: the new settings.
    public static func configure(_ settings: Settings) {
        let started = state.withLock { s in
            s.settings = settings
            return s.started
        }
        if started { apply(settings) }
    }

    /// The libvips version this process runs, for example `8.14.1`. Starts libvips.
    ///
    /// - Throws: `ImageTableError.Code.libraryUnavailable` when libvips cannot start.
    public static func libvipsVersion() throws(ImageTableError) -> String {
        try start()
        return String(cString: cv_version_string())
    }

    /// Sends libvips' warnings (GLib log domain `VIPS`: corrupt-data notices, "error in tile",
    /// module problems) to `handler` instead of stderr. With no handler (the default) they are
    /// dropped. Warnings a render's own thread logs are that render's: they reach the handler
    /// when it finishes, and are in its ``RenderReport/warnings`` when it succeeds or its error's
    /// `ImageTableError.cause` when it fails; warnings from libvips' own threads reach the
    /// handler as they happen, on those threads, sometimes while libvips' global lock is held.
    /// So the handler must return soon and must not block: it may not render, call
    /// ``withLibvips(_:)``, or wait for a thread that does (a render waiting to be drawn alone,
    /// or the lock, would wait for it in turn).
    ///
    /// - Parameter handler: receives each warning's text; `nil` drops them.
    public static func setWarningHandler(_ handler: (@Sendable (String) -> Void)?) {
        // The GLib handler that feeds it is installed when libvips starts: until then there is
        // nothing to log, and installing it now would load libvips.
        state.withLock { $0.warningHandler = handler }
    }

    /// Hands warnings of a finished render to the handler, if one is set.
    static func deliver(_ warnings: [String]) {
        guard !warnings.isEmpty, let handler = state.withLock({ $0.warningHandler }) else { return }
        for warning in warnings { handler(warning) }
    }

    /// Runs `body` holding the global libvips lock: the only safe way for other code in this
    /// process to create or release libvips objects of its own while renderers may be running
    /// (liborc 0.4.33 can crash when two threads do that at once). Do not render from `body`:
    /// the lock is not reentrant. Nor call this from a warning handler
    /// (``setWarningHandler(_:)``): it may run on libvips' threads while a render waits to be
    /// alone, which would wait for it.
    ///
    /// - Parameter body: code that calls libvips.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, or `ImageTableError.Code.libraryUnavailable`.
    public static func withLibvips<T>(_ body: () throws -> T) throws -> T {
        try start()
        // Inside the gate: what `body` writes into libvips' error buffer is not a render's.
        let entry = LibvipsGate.shared.enter()
        // Taken for wordy: what `body` does with the error buffer is not known.
        defer { _ = LibvipsGate.shared.leave(entry, wordy: true) }
        return try libvipsLock.withLock { _ in try body() }
    }

    /// Decodes done by every renderer in this process since it started.
    public static var totalDecodes: Int { decodeCounter.load(ordering: .relaxed) }

    static let decodeCounter = Atomic<Int>(0)

    /// libvips' own concurrency at start (from `VIPS_CONCURRENCY` or the core count); written once
    /// under the lock before any reader.
    nonisolated(unsafe) private static var defaultConcurrency: Int32 = 0

    private static func apply(_ settings: Settings) {
        libvipsLock.withLock { _ in
            cv_concurrency_set(settings.concurrency.map { Int32(max(1, $0)) } ?? defaultConcurrency)
            // Block untrusted loaders, then every loader, then allow ours again: sharp's recipe.
            cv_block_untrusted_set(1)
            cv_operation_block_set("VipsForeignLoad", 1)
            for loader in ImageLoader.allCases {
                cv_operation_block_set(loader.vipsClass, settings.loaders.contains(loader) ? 0 : 1)
            }
        }
    }

    // MARK: - Warnings

    /// Routes libvips' warnings; called once, by ``start()``, when libvips is loaded.
    private static func installLogHandler() {
        // Criticals (programming errors) keep GLib's default handler and stay visible; info and
        // debug keep it too (silent unless G_MESSAGES_DEBUG asks for them).
        _ = cv_log_set_handler("VIPS", Int32(CV_LOG_LEVEL_WARNING | CV_LOG_LEVEL_MESSAGE), { _, _, message, _ in
            guard let message else { return }
            let text = String(cString: message)
            if let sink = WarningSink.current {
                sink.append(text)
                return
            }
            if let handler = PipelineRuntime.state.withLock({ $0.warningHandler }) { handler(text) }
        }, nil)
    }
}

/// Warnings libvips logs on one thread while that thread is inside a pipeline call, kept so a
/// failure can say what libvips complained about (some loaders fail with an empty error buffer
/// and put the reason in a warning).
final class WarningSink {
    private(set) var messages: [String] = []
    /// Whether any of the messages came through libvips' shared error buffer, where another
    /// thread's words can be, or ours be taken (see ``LibvipsGate``): text a call left in it,
    /// or the JPEG loader's "read gave N warnings", which it logs with the whole buffer.
    private(set) var heardSharedBuffer = false
    /// How many times libvips' JPEG loader logged the shared buffer ("read gave N warnings").
    private(set) var loaderLogs = 0

    /// Keeps each line of `text` once. libvips' JPEG loader logs its whole error buffer, which
    /// nothing clears between the header's load and the pixels', so one libjpeg warning came
    /// back inside every later message ("VipsJpeg: Corrupt…\nVipsJpeg: Corrupt…\n"); and its count
    /// ("read gave 1 warnings") says nothing the warnings themselves do not.
    ///
    /// - Parameters:
    ///   - text: the message, one or more lines.
    ///   - fromSharedBuffer: whether it was taken from libvips' shared error buffer.
    func append(_ text: String, fromSharedBuffer: Bool = false) {
        if fromSharedBuffer { heardSharedBuffer = true }
        for line in text.split(whereSeparator: \.isNewline) {
            let line = line.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("read gave ") && line.hasSuffix(" warnings") {
                heardSharedBuffer = true
                loaderLogs += 1
                continue
            }
            guard !line.isEmpty else { continue }
            if messages.count < 16, !messages.contains(line) { messages.append(line) }
        }
    }

    /// Notes that text was taken from libvips' shared error buffer and dropped (a header
    /// field's type error): it may have been another thread's words.
    func noteSharedBuffer() { heardSharedBuffer = true }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// The sink of the calling thread, if it is inside ``capture(_:)``.
    static var current: WarningSink? {
        guard let raw = pthread_getspecific(key) else { return nil }
        return Unmanaged<WarningSink>.fromOpaque(raw).takeUnretainedValue()
    }

    /// Runs `body` with this sink collecting the calling thread's warnings.
    func capture<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let previous = pthread_getspecific(Self.key)
        pthread_setspecific(Self.key, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(Self.key, previous) }
        return try body()
    }
}
