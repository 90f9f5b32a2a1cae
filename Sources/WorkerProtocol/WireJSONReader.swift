/// A single pass over the bytes of one JSON text, building ``WireJSON`` values.
///
/// Strict where it matters for a protocol (one value, no trailing commas, no comments, valid
/// escapes and UTF-8) and bounded (nesting depth), so that a peer that is not speaking the
/// protocol is refused rather than misread.
struct WireJSONReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var i = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    var atEnd: Bool { i == bytes.count }

    mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D { i += 1 }
    }

    private mutating func literal(_ text: StaticString, _ value: WireJSON) -> WireJSON? {
        let n = text.utf8CodeUnitCount
        guard i + n <= bytes.count else { return nil }
        for k in 0..<n where bytes[i + k] != text.utf8Start[k] { return nil }
        i += n
        return value
    }

    mutating func value(depth: Int) -> WireJSON? {
        skipSpace()
        guard i < bytes.count, depth < 32 else { return nil }
        switch bytes[i] {
        case UInt8(ascii: "{"): return object(depth: depth)
        case UInt8(ascii: "["): return array(depth: depth)
        case UInt8(ascii: "\""): return string().map(WireJSON.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        default: return integer()
        }
    }

    private mutating func object(depth: Int) -> WireJSON? {
        i += 1
        var fields = WireFields(capacity: 6)
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
            i += 1
            return .object(fields)
        }
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\""), let key = string() else { return nil }
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return nil }
            i += 1
            guard let v = value(depth: depth + 1) else { return nil }
            fields.append(key, v)
            skipSpace()
            guard i < bytes.count else { return nil }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
            } else if bytes[i] == UInt8(ascii: "}") {
                i += 1
                return .object(fields)
            } else {
                return nil
            }
        }
    }

    private mutating func array(depth: Int) -> WireJSON? {
        i += 1
        var items: [WireJSON] = []
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
            i += 1
            return .array(items)
        }
        while true {
            guard let v = value(depth: depth + 1) else { return nil }
            items.append(v)
            skipSpace()
            guard i < bytes.count else { return nil }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
            } else if bytes[i] == UInt8(ascii: "]") {
                i += 1
                return .array(items)
            } else {
                return nil
            }
        }
    }

    /// An integer without fraction or exponent, within `UInt64`'s magnitude.
    private mutating func integer() -> WireJSON? {
        let negative = bytes[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        let first = i
        var magnitude: UInt64 = 0
        while i < bytes.count, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") {
            let (m, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.addingReportingOverflow(UInt64(bytes[i] - UInt8(ascii: "0")))
            guard !o1, !o2 else { return nil }
            magnitude = s
            i += 1
        }
        let digits = i - first
        guard digits > 0, digits == 1 || bytes[first] != UInt8(ascii: "0") else { return nil }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") || bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") { return nil }
        return .integer(negative: negative, magnitude: magnitude)
    }

    /// A string at `"`: escapes decoded (surrogate pairs joined), raw control characters and
    /// invalid UTF-8 refused.
    private mutating func string() -> String? {
        i += 1
        // Most strings (keys, paths) have no escape: made straight from the bytes, and when
        // they are ASCII, with nothing to validate (`String(validating:)` is a generic call
        // whose type lookups cost more than the copy).
        let start = i
        var high: UInt8 = 0
        while i < bytes.count, bytes[i] != UInt8(ascii: "\""), bytes[i] != UInt8(ascii: "\\"), bytes[i] >= 0x20 {
            high |= bytes[i]
            i += 1
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "\"") {
            i += 1
            let run = UnsafeBufferPointer(rebasing: bytes[start..<(i - 1)])
            return high < 0x80 ? String(decoding: run, as: UTF8.self) : String(validating: run, as: UTF8.self)
        }
        var out: [UInt8] = []
        var runStart = start
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
                i += 1
                return String(validating: out, as: UTF8.self)
            }
            if b < 0x20 { return nil }
            if b != UInt8(ascii: "\\") {
                i += 1
                continue
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
            i += 1
            guard i < bytes.count else { return nil }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hex4() else { return nil }
                if (0xD800..<0xDC00).contains(scalar) {
                    guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else { return nil }
                    i += 2
                    guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let u = Unicode.Scalar(scalar) else { return nil }
                out.append(contentsOf: Array(String(Character(u)).utf8))
            default: return nil
            }
            runStart = i
        }
        return nil
    }

    private mutating func hex4() -> UInt32? {
        guard i + 4 <= bytes.count else { return nil }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[i]
            let d: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c - UInt8(ascii: "A") + 10
            default: return nil
            }
            v = v << 4 | UInt32(d)
            i += 1
        }
        return v
    }
}
