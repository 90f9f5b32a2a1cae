/// The documented bounds of the format (`docs/FORMAT.md`), checked by writers, readers and the
/// manifest validator alike.
public enum TableLimits {
    /// Largest width or height of a slot, in pixels.
    public static let maxDimension = 16_384
    /// Largest capacity (`maximumCount`) of one table.
    public static let maxCapacity = 1_000_000
    /// Longest key, in UTF-8 bytes.
    public static let maxKeyBytes = 160
    /// Longest format or family name, in UTF-8 bytes.
    public static let maxNameBytes = 63
    /// Size of the header at offset 0.
    public static let headerBytes = 512
    /// Size of one index record.
    public static let recordBytes = 256
    /// Offset of the first index record.
    public static let indexOffset = 512
    /// Smallest and largest page size a header may record.
    public static let pageSizes = 4096...65536
    /// Rows start on multiples of this many bytes.
    public static let rowAlignment = 64
}
