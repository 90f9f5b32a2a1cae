/// The manifest's text cut into lines the way libyaml cuts them, so that its marks can be turned
/// into bytes and back, moved to where a person must edit, and quoted under a diagnostic.
///
/// libyaml ends a line at LF, CR LF, a lone CR, and also at NEL, LS and PS (YAML 1.1 breaks);
/// counting the same breaks keeps our lines equal to its marks. A break after the last line does
/// not start another one: `a\nb\n` has two lines, and nothing is ever placed on a third.
struct SourceLines {
    let text: ArraySlice<UInt8>
    /// For each line, the offsets (into `text`) of its first byte and of its line break, or of the
    /// end of the text for the last line.
    private var bounds: [(start: Int, end: Int)] = []
    /// The offset of every `checkpointStride`-th character (Unicode scalar, as libyaml's mark
    /// indexes count them: CR LF is two), so that a mark finds its byte in constant time,
    /// however long its line.
    private var checkpoints: [Int] = []
    private static let checkpointStride = 64

    init(_ text: ArraySlice<UInt8>) {
        self.text = text
        checkpoints.reserveCapacity(text.count / Self.checkpointStride + 1)
        var start = text.startIndex, i = text.startIndex, characters = 0
        while i < text.endIndex {
            let byte = text[i]
            if (byte & 0xC0) != 0x80 {
                if characters % Self.checkpointStride == 0 { checkpoints.append(i) }
                characters += 1
            }
            // Most bytes cannot start a break; only these four can.
            guard byte == 0x0A || byte == 0x0D || byte == 0xC2 || byte == 0xE2 else {
                i += 1
                continue
            }
            let width = Self.breakWidth(at: i, in: text)
            if width > 0 {
                bounds.append((start, i))
                i += width
                start = i
            } else {
                i += 1
            }
        }
        if start < text.endIndex || bounds.isEmpty { bounds.append((start, text.endIndex)) }
    }

    /// The byte that starts character `index` (counted from 0 as libyaml's marks count them), or
    /// `nil` at the end of the text.
    func byte(atCharacter index: Int) -> UInt8? {
        let checkpoint = index / Self.checkpointStride
        guard index >= 0, checkpoint < checkpoints.count else { return nil }
        var i = checkpoints[checkpoint], remaining = index % Self.checkpointStride
        while remaining > 0 && i < text.endIndex {
            i += 1
            while i < text.endIndex && (text[i] & 0xC0) == 0x80 { i += 1 }
            remaining -= 1
        }
        return i < text.endIndex ? text[i] : nil
    }

    /// The number of bytes of the line break at `i`, or 0 when there is none.
    static func breakWidth(at i: Int, in text: ArraySlice<UInt8>) -> Int {
        switch text[i] {
        case 0x0A: return 1
        case 0x0D: return i + 1 < text.endIndex && text[i + 1] == 0x0A ? 2 : 1
        case 0xC2 where i + 1 < text.endIndex && text[i + 1] == 0x85: return 2
        case 0xE2 where i + 2 < text.endIndex && text[i + 1] == 0x80 && (text[i + 2] == 0xA8 || text[i + 2] == 0xA9): return 3
        default: return 0
        }
    }

    /// The number of lines.
    var count: Int { bounds.count }

    /// The bytes of line `line` (from 1) without its break; empty when there is no such line.
    func bytes(ofLine line: Int) -> ArraySlice<UInt8> {
        guard line >= 1, line <= bounds.count else { return [] }
        return text[bounds[line - 1].start..<bounds[line - 1].end]
    }

    /// The text of line `line` (from 1) without its break.
    func string(ofLine line: Int) -> String { String(decoding: bytes(ofLine: line), as: UTF8.self) }

    /// The number of characters on line `line`.
    func length(ofLine line: Int) -> Int { bytes(ofLine: line).count { ($0 & 0xC0) != 0x80 } }

    /// The offset of the character at `location`; the end of its line when the column is past
    /// it, the end of the text when the line is.
    func offset(of location: SourceLocation) -> Int {
        guard location.line >= 1 else { return text.startIndex }
        guard location.line <= bounds.count else { return text.endIndex }
        let (start, end) = bounds[location.line - 1]
        var column = 1, i = start
        while i < end && column < location.column {
            i += 1
            while i < end && (text[i] & 0xC0) == 0x80 { i += 1 }
            column += 1
        }
        return i
    }

    /// The line and column of the byte at `offset`.
    func location(ofOffset offset: Int) -> SourceLocation {
        var low = 0, high = bounds.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if bounds[mid].start <= offset { low = mid } else { high = mid - 1 }
        }
        let start = bounds[low].start
        let column = 1 + text[start..<min(max(offset, start), bounds[low].end)].count { ($0 & 0xC0) != 0x80 }
        return SourceLocation(line: low + 1, column: column)
    }

    /// `location` moved inside the file: past the last line (libyaml's mark for "end of
    /// stream" after a final break) it becomes the end of the last line that is not blank, and a
    /// column past its line's end becomes that end.
    func clamped(_ location: SourceLocation) -> SourceLocation {
        guard location.line <= bounds.count else {
            let last = (1...bounds.count).last { !isBlank($0) } ?? bounds.count
            return SourceLocation(line: last, column: length(ofLine: last) + 1)
        }
        let line = max(location.line, 1)
        return SourceLocation(line: line, column: min(max(location.column, 1), length(ofLine: line) + 1))
    }

    /// Whether line `line` holds nothing but spaces and tabs.
    func isBlank(_ line: Int) -> Bool { bytes(ofLine: line).allSatisfy { $0 == 0x20 || $0 == 0x09 } }

    /// The number of spaces that start line `line`.
    func indentation(ofLine line: Int) -> Int { bytes(ofLine: line).prefix { $0 == 0x20 }.count }

    /// The first byte after the spaces and tabs that start line `line`, or `nil` for a blank line.
    func firstContentByte(ofLine line: Int) -> UInt8? { bytes(ofLine: line).first { $0 != 0x20 && $0 != 0x09 } }

    /// The byte at `location`, or `nil` at or past the end of its line.
    func byte(at location: SourceLocation) -> UInt8? {
        let i = offset(of: location)
        guard location.line >= 1, location.line <= bounds.count, i < bounds[location.line - 1].end else { return nil }
        return text[i]
    }
}
