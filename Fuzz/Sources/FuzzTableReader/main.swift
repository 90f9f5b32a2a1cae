import Foundation
import ImageTableCore

// One input is a table file's bytes. The reader maps files, so each input is written to one file
// on /dev/shm (memory, not disk), truncated first. What must hold for any
// bytes: no crash, no hang, no read outside the mapping; a table that opens serves only entries
// whose pixels verify, and `verify` agrees with what the reader served.
private let path = "/dev/shm/imagetables-fuzz-\(getpid()).imagetable"
private let memory: Int32 = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTableReader(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard ftruncate(memory, 0) == 0, pwrite(memory, data, size, 0) == size else { return 0 }
    let report = TableVerifier.verify(path: path)
    guard let reader = try? ImageTableReader(path: path) else { return 0 }
    var served = 0
    for entry in reader.entries() {
        let sum = try? reader.withImage(forKey: entry.key) { image -> UInt32 in
            // Touch every byte the view claims: a bad offset or size faults here.
            CRC32.checksum(UnsafeRawBufferPointer(start: image.baseAddress, count: image.bytesPerRow * image.height))
        }
        if sum != nil { served += 1 }
    }
    if report.isValid && served != reader.entries().count {
        fatalError("verify passed but the reader refused \(reader.entries().count - served) entries")
    }
    return 0
}
