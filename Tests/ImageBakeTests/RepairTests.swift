import Foundation
import ImageTableCore
import TestSupport
import Testing

/// Damage that a bake cannot see heals: one flipped pixel byte of a committed entry fails
/// `verify`, survives a bake (its record still names an unchanged source), and is cleared by
/// `verify --repair`, after which the next bake renders the entry again, equal to a clean bake.
struct RepairTests {
    static let format = "      grid:\n        size: 24x16\n        style: 32BitBGRA\n        maximumCount: 10\n"

    static func pixels(_ table: String, key: String) throws -> [UInt8]? {
        try ImageTableReader(path: table).withImage(forKey: key) { view in (0..<view.height).flatMap { Array(view.row($0)) } }
    }

    @Test func aFlippedPixelIsClearedByRepairAndBakedAgain() throws {
        let project = try BakeProject(formats: Self.format)
        let clean = try BakeProject(formats: Self.format)
        for (i, name) in ["Landscape_1", "Portrait_3", "Landscape_6"].enumerated() {
            try project.add("p\(i).jpg", from: Corpus.photo(name))
            try clean.add("p\(i).jpg", from: Corpus.photo(name))
        }
        for p in [project, clean] {
            let bake = try run(Products.imagetable, ["bake", p.manifestPath, "--no-progress"])
            #expect(bake.status == 0, "\(bake.stderr)")
        }
        let table = project.tables + "/grid.imagetable"
        let reference = try #require(try Self.pixels(clean.tables + "/grid.imagetable", key: "p1.jpg"))
        let slot = try #require(try ImageTableReader(path: table).entry(forKey: "p1.jpg")?.slot)
        let layout = try ImageTableReader(path: table).layout
        let fd = open(table, O_RDWR)
        var byte: UInt8 = 0
        _ = pread(fd, &byte, 1, off_t(layout.slotOffset(slot) + 200))
        byte ^= 0x10
        _ = pwrite(fd, &byte, 1, off_t(layout.slotOffset(slot) + 200))
        close(fd)

        #expect(try run(Products.imagetable, ["verify", table]).status == 1)
        // The bake trusts the record: nothing changed as far as it can tell.
        let rebake = try run(Products.imagetable, ["bake", project.manifestPath, "--no-progress"])
        #expect(rebake.status == 0 && rebake.stdout.contains("0 decoded, 3 unchanged"))
        #expect(try run(Products.imagetable, ["verify", table]).status == 1)

        let repair = try run(Products.imagetable, ["verify", "--repair", table])
        #expect(repair.status == 2, "\(repair.stderr)")
        #expect(repair.stdout == "\(table): repaired, cleared 1 entry for the next bake to render again, 2 entries verified\n")
        #expect(try Self.pixels(table, key: "p1.jpg") == nil)

        let heal = try run(Products.imagetable, ["bake", project.manifestPath, "--no-progress"])
        #expect(heal.status == 0 && heal.stdout.contains("1 decoded, 2 unchanged"), "\(heal.stdout)")
        let verify = try run(Products.imagetable, ["verify", table])
        #expect(verify.status == 0 && verify.stdout == "\(table): ok, 3 entries verified\n")
        #expect(try Self.pixels(table, key: "p1.jpg") == reference)
    }
}
