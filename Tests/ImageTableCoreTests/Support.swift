import TestSupport
import Foundation
@testable import ImageTableCore
#if canImport(Glibc)
import Glibc
#endif

/// A descriptor for small test tables.
func descriptor(_ name: String = "test", width: Int = 7, height: Int = 5, style: PixelStyle = .bgra32,
                capacity: Int = 4, protection: ProtectionMode = .none, rendering: RenderingOptions = RenderingOptions()) -> TableFormat {
    TableFormat(name: name, family: "family", width: width, height: height, style: style, capacity: capacity,
                protection: protection, rendering: rendering)
}

/// Deterministic, position-dependent pixels for `key`: every byte differs from its neighbours,
/// so a misplaced row or pixel shows.
func pattern(for key: String, layout: TableLayout, bytesPerRow: Int? = nil) -> [UInt8] {
    let stride = bytesPerRow ?? layout.width * layout.style.bytesPerPixel
    let seed = key.utf8.reduce(UInt32(2166136261)) { ($0 ^ UInt32($1)) &* 16777619 }
    var out = [UInt8](repeating: 0, count: stride * layout.height)
    for y in 0..<layout.height {
        for x in 0..<(layout.width * layout.style.bytesPerPixel) {
            out[y * stride + x] = UInt8(truncatingIfNeeded: seed &+ UInt32(y &* 131 &+ x &* 7))
        }
    }
    if layout.style == .bgra32 {
        // Premultiplied: colour never exceeds alpha.
        for i in Swift.stride(from: 0, to: out.count - 3, by: 4) { out[i + 3] = max(out[i + 3], max(out[i], out[i + 1], out[i + 2])) }
    }
    return out
}

/// Opens a writer that skips flushes: the tests that need flushing say so.
func openTable(_ path: String, _ d: TableFormat, durability: ImageTableWriter.Durability = .processCrashOnly) throws -> ImageTableWriter {
    try ImageTableWriter(path: path, format: d, options: .init(lockTimeout: 2, durability: durability))
}

/// Writes `pattern(for: key)` as `key`'s entry.
@discardableResult
func put(_ table: ImageTableWriter, _ key: String, source: UUID = UUID()) throws -> WriteOutcome {
    let pixels = pattern(for: key, layout: table.layout)
    return try pixels.withUnsafeBytes { try table.write(key: key, sourceUUID: source, pixels: $0, bytesPerRow: table.layout.width * table.layout.style.bytesPerPixel) }
}

/// The rows of an entry without padding, concatenated.
func rows(of view: ImageView) -> [UInt8] {
    (0..<view.height).flatMap { Array(view.row($0)) }
}
