/// A JSON object's fields, in the order they were read or set: what ``WireJSON/object(_:)``
/// holds.
///
/// A message's objects have two to six fields, so a list searched from the end costs less
/// than a dictionary, which hashes every key on every read (reading a render job took 15 µs
/// with dictionaries, 7 µs with this and strings made straight from the bytes). The semantics are a dictionary's: a key set
/// twice keeps its last value, and two objects are equal when they map the same keys to equal
/// values, in any order.
struct WireFields: Equatable, ExpressibleByDictionaryLiteral {
    /// One field. A struct rather than a tuple: arrays of tuples make the runtime look their
    /// type up on every use.
    struct Field {
        var key: String
        var value: WireJSON
    }

    private(set) var pairs: [Field]

    init(dictionaryLiteral elements: (String, WireJSON)...) {
        pairs = elements.map { Field(key: $0.0, value: $0.1) }
    }

    /// No fields, with room for `capacity`.
    init(capacity: Int) {
        pairs = []
        pairs.reserveCapacity(capacity)
    }

    /// The value of `key`; setting replaces it, or adds the field.
    subscript(key: String) -> WireJSON? {
        get {
            var i = pairs.count
            while i > 0 {
                i -= 1
                if pairs[i].key == key { return pairs[i].value }
            }
            return nil
        }
        set {
            let at = pairs.lastIndex { $0.key == key }
            switch (at, newValue) {
            case (let at?, let value?): pairs[at].value = value
            case (_?, nil): pairs.removeAll { $0.key == key }
            case (nil, let value?): pairs.append(Field(key: key, value: value))
            case (nil, nil): break
            }
        }
    }

    /// Adds a field as read, without looking for an earlier one (a later one wins on reads).
    mutating func append(_ key: String, _ value: WireJSON) {
        pairs.append(Field(key: key, value: value))
    }

    /// The fields' last values, one per key, keys in order (String's order, which for the
    /// protocol's ASCII keys is byte order), as the writer emits them.
    var sorted: [Field] {
        var out: [Field] = []
        out.reserveCapacity(pairs.count)
        for pair in pairs {
            if let at = out.firstIndex(where: { $0.key == pair.key }) {
                out[at].value = pair.value
                continue
            }
            // Insertion sort: a handful of fields, usually set in order already.
            var at = out.count
            while at > 0, pair.key < out[at - 1].key { at -= 1 }
            out.insert(pair, at: at)
        }
        return out
    }

    static func == (a: WireFields, b: WireFields) -> Bool {
        let x = a.sorted, y = b.sorted
        return x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}
