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

    /// Strings without escapes are made straight from the bytes: ASCII as is, anything else
    /// validated, so bytes that are not UTF-8 are refused on this path too.
    @Test func unescapedStringsAreValidated() {
        #expect(parse("\"plain/path.jpg\"") == .string("plain/path.jpg"))
        #expect(parse("\"é😀\"") == .string("é😀"))
        for bad: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0x61, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22]] {
            #expect(bad.withUnsafeBytes { WireJSON.parse($0) } == nil, "\(bad)")
        }
    }

    /// Objects keep a dictionary's meaning: the last of two equal keys wins when read and when
    /// written, and equality ignores the order of the fields.
    @Test func objectsBehaveAsDictionaries() {
        let twice = parse(#"{"a":1,"b":2,"a":3}"#)
        #expect(twice?["a"] == .int(3))
        #expect(twice.map(written) == #"{"a":3,"b":2}"#)
        #expect(parse(#"{"b":2,"a":3}"#) == twice)
        #expect(parse(#"{"a":3}"#) != twice)
    }

    /// The codec's encoders write straight to bytes, each naming its fields itself: every object
    /// of every message comes out with its keys sorted, as the documentation promises.
    @Test func everyMessageIsWrittenWithSortedKeys() throws {
        func check(_ value: WireJSON, _ label: String) {
            switch value {
            case .object(let fields):
                let keys = fields.pairs.map(\.key)
                #expect(keys == keys.sorted() && Set(keys).count == keys.count, "\(label): \(keys)")
                fields.pairs.forEach { check($0.value, label) }
            case .array(let items): items.forEach { check($0, label) }
            default: break
            }
        }
        let lines = WireCodecTests.requests.map { WireCodec.line($0, id: 1) } + WireCodecTests.replies.map { WireCodec.line($0, id: 1) }
        for line in lines {
            let value = try #require(line.dropLast().withUnsafeBytes { WireJSON.parse($0) })
            check(value, String(decoding: line.prefix(60), as: UTF8.self))
        }
    }
}
