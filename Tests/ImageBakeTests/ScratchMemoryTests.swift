import Foundation
import ImageBake
import ImageTableCore
import TestSupport
import Testing

/// The memory a bake shares with its workers, where a member is drawn when its slot cannot be
/// taken before the source has decoded (a key replacing its own entry, a full table).
@Suite struct ScratchMemoryTests {
    /// Whether this machine lets a test run a command with a read-only `/dev/shm` of its own
    /// (`unshare -m` needs root or a user namespace).
    static let readOnlySharedMemory: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"),
              let result = try? run("/usr/bin/unshare", ["-m", "sh", "-c", Self.withReadOnlyShm + "exec true"]) else { return false }
        return result.status == 0
    }()

    private static let withReadOnlyShm = "mount -t tmpfs -o ro,size=1M tmpfs /dev/shm && "

    /// Where shared memory is refused, the bake shares an unlinked temporary file with its
    /// workers instead. Changed keys replace their own entries, so every member is drawn in that
    /// memory and placed once decoded: the entries must equal those of a bake with shared memory,
    /// pixel checksum for pixel checksum. (Before, such a bake published slots it had never
    /// filled, and `verify` found every one damaged.)
    @Test(.enabled(if: Self.readOnlySharedMemory))
    func withoutSharedMemoryReplacedEntriesArePlacedIntact() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 16, maximumCount: 4))
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        try project.add("b.jpg", from: Corpus.photo("Landscape_2"))
        _ = try project.bake()
        try project.add("a.jpg", from: Corpus.photo("Landscape_3"))
        try project.add("b.jpg", from: Corpus.photo("Landscape_4"))

        let script = Self.withReadOnlyShm + "exec \"$0\" bake \"$1\" --jobs 2"
        let result = try run("/usr/bin/unshare", ["-m", "sh", "-c", script, Products.imagetable, project.manifestPath])
        #expect(result.status == 0, "\(result.stderr)")
        for table in ["bgra", "bgr", "rgb555", "grey"] {
            let report = TableVerifier.verify(path: project.tables + "/\(table).imagetable")
            #expect(report.isValid && report.validEntries == 2, "\(table): \(report.problems)")
        }

        let reference = try BakeProject(formats: BakeProject.fourStyles(size: 16, maximumCount: 4))
        try reference.add("a.jpg", from: Corpus.photo("Landscape_3"))
        try reference.add("b.jpg", from: Corpus.photo("Landscape_4"))
        _ = try reference.bake()
        #expect(try project.entries() == reference.entries())
    }
}
