import Foundation
import ImageTableCore

/// An image the cache returned: a small handle to one entry of one table, not a copy of it.
///
/// The pixels stay in the table's memory map. Each ``withPixels(_:)`` looks the entry up again
/// (a probe of the table's hash index) and runs the closure under the entry's seqlock, so what
/// it returns is never made from pixels that a concurrent write replaced: no copy, no allocation, about
/// as fast as the hit itself. The price is that a handle does not pin its entry: once the entry is
/// evicted, deleted or rewritten from another source, `withPixels` returns `nil` and the caller
/// asks the cache again. Callers that must keep the pixels whatever happens copy them out
/// (``copyPixels()``, ``rgba8()``), paying one allocation and one copy of the slot.
///
/// Handles are `Sendable` values: pass them between tasks freely. Reading through one counts as a
/// use of the entry for LRU replacement, as any read of the table does. A handle keeps its table
/// mapped, so reading after the cache is gone or closed is safe (it returns `nil`).
public struct CachedImage: Sendable {
    /// The entity's key.
    public let key: String
    /// The format's identifier.
    public let format: String
    /// The entity UUID of ``key``.
    public let entityUUID: UUID
    /// The source the pixels were made from.
    public let sourceID: UUID
    /// Slot width in pixels.
    public let width: Int
    /// Slot height in pixels.
    public let height: Int
    /// Distance between row starts in bytes; a multiple of 64.
    public let bytesPerRow: Int
    /// The table's pixel style.
    public let style: PixelStyle
    /// The part of the slot the image covers: the whole slot except for `inside` fits.
    public let contentRect: PixelRect
    let table: ImageTableWriter

    init(view: ImageView, key: String, format: String, table: ImageTableWriter) {
        self.init(key: key, format: format, entityUUID: view.entityUUID, sourceID: view.sourceUUID,
                  width: view.width, height: view.height, bytesPerRow: view.bytesPerRow, style: view.style,
                  contentRect: view.contentRect, table: table)
    }

    init(key: String, format: String, entityUUID: UUID, sourceID: UUID, width: Int, height: Int, bytesPerRow: Int,
         style: PixelStyle, contentRect: PixelRect, table: ImageTableWriter) {
        self.key = key
        self.format = format
        self.entityUUID = entityUUID
        self.sourceID = sourceID
        self.width = width
        self.height = height
        self.bytesPerRow = bytesPerRow
        self.style = style
        self.contentRect = contentRect
        self.table = table
    }

    /// Runs `body` on the entry's pixels, zero-copy, if the entry still holds this image.
    ///
    /// `body` may run more than once, and on pixels a writer is replacing: that run's result
    /// is discarded and `body` runs again on the new state (which then usually misses). So
    /// `body` should compute its result from the view (a returned result is never made from
    /// torn pixels), not act on the pixels as it reads them, and must not keep the view.
    ///
    /// - Parameter body: reads the view.
    /// - Returns: `body`'s result, or `nil` when the entry was evicted, deleted, made from another
    ///   source since, rewritten with another content rectangle than ``contentRect``, kept
    ///   changing under eight reads in a row, or the cache was closed.
    /// - Throws: what `body` throws.
    public func withPixels<R, E: Error>(_ body: (ImageView) throws(E) -> R) throws(E) -> R? {
        var failure: E?
        let result: R?? = try? table.withImage(entityUUID: entityUUID, sourceUUID: sourceID) { view -> R? in
            failure = nil
            // Rewritten from the same source ID with another geometry (a `setImage`): this
            // handle's ``contentRect`` no longer describes the pixels, so it reads nothing.
            guard view.contentRect == contentRect else { return nil }
            do throws(E) {
                return try body(view)
            } catch {
                failure = error
                return nil
            }
        }
        // Thrown only from a run the table kept: when every read was torn (`busy`, `result`
        // nil), the last run's error came from pixels being replaced, and the answer is a miss.
        if let failure, result != nil { throw failure }
        return result ?? nil
    }

    /// A copy of the entry's rows in the table's style, padding included:
    /// ``bytesPerRow`` × ``height`` bytes.
    ///
    /// - Returns: the bytes, or `nil` when the entry no longer holds this image.
    public func copyPixels() -> [UInt8]? {
        withPixels { view in Array(view.bytes) }
    }

    /// The entry converted to 8-bit RGBA with straight alpha, rows packed: `width × height × 4`
    /// bytes, by `PixelConversion.rgba8(_:)` (`docs/FORMAT.md`'s rules).
    ///
    /// - Returns: the pixels, or `nil` when the entry no longer holds this image.
    public func rgba8() -> [UInt8]? {
        withPixels { view in PixelConversion.rgba8(view) }
    }

    /// Whether the entry still holds this image, without reading its pixels or counting a use:
    /// made from this handle's source ID, with its content rectangle (a `setImage` of the same
    /// source ID in another shape leaves a handle that ``withPixels(_:)`` answers `nil`).
    public var isCurrent: Bool {
        guard let entry = table.entry(forKey: key) else { return false }
        return entry.sourceUUID == sourceID && entry.contentRect == contentRect
    }
}
