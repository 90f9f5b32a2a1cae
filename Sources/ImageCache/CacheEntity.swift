import Foundation
import ImageTableCore

/// Something that has an image: FastImageCache's entity, reduced to its two identifiers.
///
/// ``key`` names the entity in every table (FastImageCache's `UUID`; here the table key, whose
/// entity UUID is `EntityKey.uuid(for:)`). ``sourceID`` names the *version* of its source
/// image (FastImageCache's `sourceImageUUID`): a stored entry made from another source ID is
/// stale, so changing it (a new avatar, an edited photo) makes the next request fetch again.
///
/// The bake's rule is `key` = the source file's path relative to the family's `sources`
/// directory and `sourceID` = `SourceFingerprint` of its bytes; use
/// ``sourceID(contentsOf:)`` for entities that must hit baked tables.
public struct CacheEntity: Sendable, Hashable {
    /// The entity's key in every table; at most 160 UTF-8 bytes to be stored.
    public let key: String
    /// Identifies the source image the entry is made from.
    public let sourceID: UUID
    /// `EntityKey.uuid(for: key)`, computed once here so that a hit does not hash the key.
    public let entityUUID: UUID

    /// Creates an entity.
    ///
    /// - Parameters:
    ///   - key: the entity's key.
    ///   - sourceID: identifies the version of its source image.
    public init(key: String, sourceID: UUID) {
        self.key = key
        self.sourceID = sourceID
        entityUUID = EntityKey.uuid(for: key)
    }

    /// Creates an entity whose source is identified by a name: a URL with a version or ETag, a
    /// content hash from a server, a revision number.
    ///
    /// - Parameters:
    ///   - key: the entity's key.
    ///   - sourceName: anything that changes when the source image changes.
    public init(key: String, sourceName: String) {
        self.init(key: key, sourceID: Self.sourceID(named: sourceName))
    }

    /// A source ID from a name: the version-5 UUID of `urn:imagetables:source-name:` + `name`
    /// in `EntityKey.namespace`. The prefix keeps these apart from entity UUIDs; equal names
    /// give equal IDs in every process and language.
    ///
    /// - Parameter name: anything that changes when the source image changes.
    public static func sourceID(named name: String) -> UUID {
        EntityKey.uuid(for: "urn:imagetables:source-name:" + name)
    }

    /// The source ID the bake records for a file: `SourceFingerprint` of its content.
    ///
    /// - Parameter path: the source file.
    /// - Throws: `ImageTableError` `source-unavailable` when the file cannot be read.
    public static func sourceID(contentsOf path: String) throws(ImageTableError) -> UUID {
        do {
            return try SourceFingerprint.uuid(contentsOf: path).uuid
        } catch {
            throw ImageTableError(.sourceUnavailable, "cannot fingerprint \(path)", cause: String(describing: error))
        }
    }

    /// The source ID the bake would record for these bytes: `SourceFingerprint` of them.
    ///
    /// - Parameter data: the source image's bytes.
    public static func sourceID(of data: Data) -> UUID {
        data.withUnsafeBytes { SourceFingerprint.uuid(of: $0) }
    }
}
