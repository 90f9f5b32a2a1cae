@testable import ImageTableCore
import Testing

/// Paths as the kernel reads them: a slash that a combining mark follows is still a slash, and
/// `é` in NFC and in NFD are two names.
@Suite struct PathBytesTests {
    let accent = "\u{301}"
    let nfc = "caf\u{E9}", nfd = "cafe\u{301}"

    @Test func aSlashBeforeACombiningMarkSplits() {
        #expect(PathBytes.components("/a/\(accent)b//c/").map { Array($0.utf8) } == [Array("a".utf8), Array("\(accent)b".utf8), Array("c".utf8)])
        #expect("a/\(accent)b".split(separator: "/").count == 1, "what Characters make of it")
        let cut = PathBytes.lastSlash("proj/\(accent)m.yaml")
        #expect(cut.map { Array($0.directory.utf8) } == Array("proj".utf8) && cut.map { Array($0.name.utf8) } == Array("\(accent)m.yaml".utf8))
        #expect(Array(PathBytes.lastName("mm/\(accent)x//").utf8) == Array("\(accent)x".utf8))
        #expect(Directories.parent(of: "mm/\(accent)x") == "mm" && Directories.parent(of: "/\(accent)x") == "/")
    }

    @Test func belowIsByBytes() {
        #expect(PathBytes.isBelow("/m/\(accent)s", "/m"))
        #expect(!PathBytes.isBelow("/\(nfc)/x.jpg", "/\(nfd)") && !PathBytes.isBelow("/\(nfd)/x.jpg", "/\(nfc)"))
        #expect(!PathBytes.isBelow("/m", "/m") && !PathBytes.isBelow("/m/", "/m") && !PathBytes.isBelow("/mm/x", "/m"))
        #expect(PathBytes.isBelow("/x", "/") && !PathBytes.isBelow("/", "/"))
        #expect(PathBytes.isInside("/m", "/m") && !PathBytes.isInside("/\(nfc)", "/\(nfd)"))
        #expect(PathBytes.remainder("src/\(accent)x.jpg", after: "src/").map { Array($0.utf8) } == Array("\(accent)x.jpg".utf8))
    }

    @Test func anAbsolutePathIsOneWhoseFirstByteIsASlash() {
        #expect(PathBytes.isAbsolute("/\(accent)x") && !"/\(accent)x".hasPrefix("/"))
        #expect(Array(Directories.absolute("/\(accent)x/y").utf8) == Array("/\(accent)x/y".utf8))
        #expect(PathBytes.parts("a//\(accent)b/").map { Array($0.utf8) } == [Array("a".utf8), [], Array("\(accent)b".utf8), []])
    }

    @Test func keysTellSpellingsApart() {
        #expect(nfc == nfd, "Swift's equality")
        #expect(Set([PathBytes.Key(nfc), PathBytes.Key(nfd), PathBytes.Key(nfc)]).count == 2)
        #expect(!PathBytes.same(nfc, nfd) && PathBytes.same(nfc, "caf\u{E9}"))
    }
}
