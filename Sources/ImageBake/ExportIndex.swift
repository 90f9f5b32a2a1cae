import Foundation

/// The index of an export, `index.json` beside its tables: which tables it holds and the SHA-256
/// of each, for a build system, an artifact store or a reader that wants to check what it got.
///
/// Written with sorted keys and tables in file-name order, so that it is as reproducible as the
/// tables themselves. JSON layout (`docs/CLI.md`, "export"): `version` (1), `sourceDateEpoch`,
/// `tables[]` with `file`, `format`, `family`, `scale`, `style`, `entries`, `bytes`, `sha256`.
public struct ExportIndex: Sendable, Codable, Equatable {
    /// One exported table.
    public struct Table: Sendable, Codable, Equatable {
        /// The table's file name in the export directory.
        public let file: String
        /// The name of its format.
        public let format: String
        /// The family of its format.
        public let family: String
        /// Its scale.
        public let scale: Int
        /// Its pixel style.
        public let style: String
        /// The entries it holds.
        public let entries: Int
        /// The file's size.
        public let bytes: Int
        /// The SHA-256 of the file, 64 lowercase hex digits.
        public let sha256: String
    }

    /// The file name of the index in an export directory.
    public static let fileName = "index.json"

    /// The version of this layout: 1.
    public var version = 1
    /// The time recorded in every table, seconds since 1970 (`SOURCE_DATE_EPOCH`, or 0).
    public var sourceDateEpoch: UInt64
    /// The tables, by file name.
    public var tables: [Table]

    /// The index as its file holds it: pretty-printed JSON with sorted keys and a final newline.
    public func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Strings and integers always encode.
        return ((try? encoder.encode(self)) ?? Data("{}".utf8)) + Data("\n".utf8)
    }

    /// The index of the export in `directory`, or `nil` when it has none that parses.
    ///
    /// - Parameter directory: an export directory.
    public static func read(directory: String) -> ExportIndex? {
        guard let data = FileManager.default.contents(atPath: directory + "/" + fileName) else { return nil }
        return try? JSONDecoder().decode(ExportIndex.self, from: data)
    }
}
