import Foundation
import ImageBake
import ImageTableCore
import TestSupport
import Testing

/// A worker writes each slot whole, its padding zero (FORMAT.md), from buffers it keeps from job
/// to job: a buffer that last held a larger image must not lend that image's pixels to a smaller
/// one's padding.
@Suite struct SlotPaddingTests {
    @Test func slotPaddingIsZeroAfterAWorkerRenderedALargerImageIntoTheSameBuffer() throws {
        // photos: 150×150 BGRA, 96,000 bytes in a slot of 98,304; icons: 20×20 grey, 1,280 in 4,096.
        let project = try BakeProject(formats: "      large:\n        size: 150x150\n        style: 32BitBGRA\n        maximumCount: 4\n")
        try project.editManifest {
            $0 + "  icons:\n    sources: src\n    formats:\n      tiny:\n        size: 20x20\n        style: 8BitGrayscale\n        maximumCount: 4\n"
        }
        for (i, name) in ["Landscape_1", "Portrait_3", "Landscape_5"].enumerated() { try project.add("p\(i).jpg", from: Corpus.photo(name)) }
        // One worker: every icon is drawn into the buffer a photo was drawn into before it.
        let summary = try project.bake(jobs: 1)
        #expect(summary.decoded == 6 && summary.failed.isEmpty, "\(summary)")

        let path = project.tables + "/tiny.imagetable"
        let reader = try ImageTableReader(path: path)
        let layout = reader.layout
        #expect(layout.imageBytes == 1280 && layout.slotStride == 4096)
        let file = try #require(FileHandle(forReadingAtPath: path))
        defer { try? file.close() }
        let entries = reader.entries()
        #expect(entries.count == 3)
        for entry in entries {
            try file.seek(toOffset: UInt64(layout.slotOffset(entry.slot) + layout.imageBytes))
            let padding = [UInt8](try file.read(upToCount: layout.slotStride - layout.imageBytes) ?? Data())
            #expect(padding.count == layout.slotStride - layout.imageBytes && padding.allSatisfy { $0 == 0 },
                    "slot \(entry.slot) of \(entry.key): \(padding.filter { $0 != 0 }.count) padding bytes not zero")
        }
    }
}
