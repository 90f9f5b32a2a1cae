/// Writes the protocol's JSON straight into bytes: what the codec's encoders use, so that a
/// message is not first built as a ``WireJSON`` tree only to be written out and freed (two
/// thirds of what encoding a render job cost, `imagetable-bench proto`).
///
/// Compact JSON, keys sorted: each encoder names its fields in sorted order, which debug builds
/// check. Strings escape `"` and `\`, and control characters (the line terminator among them,
/// so a message stays one line) as `\uXXXX`.
struct WireWriter {
    private(set) var bytes: [UInt8] = []
    /// Per open object or array: whether a value was written in it yet (a comma goes first).
    private var started: [Bool] = []
    #if DEBUG
    /// Per open object, its last key: keys must come in sorted order.
    private var lastKeys: [String?] = []
    #endif

    init(capacity: Int = 1024) {
        bytes.reserveCapacity(capacity)
    }

    /// An object whose fields `body` writes with ``field(_:_:)`` and the typed `field` calls.
    mutating func object(_ body: (inout WireWriter) -> Void) {
        open(UInt8(ascii: "{"))
        #if DEBUG
        lastKeys.append(nil)
        #endif
        body(&self)
        #if DEBUG
        lastKeys.removeLast()
        #endif
        close(UInt8(ascii: "}"))
    }

    /// An array whose elements `body` writes with the value calls (``string(_:)``, ``int(_:)``…).
    mutating func array(_ body: (inout WireWriter) -> Void) {
        open(UInt8(ascii: "["))
        body(&self)
        close(UInt8(ascii: "]"))
    }

    /// Starts field `key` of the open object; its value is written next.
    mutating func key(_ key: String) {
        #if DEBUG
        if let last = lastKeys[lastKeys.count - 1] { precondition(last < key, "field \(key) after \(last): keys must be sorted") }
        lastKeys[lastKeys.count - 1] = key
        #endif
        separate()
        writeString(key)
        bytes.append(UInt8(ascii: ":"))
        // The value that follows is this field's, not a new element.
        started[started.count - 1] = false
    }

    mutating func string(_ value: String) {
        separate()
        writeString(value)
    }

    mutating func int(_ value: some BinaryInteger) {
        separate()
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        writeDigits(UInt64(value.magnitude))
    }

    /// An integer given as sign and magnitude (``WireJSON/integer(negative:magnitude:)``).
    mutating func integer(negative: Bool, magnitude: UInt64) {
        separate()
        if negative && magnitude != 0 { bytes.append(UInt8(ascii: "-")) }
        writeDigits(magnitude)
    }

    mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
    }

    // Fields of the common kinds, key and value in one call.
    mutating func field(_ key: String, _ value: String) {
        self.key(key)
        string(value)
    }

    mutating func field(_ key: String, _ value: some BinaryInteger) {
        self.key(key)
        int(value)
    }

    mutating func field(_ key: String, _ value: Bool) {
        self.key(key)
        bool(value)
    }

    /// A field whose value is an object written by `body`.
    mutating func objectField(_ key: String, _ body: (inout WireWriter) -> Void) {
        self.key(key)
        object(body)
    }

    /// A field whose value is an array written by `body`.
    mutating func arrayField(_ key: String, _ body: (inout WireWriter) -> Void) {
        self.key(key)
        array(body)
    }

    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        started.append(false)
    }

    private mutating func close(_ bracket: UInt8) {
        started.removeLast()
        bytes.append(bracket)
    }

    /// A comma before every value after the first of an array, and every field after the
    /// first of an object.
    private mutating func separate() {
        guard let last = started.last else { return }
        if last { bytes.append(UInt8(ascii: ",")) }
        started[started.count - 1] = true
    }

    private mutating func writeDigits(_ value: UInt64) {
        var digits: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)  // 32 bytes: 20 digits at most
        var n = 0
        var v = value
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[n] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
                n += 1
            } while v > 0
            for k in stride(from: n - 1, through: 0, by: -1) { bytes.append(buffer[k]) }
        }
    }

    private mutating func writeString(_ s: String) {
        var s = s
        s.makeContiguousUTF8()
        bytes.append(UInt8(ascii: "\""))
        s.utf8.withContiguousStorageIfAvailable { utf8 in
            // Runs that need no escape (nearly every byte of a path or a format) are copied whole.
            var run = 0
            for (i, byte) in utf8.enumerated() where byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run..<i]))
                run = i + 1
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                    bytes.append(UInt8(ascii: "\\"))
                    bytes.append(byte)
                } else {
                    bytes.append(contentsOf: "\\u00".utf8)
                    bytes.append(Self.hexDigit(byte >> 4))
                    bytes.append(Self.hexDigit(byte & 0xF))
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
