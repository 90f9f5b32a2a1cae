import CColour
import Synchronization

/// A transform from an embedded RGB profile to sRGB (lcms2, relative colorimetric intent), made
/// once per distinct profile and shared by every render thread of the process.
///
/// libvips builds a new lcms2 transform for every image it converts: building one costs more
/// than the conversion (reversing the sRGB profile's tone curves was 30 % of a bake of Display
/// P3 photos, every photo carrying the same profile). Here the transform of each profile is
/// kept, and the direct JPEG path applies it to each member after resizing, as `vips_thumbnail`
/// with `export_profile=srgb` orders the two steps.
final class ColourTransform: @unchecked Sendable {
    // @unchecked: the handle is immutable once made, and lcms2 applies a transform made without
    // its one-pixel cache from any thread.
    private let handle: UnsafeMutableRawPointer

    private init(handle: UnsafeMutableRawPointer) { self.handle = handle }

    deinit { cc_transform_free(handle) }

    /// Converts `raster`'s pixels (3 channels) to sRGB in place.
    func apply(_ raster: inout Raster) {
        precondition(raster.channels == 3)
        let pixels = raster.width * raster.height
        guard pixels > 0 else { return }
        raster.bytes.withUnsafeMutableBytes { bytes in
            cc_transform_apply(handle, bytes.baseAddress!, bytes.baseAddress!, UInt32(pixels))
        }
    }

    /// Whether lcms2 could be opened, decided once per process.
    static let isAvailable: Bool = {
        var error = [CChar](repeating: 0, count: 256)
        return cc_load(&error, error.count) == 0
    }()

    /// Profiles seen, most recently used last, each with its transform, or `nil` for a profile
    /// lcms2 cannot use (not RGB, unreadable), so that a bake of many such files asks lcms2 once.
    private static let known = Mutex<[(profile: [UInt8], transform: ColourTransform?)]>([])
    /// A bake meets a handful of profiles (a camera's, a phone's, an editor's); more are dropped
    /// least recently used first.
    private static let capacity = 16

    /// The transform of `profile` to sRGB, or `nil` when lcms2 is not available or cannot
    /// convert from it (the source then goes to libvips, which says what is wrong with it).
    ///
    /// - Parameter profile: the ICC profile's bytes, as embedded.
    static func toSRGB(from profile: UnsafeRawBufferPointer) -> ColourTransform? {
        guard isAvailable, profile.count > 0 else { return nil }
        let key = [UInt8](profile)
        // Seen before: its transform, or nil for a profile lcms2 refused (so the outer optional).
        let seen = known.withLock { list -> ColourTransform?? in
            guard let i = list.lastIndex(where: { $0.profile == key }) else { return .none }
            list.append(list.remove(at: i))
            return .some(list[list.count - 1].transform)
        }
        if let seen { return seen }
        // Made outside the lock: building a transform takes milliseconds.
        let made = key.withUnsafeBytes { bytes in
            cc_transform_to_srgb(bytes.baseAddress!, UInt32(bytes.count)).map { ColourTransform(handle: $0) }
        }

        return known.withLock { list in
            if let raced = list.last(where: { $0.profile == key }) { return raced.transform }
            if list.count == capacity { list.removeFirst() }
            list.append((key, made))
            return made
        }
    }
}
