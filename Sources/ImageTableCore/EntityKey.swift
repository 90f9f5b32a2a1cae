import Foundation

/// The mapping from an entry's key to its entity UUID (`docs/FORMAT.md`, "Keys and entity UUIDs").
///
/// The entity UUID is the RFC 4122 version-5 UUID of the key's UTF-8 bytes in
/// ``EntityKey/namespace``, so any language's standard library (`uuid.uuid5` in Python) finds
/// the same record for the same key.
public enum EntityKey {
    /// `608f9c14-0821-5ed6-80a9-802f83451f42`, itself `uuid5(NAMESPACE_URL, "urn:imagetables:entity-key")`.
    public static let namespace = UUID(uuidString: "608F9C14-0821-5ED6-80A9-802F83451F42")!

    /// The entity UUID of `key`. Computed on the stack; does not allocate for native strings.
    ///
    /// - Parameter key: the user's key.
    /// - Returns: `uuid5(namespace, key)`.
    public static func uuid(for key: String) -> UUID {
        var key = key
        return key.withUTF8 { uuid5(name: UnsafeRawBufferPointer($0)) }
    }

    /// The version-5 UUID of `name` in ``namespace``.
    static func uuid5(name: UnsafeRawBufferPointer) -> UUID {
        withUnsafeBytes(of: namespace.uuid) { ns in
            SHA1.withDigest(of: name, prefix: ns) { uuid(fromSHA1: $0) }
        }
    }

    /// A version-5 UUID from the first 16 bytes of a SHA-1 digest (RFC 4122, section 4.3).
    static func uuid(fromSHA1 digest: UnsafeRawBufferPointer) -> UUID {
        var bytes = namespace.uuid
        withUnsafeMutableBytes(of: &bytes) { out in
            out.copyMemory(from: UnsafeRawBufferPointer(rebasing: digest[0..<16]))
            out[6] = (out[6] & 0x0F) | 0x50
            out[8] = (out[8] & 0x3F) | 0x80
        }
        return UUID(uuid: bytes)
    }
}
