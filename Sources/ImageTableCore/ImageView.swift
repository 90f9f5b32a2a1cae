import Foundation

/// A rectangle of pixels inside a slot.
public struct PixelRect: Sendable, Equatable, Hashable, Codable, CustomStringConvertible {
    /// Left edge, in pixels from the slot's left.
    public var x: Int
    /// Top edge, in pixels from the slot's top.
    public var y: Int
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// Creates a rectangle.
    ///
    /// - Parameters:
    ///   - x: left edge.
    ///   - y: top edge.
    ///   - width: width in pixels.
    ///   - height: height in pixels.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// `x,y widthxheight`.
    public var description: String { "\(x),\(y) \(width)x\(height)" }
}

/// A zero-copy view of one entry's pixels inside a mapped table.
///
/// The memory belongs to the table's mapping: a view is valid while the table stays open and,
/// when a writer may be changing the table, only inside the closure of a checked read
/// (``ImageTableWriter/withImage(forKey:sourceUUID:_:)``), which detects a concurrent replacement.
public struct ImageView {
    /// The first byte of row 0.
    public let baseAddress: UnsafeRawPointer
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Distance between row starts; a multiple of 64.
    public let bytesPerRow: Int
    /// The pixel style.
    public let style: PixelStyle
    /// The part of the slot the image covers (the whole slot except for `inside` fits).
    public let contentRect: PixelRect
    /// The entry's entity UUID.
    public let entityUUID: UUID
    /// The source UUID the pixels were made from.
    public let sourceUUID: UUID

    /// All rows, padding included: `bytesPerRow × height` bytes.
    public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: baseAddress, count: bytesPerRow * height) }

    /// The pixels of row `y`, without padding.
    ///
    /// - Parameter y: the row, `0 ..< height`.
    public func row(_ y: Int) -> UnsafeRawBufferPointer {
        precondition(y >= 0 && y < height, "row \(y) outside 0..<\(height)")
        return UnsafeRawBufferPointer(start: baseAddress + y * bytesPerRow, count: width * style.bytesPerPixel)
    }
}

/// What the index says about one entry, copied out of the mapping.
public struct EntryInfo: Sendable, Equatable, Codable {
    /// The user's key.
    public let key: String
    /// `uuid5(EntityKey.namespace, key)`.
    public let entityUUID: UUID
    /// The source the pixels were made from.
    public let sourceUUID: UUID
    /// The slot (and record) index.
    public let slot: Int
    /// The LRU stamp; larger is more recent.
    public let recency: UInt64
    /// The part of the slot the image covers.
    public let contentRect: PixelRect
    /// CRC-32 of the slot's image bytes.
    public let pixelChecksum: UInt32
    /// When the entry was written, seconds since 1970.
    public let writtenAt: UInt64
    /// When the source the entry was made from was last modified, in nanoseconds since 1970, as
    /// the writer said (a bake records each source's, and records it again when the source is
    /// touched without changing: ``ImageTableWriter/updateSourceModified(_:)``); 0 when unknown
    /// (and in version 1 tables). `imagetable merge` ranks entries by it, as a bake ranks sources.
    public let sourceModifiedNs: Int64
    /// The ``FamilyTag`` of the formats the entry was drawn beside; ``FamilyTag/unknown`` when
    /// its writer did not say.
    public let familyTag: UInt16
}

/// Something an open did on the caller's behalf that the caller should tell its user about.
public struct TableNotice: Sendable, Equatable, CustomStringConvertible {
    /// The kinds of notice.
    public enum Kind: String, Sendable {
        /// The table's parameters differed from the descriptor (or it was damaged); it was rebuilt empty.
        case reset
        /// A write interrupted by a crash was discarded.
        case discardedInterruptedWrite = "discarded-interrupted-write"
        /// A damaged index record was dropped (writers) or skipped (readers).
        case damagedRecord = "damaged-record"
        /// A temporary file left by a killed writer was removed.
        case removedTemporaryFile = "removed-temporary-file"
        /// The hash index did not lead to a committed entry (a reader skipped it), or was
        /// rebuilt by a writer because of that.
        case damagedIndex = "damaged-index"
        /// A version 1 table was rewritten as version 2 by the first writer to open it.
        case upgraded
        /// The file let more users read it than its protection allows, and a writer that owns
        /// it tightened its permissions.
        case tightenedPermissions = "tightened-permissions"
        /// Entries drawn beside other formats than their family has now (their ``FamilyTag`` is
        /// another's) are drawn again (a bake's notice; the table itself is sound).
        case rerendered
    }

    /// What happened.
    public let kind: Kind
    /// A sentence for people.
    public let message: String
    /// The slot concerned, if any.
    public let slot: Int?
    /// What was found, without the slot or what was done about it: where a reader's `message`
    /// is "slot 3: interrupted write; skipped it", `finding` is "interrupted write", for a caller
    /// that says it its own way or does something else about it (an export refuses the table).
    public let finding: String
    /// The key of the entry concerned, where its record still names one that can be trusted
    /// (its record checksum holds): what `verify` names, and a merge's warning and `extract`'s
    /// error say of an entry left out.
    public let key: String?

    /// Creates a notice.
    ///
    /// - Parameters:
    ///   - kind: what happened.
    ///   - message: a sentence for people.
    ///   - slot: the slot concerned, if any.
    ///   - finding: what was found, without the slot or what was done about it; `message`
    ///     when `nil`.
    ///   - key: the entry's key, where its record names one that can be trusted.
    public init(kind: Kind, message: String, slot: Int?, finding: String? = nil, key: String? = nil) {
        self.kind = kind
        self.message = message
        self.slot = slot
        self.finding = finding ?? message
        self.key = key
    }

    /// The finding with its slot, and the entry's key when asked and known: "slot 3: interrupted
    /// write", "slot 3 ('cat'): record checksum mismatch"; the finding alone when no slot is
    /// concerned. For a caller that goes on to say what it does about it.
    ///
    /// - Parameter naming: whether to name the entry's key, where ``key`` is known.
    /// - Returns: the phrase.
    public func located(naming: Bool = false) -> String {
        let named = naming ? key.map { " (\(PrintableText.quoted($0)))" } ?? "" : ""
        return slot.map { "slot \($0)\(named): \(finding)" } ?? finding
    }

    /// Whether a listing of the table's entries left an entry out for it: a damaged record, or
    /// a sound one the damaged hash index does not lead to (readers miss it).
    public var skipsEntry: Bool { kind == .damagedRecord || kind == .damagedIndex }

    /// `notice: message [kind]`.
    public var description: String { "notice: \(message) [\(kind.rawValue)]" }
}
