/// The checks a manifest's bytes pass before any YAML parser sees them: size, encoding, emptiness.
///
/// They come first because they are cheap and because each gives a better message than the
/// parser would ("the file is UTF-16" rather than "control characters are not allowed").
enum SourceText {
    /// A problem with the bytes themselves.
    struct Problem: Error, Equatable {
        let code: DiagnosticCode
        let message: String
        let location: SourceLocation
    }

    /// Checks the bytes and returns them without a UTF-8 byte-order mark.
    ///
    /// The mark is dropped here so that libyaml's columns on line 1 match what editors show.
    ///
    /// - Parameter bytes: the file's contents.
    /// - Throws: ``Problem`` with code `file-too-large`, `invalid-utf8` or `empty-file`.
    static func check(_ bytes: [UInt8]) throws(Problem) -> ArraySlice<UInt8> {
        if bytes.count > ManifestLimits.maxFileBytes {
            throw Problem(code: .fileTooLarge,
                          message: "the manifest is larger than \(ManifestLimits.maxFileBytes) bytes (1 MiB), the limit for a manifest",
                          location: .start)
        }
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0, 0, 0xFE, 0xFF]) {
            throw Problem(code: .invalidUTF8, message: "the manifest is UTF-16 or UTF-32; save it as UTF-8", location: .start)
        }
        // Without a byte-order mark, YAML's own rule (spec 1.2, 5.2): an ASCII character beside a
        // NUL in the first two bytes is UTF-16 or UTF-32, and three NULs before one is UTF-32BE.
        // It was reported as a control character.
        if bytes.count >= 2, (bytes[0] == 0) != (bytes[1] == 0) || (bytes.count >= 4 && bytes[0..<3] == [0, 0, 0] && bytes[3] != 0) {
            throw Problem(code: .invalidUTF8, message: "the manifest is UTF-16 or UTF-32 without a byte-order mark "
                          + "(its first two bytes hold a NUL); save it as UTF-8", location: .start)
        }
        if let bad = firstInvalidUTF8(bytes) {
            throw Problem(code: .invalidUTF8,
                          message: "byte 0x\(String(bytes[bad.offset], radix: 16, uppercase: true)) at offset \(bad.offset) is not valid UTF-8; save the manifest as UTF-8",
                          location: bad.location)
        }
        let body = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes[3...] : bytes[...]
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) {
            throw Problem(code: .emptyFile, message: "the manifest is empty; it needs at least 'version', 'output' and 'families'",
                          location: .start)
        }
        return body
    }

    /// The offset and position of the first byte that is not part of a well-formed UTF-8
    /// sequence (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
    static func firstInvalidUTF8(_ bytes: [UInt8]) -> (offset: Int, location: SourceLocation)? {
        // A byte-order mark takes no column, as in every other position (it is dropped).
        var i = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0, line = 1, column = 1
        while i < bytes.count {
            let b = bytes[i]
            let length: Int
            var low: UInt8 = 0x80, high: UInt8 = 0xBF
            switch b {
            case 0x00...0x7F: length = 1
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return (i, SourceLocation(line: line, column: column))
            }
            for k in 1..<max(length, 1) {
                let lo = k == 1 ? low : 0x80, hi = k == 1 ? high : 0xBF
                guard i + k < bytes.count, (lo...hi).contains(bytes[i + k]) else {
                    return (i, SourceLocation(line: line, column: column))
                }
            }
            // Line breaks as libyaml counts them (``SourceLines``): LF, CR LF, a lone CR, NEL, LS, PS.
            let isBreak = b == 0x0A || (b == 0x0D && (i + 1 == bytes.count || bytes[i + 1] != 0x0A))
                || (b == 0xC2 && bytes[i + 1] == 0x85) || (b == 0xE2 && bytes[i + 1] == 0x80 && bytes[i + 2] & 0xFE == 0xA8)
            if isBreak {
                line += 1
                column = 1
            } else if b != 0x0D {
                column += 1
            }
            i += length
        }
        return nil
    }
}
