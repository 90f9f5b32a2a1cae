import Foundation

/// An encoded source image and where its bytes are: what the pipeline decodes, what a cache's
/// provider hands over.
public enum SourceImage: Sendable {
    /// A file, read whole into memory when rendering starts (so a file changed or truncated
    /// meanwhile cannot crash the decoder through a memory map).
    case file(String)
    /// Bytes already in memory (a download, an upload); `name` identifies them in errors.
    case data(Data, name: String? = nil)

    /// The path, or the name given with in-memory bytes (`"the image data"` without one), that
    /// errors name.
    public var name: String {
        switch self {
        case .file(let path): path
        case .data(_, let name): name ?? "the image data"
        }
    }
}
