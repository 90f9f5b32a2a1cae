/// The documented bounds of the format (`docs/FORMAT.md`), checked by writers, readers and the
/// manifest validator alike.
public enum TableLimits {
    /// Largest width or height of a slot, in pixels.
    public static let maxDimension = 16_384
    /// Largest capacity (`maximumCount`) of one table: 100 million, so that one table can hold a
    /// collection of ten million sources ten times over. The index of buckets and records is
    /// allocated as it is used, so a large capacity costs nothing until it is filled.
    public static let maxCapacity = 100_000_000
    /// Largest capacity of a version 1 table, whose whole index was scanned at every open.
    public static let maxCapacityVersion1 = 1_000_000
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
    /// Size of one bucket of the hash index (version 2).
    public static let bucketBytes = 8
    /// Smallest and largest page size a header may record.
    public static let pageSizes = 4096...65536
    /// Rows start on multiples of this many bytes.
    public static let rowAlignment = 64
    /// The largest format version taken for a later format rather than damage: a table that
    /// names one is left alone (`unsupported-version`), where a corrupt one is rebuilt.
    public static let latestPlausibleVersion = 255
}
