import Foundation
import TestSupport
import Testing

/// Every shell block of the README marked `sh runnable` runs as written: in order, in one fresh
/// copy of `manifests/` and `samples/`, with the built `imagetable` first on the `PATH`, each
/// block under `bash -e -o pipefail`.
@Suite struct ReadmeTests {
    /// The runnable blocks, in order.
    static func runnableBlocks() throws -> [String] {
        let readme = try String(contentsOfFile: Checkout.file("README.md"), encoding: .utf8)
        return readme.components(separatedBy: "\n```sh runnable\n").dropFirst().map {
            String($0[..<($0.range(of: "\n```\n")?.lowerBound ?? $0.endIndex)])
        }
    }

    @Test func everyRunnableBlockRunsAsWritten() throws {
        let blocks = try Self.runnableBlocks()
        try #require(blocks.count >= 5)
        // The blocks bake, export and look inside the demo's tables.
        let commands = blocks.joined(separator: "\n")
        for command in ["imagetable validate", "imagetable bake", "imagetable export", "imagetable inspect", "imagetable verify",
                        "imagetable extract", "imagetable preview", "imagetable --version"] {
            #expect(commands.contains(command), "no runnable block runs \(command)")
        }
        let dir = try TemporaryDirectory()
        for name in ["manifests", "samples"] {
            try FileManager.default.copyItem(atPath: Checkout.file(name), toPath: dir.file(name))
        }
        try? FileManager.default.removeItem(atPath: dir.file("tables"))
        let path = Products.directory + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        for block in blocks {
            let result = try run("/bin/bash", ["-e", "-o", "pipefail", "-c", block], in: dir.path, environment: ["PATH": path])
            #expect(result.status == 0, "README block failed (\(result.status)):\n\(block)\n\(result.stdout)\(result.stderr)")
        }
        // What the blocks claim they made.
        #expect(FileManager.default.fileExists(atPath: dir.file("landscape.png")))
        #expect(FileManager.default.fileExists(atPath: dir.file("build/tables/index.json")))
    }

    /// The README names no table by a placeholder: every `tables/NAME.imagetable` it mentions is
    /// one `make demo` bakes, or a glob.
    @Test func tablePathsAreTheDemosTables() throws {
        let readme = try String(contentsOfFile: Checkout.file("README.md"), encoding: .utf8)
        let demo = try String(contentsOfFile: Checkout.file("manifests/demo.yaml"), encoding: .utf8)
        for match in readme.matches(of: /tables\/([A-Za-z0-9_@-]+)\.imagetable/) {
            let name = String(match.output.1)
            let format = name.split(separator: "@").first.map(String.init) ?? name
            #expect(demo.contains(format + ":"), "README names tables/\(name).imagetable, which manifests/demo.yaml does not make")
        }
    }
}
