/// The pixel layout of every slot in a table, byte by byte (see `docs/FORMAT.md`, "Pixel styles").
///
/// The four styles are FastImageCache's. Names are the ones users write in manifests; codes are
/// what the file header stores.
public enum PixelStyle: String, Sendable, CaseIterable, Codable {
    /// `B, G, R, A` with colour premultiplied by alpha.
    case bgra32 = "32BitBGRA"
    /// `B, G, R, X` with `X = 0xFF`; opaque.
    case bgr32 = "32BitBGR"
    /// One little-endian `UInt16` per pixel: `0RRRRRGGGGGBBBBB`.
    case bgr16 = "16BitBGR"
    /// One byte of luma per pixel.
    case grayscale8 = "8BitGrayscale"

    /// What the style is, in one table: its size, whether it keeps alpha, its header code. Every
    /// property below reads this, so a new style is described in one place.
    private var traits: (bytesPerPixel: Int, hasAlpha: Bool, code: UInt32) {
        switch self {
        case .bgra32: (4, true, 1)
        case .bgr32: (4, false, 2)
        case .bgr16: (2, false, 3)
        case .grayscale8: (1, false, 4)
        }
    }

    /// Bytes one pixel occupies.
    public var bytesPerPixel: Int { traits.bytesPerPixel }

    /// Whether the style keeps an alpha channel; the others are opaque.
    public var hasAlpha: Bool { traits.hasAlpha }

    /// The value stored in the header's `style` field.
    public var code: UInt32 { traits.code }

    /// The style a header code names, or `nil` for an unknown code.
    ///
    /// - Parameter code: the header's `style` field.
    public init?(code: UInt32) {
        guard let style = PixelStyle.allCases.first(where: { $0.code == code }) else { return nil }
        self = style
    }
}

/// Who may read a table file: FastImageCache's three protection modes, mapped to POSIX modes.
///
/// The file has exactly this mode from the moment it exists, whatever the umask; opening a table
/// whose mode is looser than the recorded protection fails, as OpenSSH does for a private key.
public enum ProtectionMode: String, Sendable, CaseIterable, Codable {
    /// Anyone may read: `0644`.
    case none
    /// Owner and group may read: `0640`.
    case completeUntilFirstUserAuthentication
    /// Only the owner: `0600`.
    case complete

    /// The POSIX permission bits a table with this protection gets.
    public var permissions: UInt16 {
        switch self {
        case .none: 0o644
        case .completeUntilFirstUserAuthentication: 0o640
        case .complete: 0o600
        }
    }

    /// The value stored in the header's `protection` field.
    public var code: UInt32 {
        switch self {
        case .none: 0
        case .completeUntilFirstUserAuthentication: 1
        case .complete: 2
        }
    }

    /// The protection a header code names, or `nil` for an unknown code.
    ///
    /// - Parameter code: the header's `protection` field.
    public init?(code: UInt32) {
        guard let mode = ProtectionMode.allCases.first(where: { $0.code == code }) else { return nil }
        self = mode
    }
}
