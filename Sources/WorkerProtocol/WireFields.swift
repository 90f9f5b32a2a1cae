/// A JSON object's fields, in the order they were read: what ``WireJSON/object(_:)`` holds.
///
/// A message's objects have two to six fields, so a list searched from the end costs less
/// than a dictionary, which hashes every key on every read (reading a render job took 15 µs
/// with dictionaries, 7 µs with this and strings made straight from the bytes). The semantics
/// are a dictionary's: of a key given twice the last value counts, and two objects are equal
/// when they map the same keys to equal values, in any order. Messages are written without it
/// (``WireWriter``).
struct WireFields: Equatable {
    /// One field. A struct rather than a tuple: arrays of tuples make the runtime look their
    /// type up on every use.
    struct Field {
        var key: String
        var value: WireJSON
    }

    private(set) var pairs: [Field]

    /// No fields, with room for `capacity`.
    init(capacity: Int) {
        pairs = []
        pairs.reserveCapacity(capacity)
    }

    /// The value of `key`: its last field's.
    subscript(key: String) -> WireJSON? {
        var i = pairs.count
        while i > 0 {
            i -= 1
            if pairs[i].key == key { return pairs[i].value }
        }
        return nil
    }

    /// Adds a field as read, without looking for an earlier one (a later one wins on reads).
    mutating func append(_ key: String, _ value: WireJSON) {
        pairs.append(Field(key: key, value: value))
    }

    /// The fields' last values, one per key, keys in order (String's order, which for the
    /// protocol's ASCII keys is byte order): what equality compares.
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
