import Foundation
import ImagePipeline
import ImageTableCore
import Synchronization
import TestSupport
import Testing

/// The way the bake uses the engine: reserve a slot in each member's table, render one source
/// into all of them, record the content rectangles, publish.
@Suite struct TableIntegrationTests {
    @Test func renderIntoReservedSlotsAndReadBack() throws {
        let dir = try TemporaryDirectory()
        let specs = [TableFormat(width: 150, height: 150, style: .bgra32, cornerRadius: 12),
                     TableFormat(width: 150, height: 100, style: .bgr16, fit: .inside, background: .black)]
        let tables = try specs.enumerated().map { i, spec in
            var format = spec
            format.name = "m\(i)"
            format.family = "demo"
            format.capacity = 4
            return try ImageTableWriter(path: dir.file("m\(i).imagetable"), format: format)
        }
        defer { tables.forEach { $0.close() } }
        let key = "photos/Portrait_6.jpg", source = UUID()
        var reservations = try tables.map { try $0.reserve(key: key, sourceUUID: source) }
        let targets = zip(specs, reservations).map { RenderTarget(format: $0, reservation: $1) }
        let report = try ImageRenderer().render(.file(Corpus.photo("Portrait_6.jpg")), into: targets)
        for i in reservations.indices { reservations[i].contentRect = report.members[i].contentRect }
        for (table, reservation) in zip(tables, reservations) { _ = try table.publish([reservation]) }

        // The same render into plain buffers gives the same bytes as the tables hold.
        let (_, slots) = try render(.file(Corpus.photo("Portrait_6.jpg")), specs)
        for (i, table) in tables.enumerated() {
            let entry = try #require(table.entry(forKey: key))
            #expect(entry.contentRect == report.members[i].contentRect)
            let stored = try #require(try table.withImage(forKey: key) { view in (view.bytesPerRow, Array(view.bytes)) })
            #expect(stored.0 == slots[i].bytesPerRow)
            #expect(stored.1 == Array(slots[i].buffer))
        }
        // Portrait 1200×1800 inside 150×100: 67×100 centred.
        #expect(report.members[1].contentRect == PixelRect(x: 41, y: 0, width: 67, height: 100))
    }

    @Test func aReservationOfAnotherSizeIsRefused() throws {
        let dir = try TemporaryDirectory()
        let table = try ImageTableWriter(path: dir.file("t.imagetable"), format: TableFormat(
            name: "t", width: 64, height: 64, style: .bgr32, capacity: 1))
        defer { table.close() }
        let reservation = try table.reserve(key: "k", sourceUUID: UUID())
        let target = RenderTarget(format: TableFormat(width: 64, height: 64, style: .bgra32), reservation: reservation)
        #expect(throws: ImageTableError.self) { try ImageRenderer().render(.file(PixelTests.photo), into: [target]) }
        table.abandon(reservation)
    }
}

/// libvips' GLib warnings go to the handler, not stderr.
@Suite(.serialized) struct WarningTests {
    /// A decoder warning on a source that still renders (libjpeg's "Corrupt JPEG data" for bytes
    /// between markers) reaches the handler. The test fails when the handler receives nothing.
    @Test func warningsReachTheHandler() throws {
        let received = Mutex<[String]>([])
        PipelineRuntime.setWarningHandler { text in received.withLock { $0.append(text) } }
        defer { PipelineRuntime.setWarningHandler(nil) }
        var jpeg = try Data(contentsOf: URL(fileURLWithPath: Corpus.photo("Landscape_1.jpg")))
        let marker = try #require(jpeg.firstRange(of: Data([0xFF, 0xDB])))
        jpeg.insert(contentsOf: [0x12, 0x34, 0x56], at: marker.lowerBound)
        let (report, _) = try render(.data(jpeg, name: "junk.jpg"), [TableFormat(width: 64, height: 64, style: .bgr32)])
        #expect(report.decodes == 1, "extraneous bytes are a warning, not an error, at fail_on=error")
        #expect(report.warnings.contains { $0.contains("Corrupt JPEG data") }, "\(report.warnings)")
        let warnings = received.withLock { $0 }
        #expect(warnings.contains { $0.contains("Corrupt JPEG data") }, "\(warnings)")
    }
}
