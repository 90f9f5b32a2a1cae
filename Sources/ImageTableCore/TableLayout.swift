#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where everything lives in a table file: the arithmetic of `docs/FORMAT.md`, "File layout".
///
/// Every quantity is computed with overflow checks; a layout that cannot be represented is an
/// error, not a trap. The manifest validator uses this type to size tables before any exist.
public struct TableLayout: Sendable, Equatable {
    /// The file format version the layout follows: 2 for every table written now, 1 for tables
    /// written before the hash index (read, and upgraded by the first writer).
    public let formatVersion: Int
    /// Slot width in pixels.
    public let width: Int
    /// Slot height in pixels.
    public let height: Int
    /// The pixel style of every slot.
    public let style: PixelStyle
    /// The number of slots.
    public let capacity: Int
    /// The alignment of slots.
    public let pageSize: Int
    /// `roundUp(width × bytesPerPixel, 64)`.
    public let bytesPerRow: Int
    /// `bytesPerRow × height`: the bytes of one image, padding included.
    public let imageBytes: Int
    /// `roundUp(imageBytes, pageSize)`: the distance between slot starts.
    public let slotStride: Int
    /// Buckets in each of the two areas of the hash index: the smallest power of two at least
    /// twice the capacity (version 2; 0 in version 1, which has no hash index).
    public let bucketCount: Int
    /// Offset of bucket area 0, right after the records (version 2; 0 in version 1).
    public let bucketsOffset: Int
    /// Offset of slot 0.
    public let slotsOffset: Int
    /// The size of a full table; the file never grows past it.
    public let maxFileBytes: Int

    /// Computes the layout of a table.
    ///
    /// - Parameters:
    ///   - width: slot width in pixels, 1 … ``TableLimits/maxDimension``.
    ///   - height: slot height in pixels, 1 … ``TableLimits/maxDimension``.
    ///   - style: the pixel style.
    ///   - capacity: the number of slots, 1 … ``TableLimits/maxCapacity`` (1 …
    ///     ``TableLimits/maxCapacityVersion1`` in version 1).
    ///   - pageSize: slot alignment; defaults to this machine's page size.
    ///   - version: the file format version, 2 (the one written) by default.
    /// - Throws: ``ImageTableError`` with code `invalidLayout` for out-of-range values or overflow.
    public init(width: Int, height: Int, style: PixelStyle, capacity: Int, pageSize: Int = TableLayout.systemPageSize,
                version: Int = Int(TableHeader.version)) throws(ImageTableError) {
        func invalid(_ why: String) -> ImageTableError { ImageTableError(.invalidLayout, why) }
        guard version == 1 || version == 2 else { throw invalid("format version \(version) is not 1 or 2") }
        let maxCapacity = version == 1 ? TableLimits.maxCapacityVersion1 : TableLimits.maxCapacity
        guard (1...TableLimits.maxDimension).contains(width), (1...TableLimits.maxDimension).contains(height) else {
            throw invalid("pixel size \(width)×\(height) is outside 1…\(TableLimits.maxDimension)")
        }
        guard (1...maxCapacity).contains(capacity) else {
            throw invalid("capacity \(capacity) is outside 1…\(maxCapacity)")
        }
        guard TableLimits.pageSizes.contains(pageSize), pageSize & (pageSize - 1) == 0 else {
            throw invalid("page size \(pageSize) is not a power of two in 4096…65536")
        }
        let buckets = version == 1 ? 0 : Self.bucketCount(capacity: capacity)
        guard let rowBytes = Checked.roundUp(Checked.mul(width, style.bytesPerPixel), TableLimits.rowAlignment),
              let image = Checked.mul(rowBytes, height),
              let stride = Checked.roundUp(image, pageSize),
              let recordsEnd = Checked.add(TableLimits.indexOffset, Checked.mul(capacity, TableLimits.recordBytes)),
              let indexEnd = Checked.add(recordsEnd, Checked.mul(2 * buckets, TableLimits.bucketBytes)),
              let slots = Checked.roundUp(indexEnd, pageSize),
              let maxFile = Checked.add(slots, Checked.mul(capacity, stride))
        else { throw invalid("table size overflows 64 bits") }
        formatVersion = version
        self.width = width
        self.height = height
        self.style = style
        self.capacity = capacity
        self.pageSize = pageSize
        bytesPerRow = rowBytes
        imageBytes = image
        slotStride = stride
        bucketCount = buckets
        bucketsOffset = version == 1 ? 0 : recordsEnd
        slotsOffset = slots
        maxFileBytes = maxFile
    }

    /// The smallest power of two at least `2 × capacity`: the hash index is at most half full
    /// of live entries, so a lookup probes about 1.5 buckets and a miss about 2.5.
    static func bucketCount(capacity: Int) -> Int {
        var n = 2
        while n < 2 * capacity { n <<= 1 }
        return n
    }

    /// Offset of index record `index`.
    public func recordOffset(_ index: Int) -> Int { TableLimits.indexOffset + index * TableLimits.recordBytes }

    /// Offset of slot `index`.
    public func slotOffset(_ index: Int) -> Int { slotsOffset + index * slotStride }

    /// The bytes a writer puts into a slot: the image and the zero padding up to the end of
    /// this machine's page, so that every page it writes is a whole one (the file system then
    /// neither zeroes the rest of a page nor reads it back from the disk). That is the whole
    /// slot, `slotStride`, unless the table was made with a larger page than this machine's.
    public var writtenSlotBytes: Int {
        min(slotStride, Checked.roundUp(imageBytes, Self.systemPageSize) ?? slotStride)
    }

    /// Offset of bucket area `area` (0 or 1) of the hash index (version 2).
    public func bucketAreaOffset(_ area: Int) -> Int { bucketsOffset + area * bucketCount * TableLimits.bucketBytes }

    /// The page size of this machine.
    public static var systemPageSize: Int { max(4096, Int(sysconf(Int32(_SC_PAGESIZE)))) }
}

/// Overflow-checked arithmetic that returns `nil` instead of trapping, so that sizes read from
/// an untrusted file become typed errors.
enum Checked {
    static func add(_ a: Int?, _ b: Int?) -> Int? {
        guard let a, let b else { return nil }
        let (r, o) = a.addingReportingOverflow(b)
        return o ? nil : r
    }

    static func mul(_ a: Int?, _ b: Int?) -> Int? {
        guard let a, let b else { return nil }
        let (r, o) = a.multipliedReportingOverflow(by: b)
        return o ? nil : r
    }

    static func roundUp(_ value: Int?, _ multiple: Int) -> Int? {
        guard let value, value >= 0, multiple > 0 else { return nil }
        guard let bumped = add(value, multiple - 1) else { return nil }
        return bumped / multiple * multiple
    }
}
