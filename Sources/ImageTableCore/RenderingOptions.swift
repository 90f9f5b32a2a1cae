/// How an image is fitted into a member's slot when the aspect ratios differ.
///
/// All fits centre the image in the slot. With ``RenderingOptions/upscale`` off (the default) no fit
/// ever enlarges the image: a source smaller than the slot keeps its size and is centred, and the
/// uncovered part of the slot is transparent in `32BitBGRA` and ``RenderingOptions/background`` in the
/// other styles. See `docs/PIPELINE.md`, "Fits".
public enum Fit: String, Sendable, CaseIterable, Codable {
    /// Scale to cover the whole slot, then crop the overflow (by ``RenderingOptions/crop``). The default.
    case cover
    /// Scale to fit inside the slot and letterbox the rest (transparent in `32BitBGRA`, the
    /// background colour otherwise). The content rectangle is the whole slot.
    case contain
    /// Stretch each axis independently to the slot's size.
    case fill
    /// Like ``contain``, but the entry's content rectangle is the part the image covers.
    case inside
}

/// Which part of an image ``Fit/cover`` keeps when it must crop.
public enum CropStrategy: String, Sendable, CaseIterable, Codable {
    /// The middle.
    case centre
    /// The most interesting part by libvips' attention model (skin tones, saturated colour, edges).
    case attention
    /// The part with the most entropy (detail).
    case entropy

    /// Reads a manifest spelling; the American `center` is accepted as a synonym of `centre`.
    ///
    /// - Parameter text: what the manifest says.
    public init?(manifestValue text: String) {
        self.init(rawValue: text == "center" ? "centre" : text)
    }
}

/// An 8-bit sRGB colour with straight (not premultiplied) alpha.
public struct RGBAColor: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Red, 0…255.
    public var red: UInt8
    /// Green, 0…255.
    public var green: UInt8
    /// Blue, 0…255.
    public var blue: UInt8
    /// Alpha, 0 (transparent) … 255 (opaque).
    public var alpha: UInt8

    /// Creates a colour.
    ///
    /// - Parameters:
    ///   - red: red, 0…255.
    ///   - green: green, 0…255.
    ///   - blue: blue, 0…255.
    ///   - alpha: alpha, 0…255; opaque by default.
    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// Parses CSS hex notation: `#rgb`, `#rgba`, `#rrggbb` or `#rrggbbaa`, either case.
    ///
    /// - Parameter hex: the text, `#` included.
    /// - Returns: `nil` when the text is not one of those forms.
    public init?(hex: String) {
        guard hex.first == "#" else { return nil }
        let digits = hex.dropFirst().map { $0.isASCII ? $0.hexDigitValue.map(UInt8.init) : nil }
        guard [3, 4, 6, 8].contains(digits.count), !digits.contains(nil) else { return nil }
        let d = digits.map { $0! }
        let channels: [UInt8] = d.count <= 4
            ? d.map { $0 * 17 }
            : stride(from: 0, to: d.count, by: 2).map { d[$0] * 16 + d[$0 + 1] }
        self.init(red: channels[0], green: channels[1], blue: channels[2], alpha: channels.count == 4 ? channels[3] : 255)
    }

    /// Opaque white, the default background.
    public static let white = RGBAColor(red: 255, green: 255, blue: 255)
    /// Opaque black.
    public static let black = RGBAColor(red: 0, green: 0, blue: 0)

    /// `#rrggbbaa`, lower case.
    public var description: String {
        "#" + [red, green, blue, alpha].map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
    }
}

/// How a source is drawn into a table's slots, besides their size and style: everything else
/// that decides the pixels. Part of ``TableFormat`` and of its parameter hash, so that changing
/// any of these rebuilds the table instead of mixing pixels drawn two ways.
public struct RenderingOptions: Sendable, Hashable {
    /// How the image is fitted into the slot.
    public var fit: Fit
    /// Which part ``Fit/cover`` keeps; ignored by the other fits.
    public var crop: CropStrategy
    /// The colour transparent source pixels are flattened onto and letterbox areas are filled
    /// with, in the opaque styles (`32BitBGR`, `16BitBGR`, `8BitGrayscale`); its alpha is ignored
    /// there (the background is opaque). Not used by `32BitBGRA`, which keeps transparency.
    public var background: RGBAColor
    /// Radius in pixels of the antialiased rounded-corner clip applied to the image (the content
    /// rectangle); 0 for square corners. Clamped to half the content's shorter side.
    public var cornerRadius: Double
    /// Whether a source smaller than needed may be enlarged. Off by default, as in sharp and
    /// Eleventy Image.
    public var upscale: Bool

    /// Creates rendering options.
    ///
    /// - Parameters:
    ///   - fit: how the image is fitted; ``Fit/cover`` by default.
    ///   - crop: what ``Fit/cover`` keeps; ``CropStrategy/centre`` by default.
    ///   - background: flatten and letterbox colour for opaque styles; white by default.
    ///   - cornerRadius: rounded-corner radius in pixels; 0 by default.
    ///   - upscale: whether small sources may be enlarged; `false` by default.
    public init(fit: Fit = .cover, crop: CropStrategy = .centre, background: RGBAColor = .white,
                cornerRadius: Double = 0, upscale: Bool = false) {
        self.fit = fit
        self.crop = crop
        self.background = background
        self.cornerRadius = cornerRadius
        self.upscale = upscale
    }

    /// The options as the rendering signature of `docs/FORMAT.md` writes them, after the pipeline
    /// version: `fit=cover;crop=centre;background=#ffffffff;radius=0;upscale=0`.
    var signatureFields: String {
        let radius = cornerRadius.rounded() == cornerRadius && abs(cornerRadius) < 1e15
            ? String(Int(cornerRadius)) : String(cornerRadius)
        return "fit=\(fit.rawValue);crop=\(crop.rawValue);background=\(background);radius=\(radius);upscale=\(upscale ? 1 : 0)"
    }
}
