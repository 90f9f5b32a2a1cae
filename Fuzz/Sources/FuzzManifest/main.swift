import ImageManifest

// One input is a manifest's bytes. What must hold for any bytes: no crash, no hang (libFuzzer's
// -timeout), bounded memory (-rss_limit_mb), and every diagnostic positioned inside the file.
private let validator = ManifestValidator(options: ValidationOptions(allowOutsidePaths: true))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzManifest(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let report = validator.validate(contents: bytes, file: "fuzz.yaml")
    // Lines as libyaml counts them (LF, CR LF or a lone CR each end one), plus the line after
    // the last break, where an error at the very end is placed.
    let breaks = bytes.indices.filter { bytes[$0] == 0x0A || (bytes[$0] == 0x0D && ($0 + 1 == bytes.count || bytes[$0 + 1] != 0x0A)) }
    for d in report.diagnostics where d.location.line < 1 || d.location.line > breaks.count + 1 {
        fatalError("diagnostic at line \(d.location.line) of an input with \(breaks.count + 1) lines: \(d)")
    }
    return 0
}
