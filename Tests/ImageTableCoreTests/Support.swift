import Foundation
@testable import ImageTableCore
#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under the system temporary directory, removed when the value is dropped.
final class TemporaryDirectory: @unchecked Sendable {
    let path: String

    init() throws {
        let template = NSTemporaryDirectory() + "imagetable-test-XXXXXX"
        var bytes = Array(template.utf8CString)
        guard mkdtemp(&bytes) != nil else { throw TableError(.io, "mkdtemp failed") }
        path = String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func file(_ name: String) -> String { "\(path)/\(name)" }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Paths of the package's build products, next to the running test binary.
enum Products {
    static var directory: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        // On some layouts the test binary sits inside an .xctest bundle directory.
        while dir.path != "/" && !FileManager.default.fileExists(atPath: dir.appendingPathComponent("ImageTableFixture").path) {
            dir = dir.deletingLastPathComponent()
        }
        return dir.path
    }

    static var fixture: String { directory + "/ImageTableFixture" }
}

/// Runs a program to completion and returns its exit status and standard output.
@discardableResult
func run(_ program: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// A descriptor for small test tables.
func descriptor(_ name: String = "test", width: Int = 7, height: Int = 5, style: PixelStyle = .bgra32,
                capacity: Int = 4, protection: ProtectionMode = .none, rendering: String = "") -> FormatDescriptor {
    FormatDescriptor(name: name, family: "family", width: width, height: height, style: style, capacity: capacity,
                     protection: protection, renderingSignature: rendering)
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
func openTable(_ path: String, _ d: FormatDescriptor, durability: ImageTable.Durability = .processCrashOnly) throws -> ImageTable {
    try ImageTable(path: path, descriptor: d, options: .init(lockTimeout: 2, durability: durability))
}

/// Writes `pattern(for: key)` as `key`'s entry.
@discardableResult
func put(_ table: ImageTable, _ key: String, source: UUID = UUID()) throws -> WriteOutcome {
    let pixels = pattern(for: key, layout: table.layout)
    return try pixels.withUnsafeBytes { try table.write(key: key, sourceUUID: source, pixels: $0, bytesPerRow: table.layout.width * table.layout.style.bytesPerPixel) }
}

/// The rows of an entry without padding, concatenated.
func rows(of view: ImageView) -> [UInt8] {
    (0..<view.height).flatMap { Array(view.row($0)) }
}
