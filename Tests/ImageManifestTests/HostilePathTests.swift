import Foundation
import TestSupport
import Testing
@testable import ImageManifest
#if canImport(Glibc)
import Glibc
#endif

/// Paths that could hang or mislead `validate`: a manifest that is a FIFO (opening it used to
/// wait for a writer forever) or a device, and an `output` that is the `sources` directory.
/// Commands run under `timeout`, so a hang fails the test instead of stalling the run.
struct HostilePathTests {
    private static let body = "version: 1\noutput: tables\nfamilies:\n  users:\n    sources: photos\n    formats:\n"
        + "      small: {size: 5x5, style: 32BitBGRA, maximumCount: 2}\n"

    /// Runs `imagetable ARGUMENTS` killed after 20 seconds: status 124 means it hung.
    private func bounded(_ arguments: [String], in directory: String? = nil) throws -> ProcessResult {
        try run("/usr/bin/timeout", ["-s", "KILL", "20", Products.imagetable] + arguments, in: directory)
    }

    @Test func aFIFOManifestIsRefusedUnread() throws {
        let dir = try TemporaryDirectory()
        let fifo = dir.file("pipe.yaml")
        #expect(mkfifo(fifo, 0o600) == 0)
        for command in ["validate", "bake"] {
            let result = try bounded([command, fifo])
            #expect(result.exited && result.status == 1, "\(command) \(result.status): \(result.stderr)")
            // validate's diagnostics are its report (standard output); bake's are errors.
            let shown = command == "validate" ? result.stdout : result.stderr
            #expect(shown.contains("pipe.yaml:1:1: error: the manifest path is a FIFO (a named pipe), not a regular file [file-unreadable]"),
                    "\(result.stdout)")
        }
    }

    @Test func aDeviceManifestIsRefusedUnread() {
        let report = ManifestValidator().validate(fileAt: "/dev/zero")
        #expect(summary(report) == ["1:1 file-unreadable"])
        #expect(report.diagnostics.first?.message == "the manifest path is a device, not a regular file")
    }

    @Test func outputEqualToSourcesIsAnError() throws {
        let dir = try TemporaryDirectory()
        try dir.makeDirectory("photos")
        let same = Self.body.replacingOccurrences(of: "output: tables", with: "output: ./photos/")
        try dir.write("same.yaml", same)
        let report = ManifestValidator().validate(fileAt: dir.file("same.yaml"))
        #expect(summary(report) == ["5:14 output-is-sources"])
        #expect(report.diagnostics.first?.keyPath == "families.users.sources")
        // Said in the same run as the family's other errors: it waited for them to be fixed.
        let alsoBad = same.replacingOccurrences(of: "    sources: photos\n", with: "    sources: photos\n    failOn: strict\n")
        try dir.write("both.yaml", alsoBad)
        #expect(summary(ManifestValidator().validate(fileAt: dir.file("both.yaml"))) == ["5:14 output-is-sources", "6:13 unknown-fail-level"])

        // Inside, or around, is fine: the baker does not scan an output directory inside sources.
        for (output, sources) in [("photos/tables", "photos"), (".", "photos")] {
            let text = Self.body.replacingOccurrences(of: "output: tables", with: "output: \(output)")
                .replacingOccurrences(of: "sources: photos", with: "sources: \(sources)")
            try dir.write("nested.yaml", text)
            #expect(ManifestValidator().validate(fileAt: dir.file("nested.yaml")).isValid, "\(output) / \(sources)")
        }
    }
}
