import TestSupport
import Testing
@testable import ImageManifest

@Suite struct GlobTests {
    @Test(arguments: [
        ("**/*.jpg", "a.jpg", true), ("**/*.jpg", "x/y/a.jpg", true), ("**/*.jpg", "a.png", false),
        ("*.jpg", "x/a.jpg", false), ("x/**", "x/a/b.png", true), ("x/**/b.png", "x/b.png", true),
        ("**/*.{jpg,png}", "d/a.png", true), ("**/*.{jpg,png}", "d/a.gif", false),
        ("img-??.jpg", "img-01.jpg", true), ("img-??.jpg", "img-1.jpg", false),
        ("[a-c]*.jpg", "b1.jpg", true), ("[!a-c]*.jpg", "b1.jpg", false), ("[!a-c]*.jpg", "d1.jpg", true),
        ("**/*", ".hidden.jpg", false), ("**/*", ".git/a.jpg", false), ("**/.*", "d/.hidden", true),
        ("*", "a", true), ("\\*.jpg", "*.jpg", true), ("\\*.jpg", "a.jpg", false),
        ("**/*.JPG", "a.jpg", false), ("a*b*c", "aXbYbZc", true), ("a*b*c", "aXbYbZ", false),
    ])
    func matches(_ pattern: String, _ path: String, _ expected: Bool) throws {
        #expect(try GlobPattern(pattern).matches(path) == expected)
    }

    /// Patterns that are all `**/*` and literals are matched by their endings, without the
    /// general matcher: on every path of a hostile list the two agree, revealing or not.
    @Test func theSuffixShortcutAgreesWithTheGeneralMatcher() throws {
        let patterns = try ["**/*.jpg", "**/*", "**/*.{jpg,png}", "**/*\u{E9}.jpg", "**/*.tar.gz", "**/*.j\\pg", "**/*.JPG", "**/*\n.gz"]
            .map(GlobPattern.init)
            + [GlobPattern.images]
        #expect(patterns.allSatisfy { $0.suffixes != nil })
        #expect(patterns.map { $0.asciiSuffixes != nil } == [true, true, true, false, true, true, true, false, true])
        #expect(try GlobPattern("**/a*.jpg").suffixes == nil && GlobPattern("*.jpg").suffixes == nil && GlobPattern("**/*.j?g").suffixes == nil)
        let names = ["a.jpg", "A.JPG", "a.Jpg", ".jpg", "..jpg", ".a.jpg", "a.jpg.png", "a.png", "a", "", "a.tar.gz", "b.gz",
                     "caf\u{E9}.jpg", "cafe\u{301}.jpg", "a.\u{301}jpg", "\u{600}.jpg", "a.j\\pg", "a.jpeg", "x.heic", "x.AVIF",
                     "a.jpg\u{301}", "\u{1F600}.png", "a.jpg/", "a.JPEG", "\r\n.jpg", "a\r\n.gz"]
        let directories = ["", "d/", ".d/", "d/.e/", "d//", "\u{E9}/", "../", "./", "/", "D.e/", "d.x/.y/z/"]
        for pattern in patterns {
            for directory in directories {
                for name in names {
                    let path = directory + name
                    for reveal in [false, true] {
                        let general = pattern.matchesByTokens(pattern.ignoresCase ? path.lowercased() : path, revealingHiddenFile: reveal)
                        #expect(pattern.matches(path, revealingHiddenFile: reveal) == general,
                                "\(pattern) on \(path.unicodeScalars.map { String($0.value, radix: 16) }) revealing \(reveal)")
                    }
                }
            }
        }
    }

    /// Revealing lifts the leading-dot rule for the file name only, never for directories.
    @Test(arguments: [
        ("**/*.jpg", "..jpg", true), ("*.jpg", "d/..jpg", false), ("**/*.jpg", "d/.x.jpg", true),
        ("**/*.jpg", ".git/a.jpg", false), ("**/*.jpg", ".d/.x.jpg", false), ("**", ".DS_Store", true),
        ("**/*.png", "..jpg", false),
    ])
    func matchesRevealingHiddenFiles(_ pattern: String, _ path: String, _ expected: Bool) throws {
        #expect(try GlobPattern(pattern).matches(path, revealingHiddenFile: true) == expected)
        #expect(try !GlobPattern(pattern).matches(path), "hidden without revealing")
    }

    @Test(arguments: [
        ("", "empty"), ("/a/*.jpg", "cannot start with '/'"), ("a//b", "empty segment"), ("a/", "empty segment"),
        ("../x", "'..' segments"), ("./x", "'.' segments"), ("**.jpg", "whole segment"), ("a{b", "no matching '}'"),
        ("a}b", "no matching '{'"), ("{a,{b}}", "cannot nest"), ("[a-", "no matching ']'"), ("[z-a]", "backwards"),
        ("a\\", "cannot end with"), ("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}", "more than 64"),
        ("{}", "a brace alternative leaves a segment empty"), ("{,}", "a brace alternative leaves a segment empty"),
        ("x/{a,}", "a brace alternative leaves a segment empty"), ("a/{,b}/c", "a brace alternative leaves a segment empty"),
    ])
    func refuses(_ pattern: String, _ reason: String) {
        #expect {
            try GlobPattern(pattern)
        } throws: { error in
            (error as? GlobPattern.SyntaxError)?.message.contains(reason) == true
        }
    }

    @Test func manyGlobstarsStayFast() throws {
        let pattern = try GlobPattern(Array(repeating: "**", count: 30).joined(separator: "/") + "/x")
        let path = Array(repeating: "d", count: 60).joined(separator: "/") + "/y"
        let clock = ContinuousClock()
        let elapsed = clock.measure { #expect(!pattern.matches(path)) }
        // A guard against exponential backtracking (30 globstars would take ages), not a measure
        // of speed: tight bounds fail on a machine busy with other work.
        #expect(elapsed < .seconds(15))
    }

    @Test func familySelectsIncludedButNotExcluded() throws {
        let yaml = manifest(format: "size: 5x5\nstyle: 32BitBGRA\nmaximumCount: 1",
                            extraFamilyKeys: "\n    include: [\"**/*.jpg\", \"**/*.png\"]\n    exclude: \"drafts/**\"")
        let family = try #require(try check(yaml).manifest?.families.first)
        #expect(family.selects("a/b.jpg"))
        #expect(!family.selects("a/b.gif"))
        #expect(!family.selects("drafts/b.jpg"))
    }

    /// Without `include`, the visible files named like images of the formats the pipeline decodes,
    /// in any case: a `README.txt` beside the photos is not a source.
    @Test func defaultIncludeTakesImageFileNamesInAnyCase() throws {
        let family = try #require(try check(manifest(format: "size: 5x5\nstyle: 32BitBGRA\nmaximumCount: 1")).manifest?.families.first)
        #expect(family.include == [GlobPattern.images])
        for name in ["x/y/z.webp", "IMG_0001.JPG", "a.jpeg", "b.Png", "c.heic", "d.AVIF", "e.tiff", "f.gif", "g.jfif"] {
            #expect(family.selects(name), "\(name)")
        }
        for name in ["README.txt", ".DS_Store", "a/.hidden.jpg", "notes.md", "photo.jpg.bak", "raw.cr2"] {
            #expect(!family.selects(name), "\(name)")
        }
    }
}

