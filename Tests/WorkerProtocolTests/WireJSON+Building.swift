@testable import WorkerProtocol

// Building and writing whole `WireJSON` values, which only the tests do: the codec reads into
// values but writes its messages directly (`WireWriter`).

extension WireFields: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, WireJSON)...) {
        self.init(capacity: elements.count)
        for (key, value) in elements { append(key, value) }
    }
}

extension WireJSON {
    /// An integer value of any integer type.
    static func int<T: BinaryInteger>(_ v: T) -> WireJSON {
        v < 0 ? .integer(negative: true, magnitude: UInt64(v.magnitude)) : .integer(negative: false, magnitude: UInt64(v))
    }

    /// The value as compact JSON, keys sorted (one per key, its last value), appended to `out`.
    func write(to out: inout [UInt8]) {
        var writer = WireWriter(capacity: 256)
        writer.value(self)
        out.append(contentsOf: writer.bytes)
    }
}

extension WireWriter {
    mutating func value(_ value: WireJSON) {
        switch value {
        case .null: null()
        case .bool(let b): bool(b)
        case .integer(let negative, let magnitude): integer(negative: negative, magnitude: magnitude)
        case .string(let s): string(s)
        case .array(let items): array { w in items.forEach { w.value($0) } }
        case .object(let fields):
            object { w in
                for field in fields.sorted {
                    w.key(field.key)
                    w.value(field.value)
                }
            }
        }
    }
}
