import Foundation
import ImageTableCore

/// One configured format and its open table: hits, freshness checks and stores.
final class FormatTable: FamilyWriteTable, Sendable {
    let format: TableFormat
    /// `format.id`, stored so that handles share one string instead of building it per hit.
    let id: String
    let table: ImageTableWriter
    /// The ``FamilyTag`` of the configured family, which the cache's entries record, when its
    /// renderer draws with the family (``Renderer/drawsWithFamily``); else unknown.
    let familyTag: UInt16

    /// Opens (creating or rebuilding) the format's table in `directory`.
    ///
    /// - Parameters:
    ///   - format: the format.
    ///   - directory: where the tables live.
    ///   - options: the writer's options.
    ///   - familyTag: the tag of the format's configured family.
    /// - Throws: ``ImageTableError`` `invalid-request` for a format out of range, else the core's
    ///   error opening the table (`locked`, `insecure-file`…).
    init(_ format: TableFormat, directory: String, options: ImageTableWriter.Options, familyTag: UInt16) throws(ImageTableError) {
        self.format = format
        id = format.id
        self.familyTag = familyTag
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

    /// Whether the entity's entry is present, made from its source and readable (a hit would
    /// find it: its pixels checked at the first read since the open), without counting a use.
    func isFresh(_ entity: CacheEntity) -> Bool {
        table.hasImage(entityUUID: entity.entityUUID, sourceUUID: entity.sourceID)
    }
}

extension FormatTable {
    /// Reserves the entity's slot, waiting while another write holds the same key (a store of
    /// another source ID for it) or every slot is reserved: both end within one render.
    ///
    /// - Returns: the reservation, or `nil` when the table is full and `evicting` is `false`.
    func reserve(key: String, sourceUUID: UUID, evicting: Bool) throws(ImageTableError) -> SlotReservation? {
        var last: ImageTableError?
        for _ in 0..<2500 {
            do throws(ImageTableError) {
                // Before decoding (not `evicting`), never the key's entry: another fetch of this
                // key may have published it since ``holds(key:)`` was asked.
                var reservation = try table.reserve(key: key, sourceUUID: sourceUUID, evicting: evicting ? .leastRecentlyUsed : .none,
                                                    replacingOwn: evicting)
                reservation.familyTag = familyTag
                return reservation
            } catch let error where error.code == .full {
                return nil
            } catch let error where error.code == .busy {
                last = error
                usleep(2000)
            } catch {
                throw error.code == .invalidArgument
                    ? ImageTableError(.invalidRequest, error.message, key: key)
                    : .table(error, key: key, format: id)
            }
        }
        throw .table(last ?? ImageTableError(.busy, "no slot became free"), key: key, format: id)
    }

    func abandon(_ reservation: SlotReservation) { table.abandon(reservation) }

    func holds(key: String) -> Bool { table.contains(key: key) }
}
