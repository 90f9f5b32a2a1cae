import Foundation
import ImageTableCore

/// Draws one source into the tables of several formats of its family with one decode, and
/// publishes them: the core's ``FamilyWrite``, the same two steps as the bake's, so a source that
/// fails to decode never evicts a good entry. Synchronous and blocking: runs on the ``RenderPool``.
enum FamilyStore {
    /// Reserves without evicting, renders into the slots (and scratch memory for full tables),
    /// then evicts and places, and publishes each format's entry.
    ///
    /// - Parameters:
    ///   - source: the encoded image.
    ///   - entity: the entity; its key and source ID go into every record.
    ///   - formats: the formats to fill, of one family.
    ///   - renderer: draws the source.
    /// - Returns: a handle per format stored, or the failure with the renderer's or the core's own
    ///   code. On failure no slot stays reserved; formats published before a publish failure keep
    ///   their entries.
    static func store(_ source: SourceImage, entity: CacheEntity, into formats: [FormatTable], family: [TableFormat],
                      renderer: any Renderer) -> FlightOutcome {
        assert(RenderPool.isPoolThread, "renders block their thread; they must run on the render pool")
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: FamilyWrite.scratchBytes(for: formats.map(\.format)),
                                                             alignment: 64)
        defer { scratch.deallocate() }
        var write: FamilyWrite
        do throws(ImageTableError) {
            write = try FamilyWrite(key: entity.key, sourceUUID: entity.sourceID, tables: formats, scratch: scratch)
        } catch {
            return .failure(error)
        }
        let rects: [PixelRect]
        do throws(ImageTableError) {
            rects = try renderer.render(source, into: write.renderTargets, family: family)
        } catch {
            write.abandon()
            return .failure(.decode(error, key: entity.key, format: nil))
        }
        let reservations: [SlotReservation]
        do throws(ImageTableError) {
            // On failure `complete` has given back every slot itself.
            reservations = try write.complete(contentRects: rects)
        } catch {
            return .failure(.decode(error, key: entity.key, format: nil))
        }
        var images: [String: CachedImage] = [:]
        for (i, reservation) in reservations.enumerated() {
            do {
                try formats[i].table.publish([reservation])
            } catch {
                for (f, r) in zip(formats[(i + 1)...], reservations[(i + 1)...]) { f.table.abandon(r) }
                return .failure(.table(error, key: entity.key, format: formats[i].id))
            }
            let l = formats[i].table.layout
            images[formats[i].id] = CachedImage(
                key: entity.key, format: formats[i].id, entityUUID: entity.entityUUID, sourceID: entity.sourceID,
                width: l.width, height: l.height, bytesPerRow: l.bytesPerRow, style: l.style,
                contentRect: reservation.contentRect, table: formats[i].table)
        }
        return .success(images)
    }
}
