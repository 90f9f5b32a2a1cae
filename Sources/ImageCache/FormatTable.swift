import Foundation
import ImagePipeline
import ImageTableCore

/// One configured format and its open table: hits, freshness checks and stores.
final class FormatTable: Sendable {
    let format: TableFormat
    /// `format.id`, stored so that handles share one string instead of building it per hit.
    let id: String
    let table: ImageTableWriter

    /// Opens (creating or rebuilding) the format's table in `directory`.
    ///
    /// - Throws: ``ImageTableError`` `invalid-request` for a format out of range, else the core's
    ///   error opening the table (`locked`, `insecure-file`…).
    init(_ format: TableFormat, directory: String, options: ImageTableWriter.Options) throws(ImageTableError) {
        self.format = format
        id = format.id
        do {
            try format.validate()
            _ = try format.layout()
        } catch {
            throw ImageTableError(.invalidRequest, "format '\(format.id)': \(error.message)")
        }
        do {
            table = try ImageTableWriter(path: directory + "/" + format.fileName, format: format, options: options)
        } catch {
            throw .table(error, key: nil, format: format.id)
        }
    }

    /// The entity's entry when it is present and made from the entity's source; counts a use.
    /// No allocation: the handle holds references the table and entity already own.
    @inline(__always)
    func hit(_ entity: CacheEntity) -> CachedImage? {
        let table = table, id = id
        return try? table.withImage(entityUUID: entity.entityUUID, sourceUUID: entity.sourceID) { view in
            CachedImage(view: view, key: entity.key, format: id, table: table)
        }
    }

    /// Whether the entity's entry is present and made from its source, without counting a use.
    func isFresh(_ entity: CacheEntity) -> Bool {
        table.contains(key: entity.key, sourceUUID: entity.sourceID)
    }
}

/// Draws one source into the slots of several formats of its family with one decode, and
/// publishes them. Synchronous and blocking: runs on the ``RenderPool``.
enum FamilyWriter {
    /// Reserves a slot per format, renders `source` into all of them at once, publishes each.
    ///
    /// - Parameters:
    ///   - source: the encoded image.
    ///   - entity: the entity; its key and source ID go into every record.
    ///   - formats: the formats to fill, of one family.
    ///   - renderer: the pipeline.
    /// - Returns: a handle per format stored, or `decode-failed` / `table-unavailable`. On failure
    ///   no slot stays reserved; formats published before a publish failure keep their entries.
    static func store(_ source: ImageSource, entity: CacheEntity, into formats: [FormatTable],
                      renderer: ImageRenderer) -> FlightOutcome {
        assert(RenderPool.isPoolThread, "renders block their thread; they must run on the render pool")
        var reservations: [SlotReservation] = []
        func abandonAll() { for (f, r) in zip(formats, reservations) { f.table.abandon(r) } }
        for format in formats {
            do {
                reservations.append(try reserve(format, entity))
            } catch {
                abandonAll()
                return .failure(error)
            }
        }
        let targets = zip(formats, reservations).map { RenderTarget(format: $0.format, reservation: $1) }
        let report: RenderReport
        do {
            report = try renderer.render(source, into: targets)
        } catch {
            abandonAll()
            return .failure(.decode(error, key: entity.key, format: nil))
        }
        var images: [String: CachedImage] = [:]
        for i in formats.indices {
            var reservation = reservations[i]
            reservation.contentRect = report.members[i].contentRect
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

    /// Reserves the entity's slot, waiting while another write holds the same key (a store of
    /// another source ID for it) or every slot is reserved: both end within one render.
    private static func reserve(_ format: FormatTable, _ entity: CacheEntity) throws(ImageTableError) -> SlotReservation {
        var last: ImageTableError?
        for _ in 0..<2500 {
            do {
                return try format.table.reserve(key: entity.key, sourceUUID: entity.sourceID)
            } catch let error where error.code == .busy {
                last = error
                usleep(2000)
            } catch {
                throw error.code == .invalidArgument
                    ? ImageTableError(.invalidRequest, error.message, key: entity.key)
                    : .table(error, key: entity.key, format: format.id)
            }
        }
        throw .table(last ?? ImageTableError(.busy, "no slot became free"), key: entity.key, format: format.id)
    }
}
