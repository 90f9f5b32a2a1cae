import ArgumentParser
import Foundation
import ImageTableCore

/// What `imagetable inspect` reports about one table, gathered once and rendered as text or
/// JSON. The JSON field names are documented in docs/CLI.md ("inspect").
struct TableInspection: Encodable {
    struct Header: Encodable {
        let formatVersion: Int
        let name: String
        let family: String
        let scale: Int
        let style: String
        let width: Int
        let height: Int
        let bytesPerPixel: Int
        let bytesPerRow: Int
        let imageBytes: Int
        let slotStride: Int
        let slotsOffset: Int
        let pageSize: Int
        let capacity: Int
        let maxFileBytes: Int
        let protection: String
        let parametersHash: String
        let createdAt: UInt64
    }

    struct Entry: Encodable {
        let slot: Int
        let key: String
        let entityUUID: String
        let sourceUUID: String
        let recency: UInt64
        let writtenAt: UInt64
        let contentRect: PixelRect
        let pixelChecksum: String
        /// 4 hex digits: the family tag the entry was drawn for; absent when it has none.
        let familyTag: String?
    }

    struct Notice: Encodable {
        let kind: String
        let message: String
        let slot: Int?
    }

    let path: String
    let header: Header
    let entryCount: Int
    let capacity: Int
    let fileBytes: Int
    let allocatedBytes: Int
    let entryBytes: Int
    let maxFileBytes: Int
    let notices: [Notice]
    /// `nil` with `--no-entries`.
    let entries: [Entry]?

    /// Reads everything worth reporting from an open table.
    ///
    /// - Parameters:
    ///   - listing: which entries to list, in order; `nil` lists none.
    init(_ reader: ImageTableReader, listing: (([EntryInfo]) -> [EntryInfo])?) {
        let h = reader.header, l = h.layout
        path = reader.path
        header = Header(formatVersion: h.formatVersion, name: h.name, family: h.family, scale: h.scale,
                        style: l.style.rawValue, width: l.width, height: l.height, bytesPerPixel: l.style.bytesPerPixel,
                        bytesPerRow: l.bytesPerRow, imageBytes: l.imageBytes, slotStride: l.slotStride, slotsOffset: l.slotsOffset,
                        pageSize: l.pageSize, capacity: l.capacity, maxFileBytes: l.maxFileBytes, protection: h.protection.rawValue,
                        parametersHash: Self.hex(h.parametersHash), createdAt: h.createdAt)
        // Without a listing nothing but the header is read: a version 2 table counts its own
        // entries, so `--no-entries` costs the same for ten entries or a hundred million.
        let all = listing == nil ? nil : reader.entries()
        entryCount = all?.count ?? reader.count
        capacity = l.capacity
        var st = stat()
        let statted = stat(reader.path, &st) == 0
        fileBytes = statted ? Int(st.st_size) : 0
        allocatedBytes = statted ? Int(st.st_blocks) * 512 : 0
        entryBytes = entryCount * l.slotStride
        maxFileBytes = l.maxFileBytes
        notices = reader.notices.map { Notice(kind: $0.kind.rawValue, message: $0.message, slot: $0.slot) }
        entries = listing.map { order in
            order(all ?? []).map { e in
                Entry(slot: e.slot, key: e.key, entityUUID: e.entityUUID.uuidString.lowercased(),
                      sourceUUID: e.sourceUUID.uuidString.lowercased(), recency: e.recency, writtenAt: e.writtenAt,
                      contentRect: e.contentRect,
                      pixelChecksum: Self.hex32(e.pixelChecksum),
                      familyTag: e.familyTag == FamilyTag.unknown ? nil : String(format: "%04x", e.familyTag))
            }
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// Eight lowercase hex digits, as `zlib.crc32` prints with `%08x`.
    static func hex32(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}

/// The order and number of the entries `inspect` lists.
enum EntryOrder: String, CaseIterable, ExpressibleByArgument {
    /// Index order: slot 0 first.
    case slot
    /// By key, in Unicode scalar order.
    case key
    /// Most recently used first.
    case recency

    /// `entries` in this order, at most `limit` of them.
    func apply(_ entries: [EntryInfo], limit: Int?) -> [EntryInfo] {
        let sorted = switch self {
        case .slot: entries
        case .key: entries.sorted { ($0.key.unicodeScalars.lexicographicallyPrecedes($1.key.unicodeScalars)) }
        case .recency: entries.sorted { ($0.recency, $1.slot) > ($1.recency, $0.slot) }
        }
        return limit.map { Array(sorted.prefix($0)) } ?? sorted
    }
}
