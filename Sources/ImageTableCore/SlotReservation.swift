import Foundation

/// A slot set aside for one entry that is being written: the caller fills ``pixels`` and hands
/// the reservation back to ``ImageTableWriter/publish(_:)`` (or ``ImageTableWriter/abandon(_:)``).
///
/// Until then the slot's record has an odd generation, so readers miss it and a crash leaves an
/// empty record. The memory is the mapped slot itself: rendering into it is the only copy.
public struct SlotReservation: @unchecked Sendable {
    /// The slot index.
    public let slot: Int
    /// The entry's key.
    public let key: String
    /// `uuid5(EntityKey.namespace, key)`.
    public let entityUUID: UUID
    /// The source the pixels are made from; a bake sets it once the worker has said which bytes
    /// it decoded.
    public var sourceUUID: UUID
    /// The key of the entry this write evicted to make room, if any.
    public let evictedKey: String?
    /// Whether the key already had an entry, which this write replaces in the same slot.
    public let replacesExisting: Bool
    /// The slot's memory: `height × bytesPerRow` bytes, to be filled in the table's style.
    public let pixels: UnsafeMutableRawBufferPointer
    /// Slot width in pixels.
    public let width: Int
    /// Slot height in pixels.
    public let height: Int
    /// Distance between row starts.
    public let bytesPerRow: Int
    /// The style the pixels must be in.
    public let style: PixelStyle
    /// The part of the slot the image covers; the whole slot unless the filler says otherwise.
    public var contentRect: PixelRect
    /// When the source was last modified, in nanoseconds since 1970, for the record (0: unknown).
    /// A bake sets it so that `imagetable merge` can rank entries as the bake ranks sources.
    public var sourceModifiedNs: Int64 = 0
    /// The ``FamilyTag`` of the formats the pixels are drawn beside, for the record
    /// (``FamilyTag/unknown`` unless the filler says).
    public var familyTag: UInt16 = FamilyTag.unknown
    /// The CRC-32 of ``pixels`` when whoever filled them computed it (a worker process, while
    /// the pixels were in its cache); `nil` makes ``ImageTableWriter/publish(_:)`` compute it.
    /// A wrong value is caught like any damage: readers and `verify` check it against the pixels.
    public var pixelChecksum: UInt32?
    /// Whether ``pixels`` is the writer's own memory rather than the slot (a slot that held an
    /// entry, reserved with `staged`): the pixels reach the slot when the reservation is
    /// published, so no other process may be told to write the slot.
    public var isStaged = false
    /// The odd generation the record carries while reserved: the token another process shows
    /// ``DelegatedSlots`` to prove the slot is still reserved for it.
    public let generation: UInt64
    let owner: ObjectIdentifier
}

/// What a write did, for summaries.
public struct WriteOutcome: Sendable, Equatable {
    /// The slot written.
    public let slot: Int
    /// The key evicted to make room, if any.
    public let evictedKey: String?
    /// Whether an existing entry for the key was replaced.
    public let replacedExisting: Bool
}
