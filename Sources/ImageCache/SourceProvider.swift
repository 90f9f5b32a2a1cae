import Foundation
import ImageTableCore

/// Supplies source images on a miss: FastImageCache's
/// `imageCache:wantsSourceImageForEntity:withFormatName:completionBlock:`, as an async function.
///
/// The cache calls it at most once per source at a time, however many requests wait for that
/// source (for any formats of its family), from a task of its own. When every waiting request has
/// been cancelled, that task is cancelled: check `Task.isCancelled`, or use APIs that honour
/// cancellation (`URLSession`'s async methods, `Task.sleep`), so the work stops.
///
/// ```swift
/// struct Downloads: SourceProvider {
///     func source(for entity: CacheEntity, format: TableFormat) async throws -> SourceImage {
///         let (data, _) = try await URLSession.shared.data(from: URL(string: "https://example.com/\(entity.key)")!)
///         return .data(data)
///     }
/// }
/// ```
public protocol SourceProvider: Sendable {
    /// Returns the source image for `entity`.
    ///
    /// - Parameters:
    ///   - entity: the entity whose image is missing or stale; its ``CacheEntity/sourceID`` is
    ///     the version wanted.
    ///   - format: the format of the request that caused the fetch. The source is drawn into
    ///     every format of the family that needs it, so return the full image, not one sized for
    ///     this format.
    /// - Returns: the encoded image.
    /// - Throws: anything; an `ImageTableError` reaches every waiting request as it is (but its
    ///   own `cancelled`), any other error as `ImageTableError` `source-unavailable` with the
    ///   error as its cause (or `cancelled`, when the fetch was cancelled).
    func source(for entity: CacheEntity, format: TableFormat) async throws -> SourceImage
}
