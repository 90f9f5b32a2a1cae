import Foundation
import Testing
@testable import WorkerProtocol

/// The protocol's own JSON reader and writer: what Foundation's reads the same, extremes of the
/// integers the messages carry, and refusals of what is not one JSON value of the kinds used.
@Suite struct WireJSONTests {
    private func parse(_ text: String) -> WireJSON? {
        Array(text.utf8).withUnsafeBytes { WireJSON.parse($0) }
    }

    private func written(_ value: WireJSON) -> String {
        var out: [UInt8] = []
        value.write(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test func stringsSurviveEveryEscape() throws {
        let text = "a\"b\\c/\n\r\t\u{0}\u{1F}\u{7F}é😀 end"
        let line = written(.string(text))
        #expect(!line.contains("\n") && !line.contains("\u{0}"), "control characters are escaped: one line")
        #expect(parse(line) == .string(text))
        // Foundation reads what we write, and we read what it writes.
        #expect(try JSONSerialization.jsonObject(with: Data(line.utf8), options: .fragmentsAllowed) as? String == text)
        let theirs = String(decoding: try JSONSerialization.data(withJSONObject: [text]), as: UTF8.self)
        #expect(parse(theirs) == .array([.string(text)]))
        #expect(parse(#""\ud83d\ude00 \u00e9""#) == .string("😀 é"))
    }

    @Test func integersKeepEveryBitOfTheirRange() {
        #expect(parse("18446744073709551615")?.uint64 == UInt64.max)
        #expect(parse("-9223372036854775808")?.int64 == Int64.min)
        #expect(parse("9223372036854775808")?.int64 == nil, "over Int64: only a UInt64")
        #expect(parse("1700000000123456789")?.int64 == 1_700_000_000_123_456_789)
        #expect(written(.int(Int64.min)) == "-9223372036854775808")
        #expect(written(.int(-0)) == "0")
    }

    @Test(arguments: ["", " ", "18446744073709551616", "1.5", "1e3", "01", "-", "\"\\x\"", "\"\u{1}\"", "\"open", "[1,]", "{\"a\":1,}",
                      "{\"a\" 1}", "[1] [2]", "tru", "nul", "\"\\ud83d\"", String(repeating: "[", count: 40) + String(repeating: "]", count: 40)])
    func whatIsNotAValueIsRefused(_ text: String) {
        #expect(parse(text) == nil)
    }

    @Test func objectsAreWrittenWithSortedKeys() {
        #expect(written(.object(["kind": .string("x"), "body": .object([:]), "id": .int(3)])) == #"{"body":{},"id":3,"kind":"x"}"#)
        #expect(parse(#" { "b" : [ true , false , null ] , "a" : -1 } "#) ==
                .object(["a": .int(-1), "b": .array([.bool(true), .bool(false), .null])]))
    }
}
