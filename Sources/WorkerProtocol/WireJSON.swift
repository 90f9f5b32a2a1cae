/// The JSON the protocol's lines are made of, as read: a value tree, with a reader of its own
/// (messages are written without a tree, by ``WireWriter``).
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
}
