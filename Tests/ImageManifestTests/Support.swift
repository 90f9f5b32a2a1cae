import Foundation
@testable import ImageManifest
#if canImport(Glibc)
import Glibc
#endif

/// Paths in the source tree: the tests read the corpus, the examples, the schema and the docs
/// where they are committed.
enum Repository {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardized.path
    static let corpus = root + "/Tests/ImageManifestTests/Corpus"
    static let manifests = root + "/manifests"
    static let schema = root + "/schema/manifest.schema.json"
    static let manifestDoc = root + "/docs/MANIFEST.md"

    /// The example manifests, sorted.
    static var exampleManifests: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: manifests)) ?? [])
            .filter { $0.hasSuffix(".yaml") }.sorted().map { manifests + "/" + $0 }
    }
}

/// A fresh directory under the system temporary directory, removed when the value is dropped.
final class TemporaryDirectory: @unchecked Sendable {
    let path: String

    init() throws {
        var bytes = Array((NSTemporaryDirectory() + "imagetable-manifest-XXXXXX").utf8CString)
        guard mkdtemp(&bytes) != nil else { throw CocoaError(.fileWriteUnknown) }
        path = String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Writes `text` to `name` (creating directories) and returns the file's path.
    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        try write(name, Array(text.utf8))
    }

    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let file = path + "/" + name
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return file
    }

    func makeDirectory(_ name: String) throws {
        try FileManager.default.createDirectory(atPath: path + "/" + name, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// `line:column code` for every diagnostic: the compact form the rule tests compare.
func summary(_ report: ValidationReport) -> [String] {
    report.diagnostics.map { "\($0.line):\($0.column) \($0.code.rawValue)" }
}

/// Validates `yaml` as a manifest in a fresh directory that holds a `photos` directory.
func check(_ yaml: String, options: ValidationOptions = ValidationOptions()) throws -> ValidationReport {
    let dir = try TemporaryDirectory()
    try dir.makeDirectory("photos")
    let file = try dir.write("manifest.yaml", yaml)
    return ManifestValidator(options: options).validate(fileAt: file)
}

/// A valid manifest with one format whose body is `format` (indented 8 spaces): lines 1–7 are
/// fixed, so the format's first key is on line 8, column 9.
func manifest(format: String, extraFamilyKeys: String = "") -> String {
    """
    version: 1
    output: tables
    families:
      users:
        sources: photos\(extraFamilyKeys)
        formats:
          small:
    \(format.split(separator: "\n", omittingEmptySubsequences: false).map { "        " + $0 }.joined(separator: "\n"))

    """
}

/// The result of running a program.
struct ProcessResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// Runs a program to completion, capturing both streams.
func run(_ program: String, _ arguments: [String], in directory: String? = nil) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    // Standard error is read after standard output: the CLI writes at most a usage message
    // there, far below a pipe's buffer, so the child cannot block on it.
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProcessResult(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                         stderr: String(decoding: errData, as: UTF8.self))
}

/// The built `imagetable` binary, next to the test binary.
enum Products {
    static var imagetable: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        while dir.path != "/" && !FileManager.default.isExecutableFile(atPath: dir.appendingPathComponent("imagetable").path) {
            dir = dir.deletingLastPathComponent()
        }
        return dir.appendingPathComponent("imagetable").path
    }
}
