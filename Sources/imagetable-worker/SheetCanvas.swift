import ImagePipeline

/// An opaque RGB canvas the contact sheet is drawn on, in plain Swift: libvips only resamples
/// the tiles and renders the text.
struct SheetCanvas {
    /// A colour, 8 bits per channel.
    struct Colour {
        let r: UInt8, g: UInt8, b: UInt8
    }

    /// Grey, so that filling the canvas is filling bytes.
    static let background: UInt8 = 0xF2
    static let text = Colour(r: 0x30, g: 0x30, b: 0x30)
    /// Transparent parts of tiles show a checkerboard of these, as image editors do.
    static let checkerLight = Colour(r: 0xFF, g: 0xFF, b: 0xFF)
    static let checkerDark = Colour(r: 0xD6, g: 0xD6, b: 0xD6)
    static let checkerSize = 8

    let width: Int
    let height: Int
    private(set) var pixels: [UInt8]

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        pixels = [UInt8](repeating: Self.background, count: width * height * 3)
    }

    /// The canvas as a bitmap to encode.
    var bitmap: Bitmap { Bitmap(width: width, height: height, bands: 3, pixels: pixels) }

    /// Draws premultiplied RGBA `tile` at (`x`, `y`) over a checkerboard.
    mutating func composite(_ tile: Bitmap, x: Int, y: Int) {
        for ty in 0..<tile.height where (0..<height).contains(y + ty) {
            for tx in 0..<tile.width where (0..<width).contains(x + tx) {
                let s = (ty * tile.width + tx) * 4
                let alpha = Int(tile.pixels[s + 3])
                let checker = (tx / Self.checkerSize + ty / Self.checkerSize) % 2 == 0 ? Self.checkerLight : Self.checkerDark
                let d = ((y + ty) * width + x + tx) * 3
                // Premultiplied "over": colour + backdrop × (1 − alpha).
                func over(_ c: UInt8, _ backdrop: UInt8) -> UInt8 {
                    UInt8(min(255, Int(c) + (Int(backdrop) * (255 - alpha) + 127) / 255))
                }
                pixels[d] = over(tile.pixels[s], checker.r)
                pixels[d + 1] = over(tile.pixels[s + 1], checker.g)
                pixels[d + 2] = over(tile.pixels[s + 2], checker.b)
            }
        }
    }

    /// Paints `colour` through the coverage `mask` at (`x`, `y`), clipped to
    /// `clipWidth` × `clipHeight` pixels from there.
    mutating func paint(_ mask: Bitmap, colour: Colour, x: Int, y: Int, clipWidth: Int, clipHeight: Int) {
        for my in 0..<min(mask.height, clipHeight) where (0..<height).contains(y + my) {
            for mx in 0..<min(mask.width, clipWidth) where (0..<width).contains(x + mx) {
                let m = Int(mask.pixels[(my * mask.width + mx) * mask.bands])
                guard m > 0 else { continue }
                let d = ((y + my) * width + x + mx) * 3
                func mix(_ under: UInt8, _ ink: UInt8) -> UInt8 { UInt8((Int(under) * (255 - m) + Int(ink) * m + 127) / 255) }
                pixels[d] = mix(pixels[d], colour.r)
                pixels[d + 1] = mix(pixels[d + 1], colour.g)
                pixels[d + 2] = mix(pixels[d + 2], colour.b)
            }
        }
    }
}
