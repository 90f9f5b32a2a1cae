import Foundation
import ImageTableCore
import TestSupport
import Testing

/// What a large capacity costs the processes that use a table: nothing until it is used. A
/// version 1 table's writer read its whole index at open (256 bytes a slot) and inspect did too.
@Suite struct CapacityMemoryTests {
    /// Runs `arguments` and returns its status and the largest resident size (kB) any one of its
    /// processes reached (the bake and each of its workers), as `getrusage` reports for children.
    static func peakResident(_ arguments: [String]) throws -> (status: Int32, kilobytes: Int) {
        let script = """
            import json, resource, subprocess, sys
            status = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
            print(json.dumps([status, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))
            """
        let result = try run("/usr/bin/env", ["python3", "-c", script] + arguments)
        let numbers = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [Int], "\(result.stderr)")
        return (Int32(numbers[0]), numbers[1])
    }

    @Test(.disabled(if: Sanitizers.any, "a sanitizer's shadow memory is resident"))
    func aBakeIntoTablesOfTwoMillionSlotsStaysSmall() throws {
        let project = try BakeProject(formats: """
                  thumb:
                    size: 16x16
                    style: 32BitBGRA
                    maximumCount: 2000000
                  grey:
                    size: 8x8
                    style: 8BitGrayscale
                    maximumCount: 2000000

            """)
        for (i, tile) in PhotoTiles.first(20).enumerated() { try project.add("t\(i).jpg", from: tile) }
        let bake = try Self.peakResident([Products.imagetable, "bake", project.manifestPath, "--no-progress"])
        #expect(bake.status == 0)
        #expect(bake.kilobytes < 80_000, "a bake process reached \(bake.kilobytes) kB")
        let again = try Self.peakResident([Products.imagetable, "bake", project.manifestPath, "--no-progress"])
        #expect(again.status == 0 && again.kilobytes < 80_000, "a re-bake reached \(again.kilobytes) kB")
        let inspect = try Self.peakResident([Products.imagetable, "inspect", project.tables + "/thumb.imagetable", "--no-entries"])
        #expect(inspect.status == 0 && inspect.kilobytes < 40_000, "inspect reached \(inspect.kilobytes) kB")
        let reader = try ImageTableReader(path: project.tables + "/thumb.imagetable")
        #expect(reader.count == 20 && reader.layout.capacity == 2_000_000)
        var st = stat()
        #expect(stat(project.tables + "/thumb.imagetable", &st) == 0 && Int(st.st_blocks) * 512 < 1 << 20,
                "\(Int(st.st_blocks) * 512) bytes allocated for 20 entries")
    }
}
