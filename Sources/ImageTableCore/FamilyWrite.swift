import Foundation

/// A table a ``FamilyWrite`` writes into: a writer, and how it waits for a slot.
///
/// The bake and the runtime cache each wrap their writers (the bake publishes its pending batch
/// while every slot is reserved; the cache waits for other stores), and share the protocol of
/// ``FamilyWrite`` itself.
public protocol FamilyWriteTable {
    /// The table's format.
    var format: TableFormat { get }

    /// Whether the table holds an entry for `key` (from any source).
    ///
    /// - Parameter key: the entry's key.
    func holds(key: String) -> Bool

    /// Reserves a slot for `key`, as ``ImageTableWriter/reserve(key:sourceUUID:evicting:staged:replacingOwn:)`` does.
    ///
    /// - Parameters:
    ///   - key: the entry's key.
    ///   - sourceUUID: the source the pixels are made from.
    ///   - evicting: whether a full table may replace an entry of the table's choosing (the
    ///     cache's least recently used one; the one a bake's plan chose).
    /// - Returns: the reservation, or `nil` when the table is full and `evicting` is `false`.
    /// - Throws: ``ImageTableError`` when no slot can be had at all.
    func reserve(key: String, sourceUUID: UUID, evicting: Bool) throws(ImageTableError) -> SlotReservation?

    /// Gives a reservation back unpublished.
    ///
    /// - Parameter reservation: a reservation from ``reserve(key:sourceUUID:evicting:)``.
    func abandon(_ reservation: SlotReservation)
}

/// One source written into the tables of its family, so that a source that fails never costs
/// a good entry its place: reserve, render, then evict and place, then publish.
///
/// 1. ``init(key:sourceUUID:tables:scratch:)`` takes, in each table that does not hold the key, a
///    free slot, without evicting anything. A member whose table is full, or holds the key already
///    (its entry must stay until the new pixels are ready), gets a place in scratch memory instead.
/// 2. The caller renders every member into ``destinations``: in process through
///    `ImagePipeline`'s `ImageRenderer`, or in a worker that maps the same memory.
/// 3. Only once the source has decoded, ``complete(contentRects:sourceUUID:pixelChecksums:)`` takes the slots of the members
///    drawn in scratch memory (the key's own, replacing its old entry, or one made by eviction)
///    and copies them in. The caller then publishes the reservations (at once, or in batches).
///    A source that fails leaves every entry as it was, the key's previous image included.
///
/// On any failure before step 3 ends, ``abandon()`` gives every slot back unpublished.
public struct FamilyWrite {
    /// Where one member is rendered.
    public enum Destination {
        /// A reserved slot: the pixels go straight into the table.
        case slot(SlotReservation)
        /// Scratch memory at this offset, with the table's row size; placed by ``complete(contentRects:sourceUUID:pixelChecksums:)``.
        case scratch(offset: Int)
    }

    /// The entry's key.
    public let key: String
    /// The source the pixels are made from, as far as the caller knows before rendering.
    public let sourceUUID: UUID
    /// Where each table's member is rendered, in the order of the tables given.
    public private(set) var destinations: [Destination]
    private let tables: [any FamilyWriteTable]
    private let scratch: UnsafeMutableRawBufferPointer?

    /// The scratch memory a family of `formats` may need: room for every member, each at a
    /// 64-byte boundary.
    ///
    /// - Parameter formats: the family's formats.
    public static func scratchBytes(for formats: [TableFormat]) -> Int {
        formats.reduce(0) { $0 + Self.slotBytes($1) }
    }

    /// Reserves what can be had without evicting.
    ///
    /// - Parameters:
    ///   - key: the entry's key.
    ///   - sourceUUID: the source the pixels are made from.
    ///   - tables: the tables of the family that need the source.
    ///   - scratch: at least ``scratchBytes(for:)`` bytes for the members of full tables; with
    ///     `nil`, full tables evict at once (for callers that cannot fail after reserving).
    /// - Throws: ``ImageTableError`` when a table cannot give a slot; nothing stays reserved.
    public init(key: String, sourceUUID: UUID, tables: [any FamilyWriteTable],
                scratch: UnsafeMutableRawBufferPointer?) throws(ImageTableError) {
        self.key = key
        self.sourceUUID = sourceUUID
        self.tables = tables
        self.scratch = scratch
        var destinations: [Destination] = []
        var offset = 0
        for table in tables {
            do throws(ImageTableError) {
                let replacing = scratch != nil && table.holds(key: key)
                if !replacing, let r = try table.reserve(key: key, sourceUUID: sourceUUID, evicting: scratch == nil) {
                    destinations.append(.slot(r))
                } else {
                    guard let scratch, offset + Self.slotBytes(table.format) <= scratch.count else {
                        throw ImageTableError(.invalidArgument, "the scratch memory is too small for the family", key: key)
                    }
                    destinations.append(.scratch(offset: offset))
                    offset += Self.slotBytes(table.format)
                }
            } catch {
                Self.abandon(destinations, in: tables)
                throw error
            }
        }
        self.destinations = destinations
    }

