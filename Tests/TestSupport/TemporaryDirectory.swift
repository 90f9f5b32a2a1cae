import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under the system temporary directory, removed with everything in it when
/// the value is dropped.
public final class TemporaryDirectory: @unchecked Sendable {
    /// The directory.
    public let path: String

    /// Creates the directory.
    ///
    /// - Parameter prefix: the start of its name, to tell tests' leftovers apart.
    /// - Throws: `CocoaError` when the directory cannot be made.
    public init(prefix: String = "imagetables-test") throws {
        var template = Array((NSTemporaryDirectory() + "\(prefix)-XXXXXX").utf8CString)
        guard mkdtemp(&template) != nil else { throw CocoaError(.fileWriteUnknown) }
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The path of `name` inside the directory.
    ///
    /// - Parameter name: a relative path.
    public func file(_ name: String) -> String { "\(path)/\(name)" }

    /// Writes `bytes` to `name` inside the directory, creating the directories on the way.
    ///
    /// - Parameters:
    ///   - name: a relative path.
    ///   - bytes: the content.
    /// - Returns: the file's path.
    /// - Throws: what writing throws.
    @discardableResult
    public func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let target = file(name)
        try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: target))
        return target
    }

    /// Writes `text` as UTF-8 to `name` inside the directory.
    ///
    /// - Parameters:
    ///   - name: a relative path.
    ///   - text: the content.
    /// - Returns: the file's path.
    /// - Throws: what writing throws.
    @discardableResult
    public func write(_ name: String, _ text: String) throws -> String {
        try write(name, Array(text.utf8))
    }

    /// Creates a directory (and its parents) inside the directory.
    ///
    /// - Parameter name: a relative path.
    /// - Throws: what creating it throws.
    public func makeDirectory(_ name: String) throws {
        try FileManager.default.createDirectory(atPath: file(name), withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
