/// How a source image is fitted into a format's slot; the names are sharp's.
public enum Fit: String, Sendable, CaseIterable, Codable {
    /// Scale to fill the slot, keeping the aspect ratio, and crop what overflows (see ``Crop``).
    case cover
    /// Scale to fit inside the slot, keeping the aspect ratio, and fill the rest with the
    /// background (letterboxing).
    case contain
    /// Stretch to the slot's exact size, ignoring the aspect ratio.
    case fill
    /// Scale to fit inside the slot, keeping the aspect ratio, with no padding: the entry's
    /// content rectangle is smaller than the slot.
    case inside
}

/// Which part of an image `cover` keeps when it crops; the names are sharp's.
public enum Crop: String, Sendable, CaseIterable, Codable {
    /// The centre of the image.
    case centre
    /// The region most likely to draw attention (luminance, saturation, skin tones).
    case attention
    /// The region with the most detail (Shannon entropy).
    case entropy

    /// Reads a manifest spelling; the American `center` is accepted as a synonym of `centre`.
    ///
    /// - Parameter text: what the manifest says.
    public init?(manifestValue text: String) {
        if text == "center" {
            self = .centre
        } else if let crop = Crop(rawValue: text) {
            self = crop
        } else {
            return nil
        }
    }
}

/// A width and height in points; pixels are points × scale.
public struct PointSize: Sendable, Hashable, CustomStringConvertible {
    /// Width in points, at least 1.
    public let width: Int
    /// Height in points, at least 1.
    public let height: Int

    /// Creates a size.
    ///
    /// - Parameters:
    ///   - width: width in points.
    ///   - height: height in points.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// `WIDTHxHEIGHT`, as manifests write it.
    public var description: String { "\(width)x\(height)" }
}

/// An sRGB colour with straight (not premultiplied) alpha, 8 bits per channel.
public struct RGBAColor: Sendable, Hashable, CustomStringConvertible {
    /// Red, 0 … 255.
    public let red: UInt8
    /// Green, 0 … 255.
    public let green: UInt8
    /// Blue, 0 … 255.
    public let blue: UInt8
    /// Alpha, 0 (transparent) … 255 (opaque).
    public let alpha: UInt8

    /// Creates a colour.
    ///
    /// - Parameters:
    ///   - red: red, 0 … 255.
    ///   - green: green, 0 … 255.
    ///   - blue: blue, 0 … 255.
    ///   - alpha: alpha, 0 … 255; opaque by default.
    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// Opaque white, the default background.
    public static let white = RGBAColor(red: 255, green: 255, blue: 255)

    /// Parses CSS hex notation: `#rgb`, `#rgba`, `#rrggbb` or `#rrggbbaa`, either case.
    ///
    /// - Parameter hex: the text, `#` included.
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

    /// `#rrggbbaa` in lower case: the canonical form in rendering signatures.
    public var description: String {
        "#" + [red, green, blue, alpha].map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
