import Foundation
import ImageBake
import ImageManifest
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A temporary project: a `src/` directory of sources and a manifest writing to `tables/`.
final class BakeProject: @unchecked Sendable {
    let root: String
    var sources: String { root + "/src" }
    var tables: String { root + "/tables" }
    var manifestPath: String { root + "/manifest.yaml" }

    /// Creates the project with `formats` (YAML for the family's `formats:` map, indented by 6).
    init(formats: String = BakeProject.fourStyles(size: 24, maximumCount: 50), include: String? = nil) throws {
        root = NSTemporaryDirectory() + "bake-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root + "/src", withIntermediateDirectories: true)
        var yaml = "version: 1\noutput: tables\nfamilies:\n  photos:\n    sources: src\n"
        if let include { yaml += "    include: [\"\(include)\"]\n" }
        yaml += "    formats:\n" + formats
        try yaml.write(toFile: manifestPath, atomically: true, encoding: .utf8)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// FastImageCache's demo family: one format per style, square, cover.
    static func fourStyles(size: Int, maximumCount: Int) -> String {
        [("bgra", "32BitBGRA"), ("bgr", "32BitBGR"), ("rgb555", "16BitBGR"), ("grey", "8BitGrayscale")].map { name, style in
            "      \(name):\n        size: \(size)x\(size)\n        style: \(style)\n        maximumCount: \(maximumCount)\n"
        }.joined()
    }

    /// Copies a file into `src/` under `key`.
    func add(_ key: String, from path: String) throws {
        let target = sources + "/" + key
        try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: target)
        try FileManager.default.copyItem(atPath: path, toPath: target)
    }

    /// Writes bytes into `src/` under `key`.
    func add(_ key: String, bytes: [UInt8]) {
        _ = FileManager.default.createFile(atPath: sources + "/" + key, contents: Data(bytes))
    }

    func manifest() throws -> Manifest {
        let report = ManifestValidator(options: ValidationOptions()).validate(fileAt: manifestPath)
        return try #require(report.manifest, "\(report.diagnostics)")
    }

    func bake(jobs: Int = 2, configure: (inout BakeOptions) -> Void = { _ in }) throws -> BakeSummary {
        var options = BakeOptions(workerCommand: [Products.worker, "bake"])
        options.jobs = jobs
        options.durability = .processCrashOnly
        configure(&options)
        return try Baker.bake(try manifest(), options: options)
    }
}

enum Corpus {
    static var root: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../shared/corpus").standardized.path
    }

    static func photo(_ name: String) -> String { root + "/photos/\(name).jpg" }
    static var pngSuite: String { root + "/pngsuite/png" }
}

/// The package's build products, next to the running test binary.
enum Products {
    static var directory: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        while dir.path != "/" && !FileManager.default.fileExists(atPath: dir.appendingPathComponent("imagetable").path) {
            dir = dir.deletingLastPathComponent()
        }
        return dir.path
    }

    static var imagetable: String { directory + "/imagetable" }
    static var worker: String { directory + "/imagetable-worker" }
}

/// Runs the CLI and returns its exit status, standard output and standard error.
func runCLI(_ arguments: [String], in directory: String? = nil) throws -> (status: Int32, out: String, err: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: Products.imagetable)
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
}