/// A slash that a combining mark follows (one Character with it) still divides names, and a
/// name whose first byte is a dot is hidden whatever follows it.
@Suite struct GlobCombiningMarkTests {
    @Test(arguments: [
        ("private/**", "private/\u{301}secret.jpg", true),
        ("photos/*.jpg", "photos/\u{301}b.jpg", true),
        ("*.jpg", "photos/\u{301}b.jpg", false),
        ("**/*.jpg", ".\u{301}hidden/a.jpg", false),
        ("**/*.jpg", "a/.\u{301}b.jpg", false),
        ("**/*.jpg", "a/\u{301}b.jpg", true),
        ("private/\u{301}*", "private/\u{301}secret.jpg", true),
        ("private/\u{301}*", "x/private/\u{301}secret.jpg", false),
    ])
    func namesAreSplitAtSlashBytes(pattern: String, path: String, expected: Bool) throws {
        #expect(try GlobPattern(pattern).matches(path) == expected)
        #expect(try GlobPattern(pattern).matchesByTokens(path, revealingHiddenFile: false) == expected)
    }
}

/// A pattern is split at slash bytes, as paths are, and one whose first byte is a slash is
/// absolute though a combining mark follows it.
@Suite struct GlobPatternSlashBytesTests {
    @Test func aPatternIsSplitAndRefusedByBytes() {
        #expect(throws: GlobPattern.SyntaxError.self) { try GlobPattern("/\u{301}x/*.jpg") }
        #expect(throws: GlobPattern.SyntaxError.self) { try GlobPattern("a//\u{301}b") }
        #expect(throws: GlobPattern.SyntaxError.self) { try GlobPattern("a/\u{301}b/") }
    }

    /// Whether a path below a directory may match: what a scan asks of a directory it cannot
    /// list before it reports it (one the patterns cannot reach is no loss), checked against
    /// the matcher on a file below it wherever that file can match.
    @Test(arguments: [
        ("d1/*.jpg", "d1", true), ("d1/*.jpg", "d2", false), ("d1/*.jpg", "d1/sub", false),
        ("**/*.jpg", "a/b", true), ("**/*.jpg", ".snap", false), ("**/*.jpg", "a/.snap", false),
        ("**/.snap/*.jpg", ".snap", true), ("x/**", "x/a", true), ("x/**", "y", false),
        ("*.jpg", "d", false), ("{a,b}/*.png", "b", true), ("{a,b}/*.png", "c", false),
        ("[a-c]*/**/*.jpg", "b1/deep", true), ("[a-c]*/**/*.jpg", "d1", false),
        ("**/*.JPG", "ANY/Dir", true), ("photos/*.jpg", "Photos", false),
    ])
    func mayMatchBelow(_ pattern: String, _ directory: String, _ expected: Bool) throws {
        let glob = try GlobPattern(pattern)
        #expect(glob.mayMatch(below: directory) == expected)
        if !expected {
            // No file below it matches, at any depth.
            for below in ["a.jpg", "x/a.jpg", "a.png", "x/a.png", "deep/er/a.jpg"] { #expect(!glob.matches(directory + "/" + below), "\(below)") }
        }
        // The built-in images pattern ignores case, and so does its check.
        #expect(GlobPattern.images.mayMatch(below: "Photos/2024") && !GlobPattern.images.mayMatch(below: ".thumbnails"))
    }
}
