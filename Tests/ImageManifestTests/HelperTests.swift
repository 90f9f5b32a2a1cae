import TestSupport
import Testing
@testable import ImageManifest
import ImageTableCore

@Suite struct HelperTests {
    @Test(arguments: [
        ("500MB", 500_000_000), ("2GiB", 2_147_483_648), ("1.5 GB", 1_500_000_000), ("1048576", 1_048_576),
        ("10kb", 10_000), ("3KiB", 3072), ("1T", 1_000_000_000_000), ("0", 0), ("7b", 7), ("2 mib", 2_097_152),
    ])
    func byteSizesParse(_ text: String, _ bytes: Int) {
        #expect(ByteSize.parse(text) == bytes)
    }

    @Test(arguments: ["", "MB", "12XB", "-5MB", "1.2.3GB", "1e3", "99999999EiB", "five"])
    func malformedByteSizesDoNot(_ text: String) {
        #expect(ByteSize.parse(text) == nil)
    }

    @Test func byteSizesDescribe() {
        #expect(ByteSize.describe(512) == "512 B")
        #expect(ByteSize.describe(28672) == "28.0 KiB")
        #expect(ByteSize.describe(39_428_096) == "37.6 MiB")
        #expect(ByteSize.describe(64 << 30) == "64.0 GiB")
    }

    @Test func colours() {
        #expect(RGBAColor(hex: "#fff") == RGBAColor(red: 255, green: 255, blue: 255))
        #expect(RGBAColor(hex: "#0008") == RGBAColor(red: 0, green: 0, blue: 0, alpha: 0x88))
        #expect(RGBAColor(hex: "#12AbEf") == RGBAColor(red: 0x12, green: 0xAB, blue: 0xEF))
        #expect(RGBAColor(hex: "#12abef80")?.alpha == 0x80)
        #expect(RGBAColor(hex: "#12abef80")?.description == "#12abef80")
        for bad in ["fff", "#ff", "#fffff", "#ggg", "#１２３", "red", "#fffffffff"] {
            #expect(RGBAColor(hex: bad) == nil, "\(bad)")
        }
    }

    @Test func suggestions() {
        let keys = FormatReader.keys
        #expect(Suggestion.nearest(to: "maximumcount", in: keys) == "maximumCount")
        #expect(Suggestion.nearest(to: "stlye", in: keys) == "style")
        #expect(Suggestion.nearest(to: "scale", in: keys) == "scales")
        #expect(Suggestion.nearest(to: "colour", in: keys) == "background", "another tool's word")
        #expect(Suggestion.nearest(to: "weight", in: keys) == nil)
        #expect(Suggestion.nearest(to: String(repeating: "s", count: 100), in: keys) == nil)
    }
}
