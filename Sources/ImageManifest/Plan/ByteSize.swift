/// Byte counts as people write and read them: `500MB`, `2GiB`, `6.9 MiB`.
public enum ByteSize {
    /// The units `parse` accepts, lower-cased, with their sizes: decimal units are powers of
    /// 1000 (as disk makers and `df -H` count), binary `…iB` units powers of 1024.
    static let units: [String: Double] = [
        "": 1, "b": 1,
        "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
        "ki": 1024, "kib": 1024, "mi": 1_048_576, "mib": 1_048_576,
        "gi": 1_073_741_824, "gib": 1_073_741_824, "ti": 1_099_511_627_776, "tib": 1_099_511_627_776,
    ]

    /// Parses a size such as `500MB`, `2GiB`, `1.5 GB` or `1048576` (bytes).
    ///
    /// The number may have a fraction; the result is rounded down to whole bytes. Units are
    /// case-insensitive: `B`, `kB`, `MB`, `GB`, `TB` (powers of 1000), `KiB`, `MiB`, `GiB`, `TiB`
    /// (powers of 1024), and the same without the final `B`.
    ///
    /// - Parameter text: the size as written.
    /// - Returns: the number of bytes, or `nil` when the text is not a size or is over `Int.max`.
    public static func parse(_ text: String) -> Int? {
        let trimmed = text.trimmed(" ")
        let number = trimmed.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        let unit = String(trimmed.dropFirst(number.count)).trimmed(" ").lowercased()
        guard !number.isEmpty, number.filter({ $0 == "." }).count <= 1, number != ".",
              let value = Double(number), let scale = units[unit] else { return nil }
        let bytes = (value * scale).rounded(.down)
        guard bytes < 9.2e18 else { return nil }
        return Int(bytes)
    }

    /// `512 B`, `28.0 KiB`, `6.9 MiB`, `1.2 GiB`: binary units, one decimal.
    ///
    /// - Parameter bytes: a byte count, 0 or more.
    public static func describe(_ bytes: Int) -> String {
        guard bytes >= 1024 else { return "\(bytes) B" }
        var value = Double(bytes)
        var unit = 0
        let names = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
        while value >= 1024 && unit < names.count - 1 {
            value /= 1024
            unit += 1
        }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(names[unit])"
    }
}

extension String {
    /// The string without leading and trailing `character`s; Foundation-free.
    func trimmed(_ character: Character) -> String {
        String(drop { $0 == character }.reversed().drop { $0 == character }.reversed())
    }
}
