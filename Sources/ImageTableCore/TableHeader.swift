import Foundation

/// The 512-byte header at offset 0 (`docs/FORMAT.md`, "Header").
///
/// Decoding treats the bytes as hostile: every field is range-checked and every derived quantity
/// is recomputed and compared, so a header that decodes describes a layout that fits in memory.
public struct TableHeader: Sendable, Equatable {
    /// `89 49 54 42 0D 0A 1A 0A`.
    public static let magic: [UInt8] = [0x89, 0x49, 0x54, 0x42, 0x0D, 0x0A, 0x1A, 0x0A]
    /// The format version this code writes; it also reads version 1.
    public static let version: UInt32 = 2
    /// Offset of the header checksum; it covers bytes `0 ..< 252`.
    static let checksumOffset = 252
    /// Offset of the live `clock` field.
    static let clockOffset = 256
    /// Offset of the live `changeCount` field.
    static let changeCountOffset = 264
    /// Offset of the live `indexSelector` field (version 2): its low bit names the active bucket area.
    static let indexSelectorOffset = 272
    /// Offset of the live `entryCount` field (version 2).
    static let entryCountOffset = 280
    /// Offset of the live `usedBuckets` field (version 2).
    static let usedBucketsOffset = 288
    /// Offset of the live `recordsInUse` field (version 2).
    static let recordsInUseOffset = 296

    /// The layout the header describes.
    public let layout: TableLayout
    /// The format's name.
    public let name: String
    /// The format's family.
    public let family: String
    /// Who may read the file.
    public let protection: ProtectionMode
    /// The scale recorded by the writer.
    public let scale: Int
    /// The parameter hash recorded at creation.
    public let parametersHash: [UInt8]
    /// The file format version: 1 or 2.
    public var formatVersion: Int { layout.formatVersion }
    /// Creation time, seconds since 1970.
    public let createdAt: UInt64

    /// A header for a new table.
    ///
    /// - Parameters:
    ///   - format: the format.
    ///   - layout: its layout on this machine.
    ///   - createdAt: creation time in seconds since 1970.
    init(format: TableFormat, layout: TableLayout, createdAt: UInt64) {
        self.init(layout: layout, name: format.name, family: format.family, protection: format.protection,
                  scale: format.scale, parametersHash: format.parametersHash, createdAt: createdAt)
    }

    /// `150x150 32BitBGRA max 400 none`, as ``TableFormat/summary`` says it, for messages.
    public var summary: String {
        "\(layout.width)x\(layout.height) \(layout.style.rawValue) max \(layout.capacity) \(protection.rawValue)"
    }