    /// Render targets for every member, in order, for a caller that renders in this process.
    public var renderTargets: [RenderTarget] {
        zip(tables, destinations).map { table, destination in
            switch destination {
            case .slot(let r): return RenderTarget(format: table.format, reservation: r)
            case .scratch(let offset):
                let bytes = Self.slotBytes(table.format)
                let memory = UnsafeMutableRawBufferPointer(rebasing: scratch![offset..<offset + bytes])
                return RenderTarget(format: table.format, pixels: memory, bytesPerRow: Self.rowBytes(table.format))
            }
        }
    }

    /// Step 3, once every member is rendered: evicts to make room for the members rendered in
    /// scratch memory and copies them in, and sets every member's content rectangle.
    ///
    /// - Parameters:
    ///   - contentRects: one per member, in order, from the render.
    ///   - decoded: the argument `sourceUUID:`, the fingerprint of the bytes the render decoded,
    ///     when it is only known now (a worker reads the source once and fingerprints what it
    ///     decodes); ``sourceUUID`` when `nil`.
    ///   - pixelChecksums: each member's CRC-32 of its image bytes, when the renderer computed
    ///     them (a worker); `nil` to have publishing compute them.
    /// - Returns: the reservations to publish, in the order of the tables.
    /// - Throws: ``ImageTableError`` when a slot cannot be had; nothing stays reserved.
    public mutating func complete(contentRects: [PixelRect], sourceUUID decoded: UUID? = nil,
                                  pixelChecksums: [UInt32]? = nil) throws(ImageTableError) -> [SlotReservation] {
        guard contentRects.count == destinations.count else {
            abandon()
            throw ImageTableError(.invalidArgument, "\(contentRects.count) content rectangles for \(destinations.count) members", key: key)
        }
        var placed: [SlotReservation] = []
        for (i, destination) in destinations.enumerated() {
            var reservation: SlotReservation
            switch destination {
            case .slot(let r):
                reservation = r
            case .scratch(let offset):
                do throws(ImageTableError) {
                    guard let r = try tables[i].reserve(key: key, sourceUUID: decoded ?? sourceUUID, evicting: true) else {
                        throw ImageTableError(.full, "no slot could be made free", key: key)
                    }
                    reservation = r
                } catch {
                    destinations.replaceSubrange(0..<i, with: placed.map(Destination.slot))
                    abandon()
                    throw error
                }
                let bytes = reservation.pixels.count
                reservation.pixels.copyMemory(from: UnsafeRawBufferPointer(rebasing: scratch![offset..<offset + bytes]))
            }
            reservation.contentRect = contentRects[i]
            reservation.sourceUUID = decoded ?? sourceUUID
            if let pixelChecksums, pixelChecksums.count == destinations.count { reservation.pixelChecksum = pixelChecksums[i] }
            placed.append(reservation)
        }
        destinations = placed.map(Destination.slot)
        return placed
    }

    /// Gives every slot reserved so far back unpublished.
    public func abandon() {
        Self.abandon(destinations, in: tables)
    }

    private static func abandon(_ destinations: [Destination], in tables: [any FamilyWriteTable]) {
        for (table, destination) in zip(tables, destinations) {
            if case .slot(let r) = destination { table.abandon(r) }
        }
    }

    /// A table's row size: `roundUp(width × bytesPerPixel, 64)`, as ``TableLayout`` computes it.
    static func rowBytes(_ format: TableFormat) -> Int {
        (format.width * format.style.bytesPerPixel + TableLimits.rowAlignment - 1) / TableLimits.rowAlignment * TableLimits.rowAlignment
    }

    /// The image bytes of one member: its table's `imageBytes`, a multiple of 64.
    static func slotBytes(_ format: TableFormat) -> Int { rowBytes(format) * format.height }
}
