import Foundation
import TestSupport
import Testing

/// The runtime cache's examples in README.md and docs/RUNTIME.md compile as written, against
/// this build's modules: a reviewer who pasted them found they named `TableFormat` and
/// `SourceImage` without importing the module that has them, and `URLSession` without
/// FoundationNetworking, which Linux needs.
struct RuntimeExampleTests {
    /// What the examples take as given: the app's own functions and values.
    static let stubs = """

        func makeTexture(_ view: ImageView) -> Int { view.bytesPerRow }
        func show(_ image: CachedImage) {}
        func showPlaceholder() {}
        """

    /// The `swift` blocks of a document, by their first line.
    static func blocks(_ document: String) throws -> [String] {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../\(document)").standardized.path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return text.components(separatedBy: "```swift\n").dropFirst().map { String($0[..<($0.range(of: "```")?.lowerBound ?? $0.endIndex)]) }
    }

    /// Type-checks `source` as a program's main file against the modules of this build; returns
    /// the compiler's errors, or `nil` when no compiler is at hand.
    static func typecheck(_ source: String) throws -> String? {
        let swiftc = ["/usr/bin/swiftc", "/opt/swift/usr/bin/swiftc"].first { FileManager.default.isExecutableFile(atPath: $0) }
            ?? ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":").map { "\($0)/swiftc" }
                .first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let swiftc else { return nil }
        let build = Products.directory
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized.path
        // The C modules the library modules import: SwiftPM's generated maps and the package's own.
        let maps = ((try? FileManager.default.contentsOfDirectory(atPath: build)) ?? []).map { "\(build)/\($0)/module.modulemap" }
            + ((try? FileManager.default.contentsOfDirectory(atPath: package + "/Sources")) ?? []).map { "\(package)/Sources/\($0)/module.modulemap" }
        let file = NSTemporaryDirectory() + "runtime-example-\(UUID().uuidString)/main.swift"
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: (file as NSString).deletingLastPathComponent) }
        try (source + stubs).write(toFile: file, atomically: true, encoding: .utf8)
        let result = try run(swiftc, ["-typecheck", "-swift-version", "6", "-I", build + "/Modules"]
                             + maps.filter { FileManager.default.fileExists(atPath: $0) }.flatMap { ["-Xcc", "-fmodule-map-file=\($0)"] }
                             + [file])
        return result.status == 0 ? "" : result.stdout + result.stderr
    }

    @Test func theRuntimeDocumentsExamplesCompile() throws {
        let runtime = try Self.blocks("docs/RUNTIME.md")
        let main = try #require(runtime.first { $0.contains("struct Downloads") })
        let errors = try #require(runtime.first { $0.contains("do throws(ImageTableError)") })
        // The errors example runs where a cache and an entity are at hand.
        let program = main + "\nfunc errorsExample(cache: ImageCache, entity: CacheEntity) async {\n" + errors + "}\n"
        guard let failures = try Self.typecheck(program) else { return }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func theReadmesExampleCompiles() throws {
        let readme = try #require(try Self.blocks("README.md").first { $0.contains("import ImageCacheVips") })
        // The README leaves out the provider and the entity's tag, which docs/RUNTIME.md shows.
        let given = "\nstruct Downloads: SourceProvider {\n    func source(for entity: CacheEntity, format: TableFormat) async throws -> SourceImage "
            + "{ .data(Data()) }\n}\nlet etag = \"5f1c\"\n"
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false)
        let imports = lines.filter { $0.hasPrefix("import ") }, code = lines.filter { !$0.hasPrefix("import ") }
        let program = (["import Foundation"] + imports).joined(separator: "\n") + given + code.joined(separator: "\n")
        guard let failures = try Self.typecheck(program) else { return }
        #expect(failures.isEmpty, "\(failures)")
    }
}
