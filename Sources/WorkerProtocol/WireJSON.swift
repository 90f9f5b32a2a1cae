/// The JSON the protocol's lines are made of: a value tree, a reader and a writer of its own.
///
/// Every job crosses the channel twice, so the codec is part of what a bake costs per source.
/// Foundation's `JSONEncoder` and `JSONDecoder` go through `Codable`'s containers and cost about
/// a tenth of a small source's whole bake; this reader and writer handle exactly what the
/// messages use (objects, arrays, strings, integers, booleans, null) in a single pass over the
/// bytes. Numbers other than integers are refused: no message has one.
enum WireJSON: Equatable {
    case null
    case bool(Bool)
    /// An integer in `Int64`'s range, or `UInt64`'s for non-negative values.
    case integer(negative: Bool, magnitude: UInt64)
    case string(String)
    case array([WireJSON])
    case object(WireFields)

    /// The value of `key` when this is an object.
    subscript(key: String) -> WireJSON? {
        if case .object(let fields) = self { fields[key] } else { nil }
    }

    var string: String? {
        if case .string(let s) = self { s } else { nil }
    }

    var array: [WireJSON]? {
        if case .array(let a) = self { a } else { nil }
    }

    var bool: Bool? {
        if case .bool(let b) = self { b } else { nil }
    }

    var int64: Int64? {
        guard case .integer(let negative, let magnitude) = self else { return nil }
        if negative { return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    var uint64: UInt64? {
        if case .integer(false, let magnitude) = self { magnitude } else { nil }
    }

    var int: Int? { int64.flatMap { Int(exactly: $0) } }

    /// Parses one JSON text (the whole of `bytes`, surrounding white space allowed).
    ///
    /// - Parameter bytes: UTF-8 JSON.
    /// - Returns: the value, or `nil` for anything that is not one complete JSON value of the
    ///   kinds above, nested at most 32 deep.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> WireJSON? {
        var reader = WireJSONReader(bytes.bindMemory(to: UInt8.self))
        guard let value = reader.value(depth: 0) else { return nil }
        reader.skipSpace()
        return reader.atEnd ? value : nil
    }

    /// The value as compact JSON, keys sorted, appended to `out`.
    ///
    /// - Parameter out: where the text goes.
    func write(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .integer(let negative, let magnitude):
            if negative && magnitude != 0 { out.append(UInt8(ascii: "-")) }
            Self.writeDigits(magnitude, to: &out)
        case .string(let s): Self.writeString(s, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let fields):
            out.append(UInt8(ascii: "{"))
            for (i, field) in fields.sorted.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(field.key, to: &out)
                out.append(UInt8(ascii: ":"))
                field.value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// A JSON string: `"` and `\` escaped, control characters (the line terminator among them,
    /// so a message stays one line) as `\uXXXX`, everything else as UTF-8.
    private static func writeString(_ s: String, to out: inout [UInt8]) {
        var s = s
        s.makeContiguousUTF8()
        out.append(UInt8(ascii: "\""))
        s.utf8.withContiguousStorageIfAvailable { bytes in
            // Runs that need no escape (nearly every byte of a path or a format) are copied whole.
            var run = 0
            for (i, byte) in bytes.enumerated() where byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<i]))
                run = i + 1
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                    out.append(UInt8(ascii: "\\"))
                    out.append(byte)
                } else {
                    out.append(contentsOf: "\\u00".utf8)
                    out.append(Self.hexDigit(byte >> 4))
                    out.append(Self.hexDigit(byte & 0xF))
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run...]))
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension WireJSON {
    /// `value` in decimal, with no `String` in between.
    fileprivate static func writeDigits(_ value: UInt64, to out: inout [UInt8]) {
        var digits: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)  // 32 bytes: 20 digits at most
        var n = 0
        var v = value
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[n] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
                n += 1
            } while v > 0
            for k in stride(from: n - 1, through: 0, by: -1) { out.append(buffer[k]) }
        }
    }

    fileprivate static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}

/// Convenience constructors for the codec's mapping code.
extension WireJSON {
    static func int<T: BinaryInteger>(_ v: T) -> WireJSON {
        v < 0 ? .integer(negative: true, magnitude: UInt64(v.magnitude)) : .integer(negative: false, magnitude: UInt64(v))
    }

    static func optional(_ s: String?) -> WireJSON { s.map(WireJSON.string) ?? .null }
}
