import ImageManifest

// One input is a manifest's bytes. What must hold for any bytes: no crash, no hang (libFuzzer's
// -timeout), bounded memory (-rss_limit_mb), and every diagnostic positioned inside the file:
// on one of its lines, never past the last, and at most one column past that line's end.
private let validator = ManifestValidator(options: ValidationOptions(allowOutsidePaths: true))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzManifest(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let report = validator.validate(contents: bytes, file: "fuzz.yaml")
    let lengths = lineLengths(bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes[3...]) : bytes)
    for d in report.diagnostics where d.line < 1 || d.line > lengths.count || d.column < 1 || d.column > lengths[d.line - 1] + 1 {
        fatalError("diagnostic at \(d.line):\(d.column) of an input with \(lengths.count) lines: \(d)")
    }
    return 0
}

/// The number of characters on each line, lines as libyaml counts them: LF, CR LF, a lone CR,
/// NEL, LS and PS each end one, and a break after the last line does not start another.
private func lineLengths(_ text: [UInt8]) -> [Int] {
    var lengths: [Int] = [], length = 0, i = 0, open = true
    while i < text.count {
        let rest = text[i...]
        let width = rest.starts(with: [0x0D, 0x0A]) || rest.starts(with: [0xC2, 0x85]) ? 2
            : rest.starts(with: [0xE2, 0x80, 0xA8]) || rest.starts(with: [0xE2, 0x80, 0xA9]) ? 3
            : text[i] == 0x0A || text[i] == 0x0D ? 1 : 0
        if width > 0 {
            lengths.append(length)
            length = 0
            open = false
            i += width
        } else {
            if text[i] & 0xC0 != 0x80 { length += 1 }
            open = true
            i += 1
        }
    }
    if open { lengths.append(length) }
    return lengths
}