    /// Writes the immutable 256 bytes, checksum included, and zeroes the live area.
    ///
    /// - Parameter base: the start of a 512-byte writable region.
    func encode(into base: UnsafeMutableRawPointer) {
        let raw = UnsafeMutableRawBufferPointer(start: base, count: TableLimits.headerBytes)
        raw.initializeMemory(as: UInt8.self, repeating: 0)
        raw.copyBytes(from: Self.magic)
        let l = layout
        let fields32: [(Int, Int)] = [
            (8, l.formatVersion), (12, TableLimits.headerBytes), (16, l.pageSize), (20, Int(l.style.code)),
            (24, l.width), (28, l.height), (32, l.style.bytesPerPixel), (36, l.bytesPerRow), (48, l.capacity),
            (52, Int(protection.code)), (56, TableLimits.recordBytes), (60, TableLimits.maxKeyBytes), (240, scale),
            (244, l.bucketCount),
        ]
        for (offset, value) in fields32 { base.storeLE(UInt32(value), at: offset) }
        for (offset, value) in [(40, l.slotStride), (64, TableLimits.indexOffset), (72, l.slotsOffset), (80, l.maxFileBytes)] {
            base.storeLE(UInt64(value), at: offset)
        }
        base.storeLE(createdAt, at: 104)
        for (i, b) in parametersHash.enumerated() { raw[88 + i] = b }
        for (i, b) in name.utf8.enumerated() { raw[112 + i] = b }
        for (i, b) in family.utf8.enumerated() { raw[176 + i] = b }
        let crc = CRC32.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<Self.checksumOffset]))
        base.storeLE(crc, at: Self.checksumOffset)
    }

    /// Decodes and validates a header.
    ///
    /// - Parameter bytes: at least the first 512 bytes of the file.
    /// - Throws: ``ImageTableError`` with code `notATable`, `unsupportedVersion` or `corrupt`.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(ImageTableError) -> TableHeader {
        guard bytes.count >= TableLimits.headerBytes else {
            throw ImageTableError(.notATable, "file is \(bytes.count) bytes, shorter than a table header (512)")
        }
        guard bytes.prefix(8).elementsEqual(magic) else {
            throw ImageTableError(.notATable, "not an image table (bad magic bytes)")
        }
        let base = bytes.baseAddress!
        func u32(_ o: Int) -> Int { Int(base.loadLE(UInt32.self, at: o)) }
        func u64(_ o: Int) -> UInt64 { base.loadLE(UInt64.self, at: o) }
        let formatVersion = u32(8)
        // The checksum first: every version keeps it at 252 over bytes 0–251 (FORMAT.md), so a
        // damaged version field is damage, not a later format that no writer may touch.
        let storedCRC = base.loadLE(UInt32.self, at: checksumOffset)
        guard CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<checksumOffset])) == storedCRC else {
            throw ImageTableError(.corrupt, "header checksum mismatch")
        }
        guard formatVersion == 1 || formatVersion == 2 else {
            // A later version is a table this build must not touch: writers rebuild a corrupt
            // table empty, and did so to a newer tool's tables (a CI cache shared by two
            // versions). A version no build writes is damage.
            if formatVersion == 0 || formatVersion > TableLimits.latestPlausibleVersion {
                throw ImageTableError(.corrupt, "header names format version \(formatVersion), which no imagetable writes")
            }
            throw ImageTableError(.unsupportedVersion, "table format version \(formatVersion) is newer than this build reads (versions 1 and 2)")
        }
        guard u32(12) == TableLimits.headerBytes, u32(56) == TableLimits.recordBytes,
              u32(60) == TableLimits.maxKeyBytes, u64(64) == UInt64(TableLimits.indexOffset) else {
            throw ImageTableError(.corrupt, "header describes an unknown layout")
        }
        guard let style = PixelStyle(code: UInt32(u32(20))) else { throw ImageTableError(.corrupt, "unknown pixel style code \(u32(20))") }
        guard let protection = ProtectionMode(code: UInt32(u32(52))) else {
            throw ImageTableError(.corrupt, "unknown protection code \(u32(52))")
        }
        let layout: TableLayout
        do {
            layout = try TableLayout(width: u32(24), height: u32(28), style: style, capacity: u32(48), pageSize: u32(16),
                                     version: formatVersion)
        } catch {
            throw ImageTableError(.corrupt, "header layout is invalid: \(error.message)")
        }
        guard u32(32) == style.bytesPerPixel, u32(36) == layout.bytesPerRow, u64(40) == UInt64(layout.slotStride),
              u64(72) == UInt64(layout.slotsOffset), u64(80) == UInt64(layout.maxFileBytes),
              formatVersion == 1 || u32(244) == layout.bucketCount else {
            throw ImageTableError(.corrupt, "header sizes disagree with the layout rules")
        }
        func text(_ offset: Int) throws(ImageTableError) -> String {
            let field = bytes[offset..<offset + 64]
            let used = field.prefix { $0 != 0 }
            guard used.count <= TableLimits.maxNameBytes, field.dropFirst(used.count).allSatisfy({ $0 == 0 }),
                  let s = String(validating: used, as: UTF8.self) else {
                throw ImageTableError(.corrupt, "header name field is not NUL-padded UTF-8")
            }
            return s
        }
        return TableHeader(layout: layout, name: try text(112), family: try text(176), protection: protection,
                           scale: u32(240), parametersHash: Array(bytes[88..<104]), createdAt: u64(104))
    }

    init(layout: TableLayout, name: String, family: String, protection: ProtectionMode, scale: Int,
                 parametersHash: [UInt8], createdAt: UInt64) {
        self.layout = layout
        self.name = name
        self.family = family
        self.protection = protection
        self.scale = scale
        self.parametersHash = parametersHash
        self.createdAt = createdAt
    }
}

extension UnsafeRawPointer {
    /// Loads a little-endian integer at a byte offset, unaligned.
    @inline(__always) func loadLE<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

extension UnsafeMutableRawPointer {
    /// Loads a little-endian integer at a byte offset, unaligned.
    @inline(__always) func loadLE<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        UnsafeRawPointer(self).loadLE(T.self, at: offset)
    }

    /// Stores a little-endian integer at a byte offset, unaligned.
    @inline(__always) func storeLE<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
    }
}
