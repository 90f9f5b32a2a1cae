import Foundation
import ImageBake
import ImageManifest
import ImageTableCore
import TestSupport
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

    /// Sets the modification time of `src/key` to `seconds` before now (the over-full rule picks
    /// the most recently modified).
    func setModified(_ key: String, secondsAgo seconds: Int) {
        let date = Date().addingTimeInterval(-Double(seconds))
        try? FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: sources + "/" + key)
    }

    /// Writes bytes into `src/` under `key`.
    func add(_ key: String, bytes: [UInt8]) {
        _ = FileManager.default.createFile(atPath: sources + "/" + key, contents: Data(bytes))
    }

    /// Installs `imagetable` in `bin/` with `worker` beside it as its `imagetable-worker`, for a
    /// command that must start that worker; returns the command's path. `imagetable` is
    /// hard-linked where it can be, not copied: a copy's write descriptor, inherited by a worker
    /// that a test running meanwhile spawns, makes running the copy fail with "Text file busy".
    func installCommand(withWorker worker: String) throws -> String {
        let bin = root + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        do {
            try FileManager.default.linkItem(atPath: Products.imagetable, toPath: bin + "/imagetable")
        } catch {
            try FileManager.default.copyItem(atPath: Products.imagetable, toPath: bin + "/imagetable")
        }
        try FileManager.default.moveItem(atPath: worker, toPath: bin + "/imagetable-worker")
        return bin + "/imagetable"
    }

    /// Rewrites the manifest's text.
    func editManifest(_ edit: (String) -> String) throws {
        let text = try String(contentsOfFile: manifestPath, encoding: .utf8)
        try edit(text).write(toFile: manifestPath, atomically: true, encoding: .utf8)
    }

    /// Renames a format in the manifest (its table gets another file name).
    func renameFormat(_ name: String, to new: String) throws {
        try editManifest { $0.replacingOccurrences(of: "      \(name):\n", with: "      \(new):\n") }
    }

    /// Every table's entries: table file → key → source UUID and pixel checksum.
    func entries() throws -> [String: [String: String]] {
        var all: [String: [String: String]] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: tables)) ?? [] where name.hasSuffix(".imagetable") {
            let reader = try ImageTableReader(path: tables + "/" + name)
            all[name] = Dictionary(uniqueKeysWithValues: reader.entries().map { ($0.key, "\($0.sourceUUID) \($0.pixelChecksum)") })
        }
        return all
    }

    func manifest() throws -> Manifest {
        let report = ManifestValidator(options: ValidationOptions()).validate(fileAt: manifestPath)
        return try #require(report.manifest, "\(report.diagnostics)")
    }

    func bake(jobs: Int = 2, configure: (inout BakeOptions) -> Void = { _ in }) throws -> BakeSummary {
        var options = BakeOptions(workerExecutable: Products.worker)
        options.jobs = jobs
        options.durability = .processCrashOnly
        configure(&options)
        return try Baker.bake(try manifest(), options: options)
    }
}

/// A bake's JSON `warnings[]` as text prints them (`PATH[:LINE:COLUMN]: warning: MESSAGE [CODE]`),
/// rebuilt from their objects; `nil` when `warnings` is not an array of objects.
func warningLines(_ document: [String: Any]) -> [String]? {
    guard let objects = document["warnings"] as? [[String: Any]] else { return nil }
    return objects.map { w in
        let at = (w["line"] as? Int).map { ":\($0)" + ((w["column"] as? Int).map { ":\($0)" } ?? "") } ?? ""
        return "\(w["path"] as? String ?? "")\(at): warning: \(w["message"] as? String ?? "")" + ((w["code"] as? String).map { " [\($0)]" } ?? "")
    }
}
