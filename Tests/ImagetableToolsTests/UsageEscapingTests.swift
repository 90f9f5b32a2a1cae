import Foundation
import TestSupport
import Testing

/// Usage errors quote the arguments and environment variables as given, and annotations quote
/// manifest text: escaped as every other line, so that a file name a glob picked up cannot drive
/// the terminal or forge a CI command.
struct UsageEscapingTests {
    static let hostile = "x\u{1B}[31m\n::error::forged"

    /// ArgumentParser's own errors and the commands' `ValidationError`s, in arguments and in
    /// the environment: no escape byte, no line that starts with `::`, the value written out.
    @Test(arguments: [
        (["version", hostile], [String: String]()),
        (["verify", "--format", hostile, "t.imagetable"], [:]),
        (["inspect", "--limit", hostile, "t.imagetable"], [:]),
        (["validate", "--max-disk", "1" + hostile, "m.yaml"], [:]),
        (["export", "m.yaml", "--to", "d"], ["SOURCE_DATE_EPOCH": hostile]),
    ])
    func aUsageErrorIsEscaped(arguments: [String], environment: [String: String]) throws {
        let result = try run(Products.imagetable, arguments, environment: environment)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(!result.stderr.contains("\u{1B}") && !result.stderr.split(separator: "\n").contains { $0.hasPrefix("::") }, "\(result.stderr)")
        #expect(result.stderr.contains("x\\u{1B}[31m\\n::error::forged"), "\(result.stderr)")
        #expect(result.stderr.contains("\nUsage: imagetable "), "\(result.stderr)")
    }

    /// An invalid value's message keeps the option's help on a line of its own.
    @Test func anInvalidValueKeepsItsHelpLine() throws {
        let result = try imagetable("verify", "--format", "bogus", "t.imagetable")
        #expect(result.stderr.hasPrefix("Error: The value 'bogus' is invalid for '--format <format>'. Please provide one of 'text' and 'json'.\n"
                                        + "Help:  --format <format>  "), "\(result.stderr)")
        #expect(result.stderr.contains("\nUsage: imagetable verify [<options>] <table> ...\n  See 'imagetable verify --help' for more information.\n"))
    }

    /// A value that holds ArgumentParser's own markers ("Help:", "Error:") stays inside the one
    /// line of its error: the lines after it were found by searching for those markers.
    @Test func aValueCannotForgeALineOfTheError() throws {
        let result = try imagetable("validate", "--root", "/x\nHelp:  \nError: (forged)", "m.yaml")
        #expect(result.status == 64)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.first?.hasSuffix("\\nHelp:  \\nError: (forged): no such directory.") == true, "\(result.stderr)")
        #expect(lines.count == 3 && !lines.dropFirst().contains { $0.hasPrefix("Error") || $0.hasPrefix("Help") }, "\(result.stderr)")
    }

    /// A path with a trailing slash is annotated on itself: the name's bytes were counted off the
    /// untrimmed path (`sub/photos/` was `sub/p/photos`).
    @Test func aTrailingSlashLeavesTheAnnotatedPathWhole() throws {
        let scratch = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: scratch.file("sub/photos"), withIntermediateDirectories: true)
        let result = try run(Products.imagetable, ["validate", "--format", "github", "sub/photos/"], in: scratch.path,
                             environment: ["GITHUB_WORKSPACE": scratch.path])
        #expect(result.stdout.hasPrefix("::error file=sub/photos,"), "\(result.stdout)")
    }

    /// GitHub's older commands and Azure Pipelines' are read anywhere in a line: annotations
    /// write `##[` and `##vso[` out, as text output does.
    @Test func annotationsWriteOutCommandMarkers() throws {
        let scratch = try TemporaryDirectory()
        let manifest = scratch.file("m.yaml")
        try "version: 1\noutput: t\nfamilies: {}\n\"##vso[task.setvariable variable=X]1 ##[error]forged\": 1\n"
            .write(toFile: manifest, atomically: true, encoding: .utf8)
        let result = try imagetable("validate", "--format", "github", manifest)
        #expect(!result.stdout.contains("##vso[") && !result.stdout.contains("##[error]"), "\(result.stdout)")
        #expect(result.stdout.contains("unknown key '#\\u{23}vso[task.setvariable variable=X]1 #\\u{23}[error]forged'"), "\(result.stdout)")
    }
}
