import Foundation
import TestSupport
import Testing
@testable import ImageManifest

/// Every manifest the tests use, with one character deleted or inserted at many random
/// positions: each diagnostic lies inside the file, and a quote or bracket left open by the
/// mutation is never blamed on text after it.
@Suite struct MutationTests {
    /// A manifest to mutate.
    struct Base: Sendable, CustomTestStringConvertible {
        let name: String
        let text: [UInt8]
        var testDescription: String { name }
    }

    /// The corpus, the examples, and the manifests of the placement and CLI tests.
    static let manifests: [Base] = {
        let files = CorpusCase.all.map(\.path) + Repository.exampleManifests
        return files.map { Base(name: URL(fileURLWithPath: $0).lastPathComponent, text: Array((try? Data(contentsOf: URL(fileURLWithPath: $0))) ?? Data())) }
            + PlacementCase.all.map { Base(name: $0.fileName, text: Array($0.yaml.utf8)) }
            + [Base(name: "cli-valid.yaml", text: Array(CLITests.validYAML.utf8))]
    }()

    /// What is inserted: the characters that open and close YAML's constructs, others, and bytes
    /// that are not UTF-8 alone (0x85 after 0xC2 is a NEL, a line break for libyaml).
    static let insertions = Array("\"'[]{}:-#,&*!|>% \t\n\rx".utf8) + [0xC2, 0x85, 0xE9]
    static let openers = Array("\"'[{".utf8)

    @Test func manifestsAreMany() {
        #expect(Self.manifests.count >= 70)
        #expect(Self.manifests.allSatisfy { !$0.text.isEmpty })
    }

    /// One mutation: the text, and where it opened a quote or bracket or left one open.
    private struct Mutation {
        let text: [UInt8]
        let offset: Int
        let opens: Bool
    }

    @Test(arguments: manifests)
    func mutationsArePlacedInsideTheFileAndNotAfterAnOpenQuoteOrBracket(_ base: Base) {
        var random = SplitMix(seed: 16 &+ UInt64(base.text.count))
        func pick<T>(_ items: [T]) -> T? { items.isEmpty ? nil : items[Int(random.next() % UInt64(items.count))] }
        let original = base.text
        let closers = Array(Self.closers(in: original)).sorted()
        let tokenStarts = (0...original.count).filter { FlowScanProbe.startsToken(at: $0, in: original) }
        var mutations: [Mutation] = []
        for _ in 0..<12 {
            // Anywhere: one character deleted, one inserted.
            let offset = Int(random.next() % UInt64(original.count + 1))
            if offset < original.count {
                mutations.append(Mutation(text: original.removing(at: offset), offset: offset, opens: closers.contains(offset)))
            }
            let byte = pick(Self.insertions)!
            let opens = Self.openers.contains(byte) && FlowScanProbe.startsToken(at: offset, in: original)
            mutations.append(Mutation(text: original.inserting(byte, at: offset), offset: offset, opens: opens))
        }
        for _ in 0..<6 {
            // A closing quote or bracket deleted; an opening one inserted where a token starts.
            if let offset = pick(closers) { mutations.append(Mutation(text: original.removing(at: offset), offset: offset, opens: true)) }
            if let offset = pick(tokenStarts) {
                mutations.append(Mutation(text: original.inserting(pick(Self.openers)!, at: offset), offset: offset, opens: true))
            }
        }
        let validator = ManifestValidator(options: ValidationOptions(allowOutsidePaths: true))
        // A file with YAML problems of its own keeps them wherever the mutation is.
        let isClean = !validator.validate(contents: original, file: "/nonexistent/" + base.name).diagnostics
            .contains { $0.code == .yamlSyntax || $0.code == .laxYAML }
        for mutation in mutations {
            let report = validator.validate(contents: mutation.text, file: "/nonexistent/" + base.name)
            let lines = TestLines(mutation.text)
            let at = lines.location(ofOffset: mutation.offset)
            for d in report.diagnostics {
                #expect(lines.contains(d.location), "mutated at \(at): \(d) lies outside the file's \(lines.count) lines")
            }
            guard mutation.opens, isClean else { continue }
            for d in report.diagnostics where (d.code == .yamlSyntax || d.code == .laxYAML) && d.location > at {
                Issue.record("a quote or bracket opened or left open at \(at), but: \(d)")
            }
        }
        #expect(mutations.count >= 24)
    }

    /// The offsets of closing quotes and brackets, outside comments: deleting one leaves its
    /// construct open. A quote closes a value on its own line, as every tested manifest writes them.
    static func closers(in text: [UInt8]) -> Set<Int> {
        var result: Set<Int> = []
        var quote: UInt8?
        var i = 0
        while i < text.count {
            let byte = text[i]
            if byte == 0x0A {
                quote = nil
            } else if let open = quote {
                if open == UInt8(ascii: "\""), byte == UInt8(ascii: "\\") {
                    i += 1
                } else if byte == open {
                    if open == UInt8(ascii: "'"), i + 1 < text.count, text[i + 1] == open {
                        i += 1
                    } else {
                        result.insert(i)
                        quote = nil
                    }
                }
            } else if byte == UInt8(ascii: "#"), FlowScanProbe.startsToken(at: i, in: text) {
                while i + 1 < text.count && text[i + 1] != 0x0A { i += 1 }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'"), FlowScanProbe.startsToken(at: i, in: text) {
                quote = byte
            } else if byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") {
                result.insert(i)
            }
            i += 1
        }
        return result
    }
}

/// Where a quote or `#` starts a token, by the test's own reading: after a line's start, a
/// blank, or a flow indicator.
enum FlowScanProbe {
    static func startsToken(at i: Int, in text: [UInt8]) -> Bool {
        i == 0 || [0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: "["), UInt8(ascii: "{"), UInt8(ascii: ",")].contains(text[i - 1])
    }
}

/// Lines as libyaml counts them (LF, CR LF, a lone CR, NEL, LS, PS), independently of the code
/// under test.
struct TestLines {
    private var starts: [Int] = [0]
    private var lengths: [Int] = []
    private let text: [UInt8]

    init(_ text: [UInt8]) {
        self.text = text
        var i = 0, length = 0
        while i < text.count {
            let rest = text[i...]
            let width = rest.starts(with: [0x0D, 0x0A]) ? 2 : rest.starts(with: [0xC2, 0x85]) ? 2
                : rest.starts(with: [0xE2, 0x80, 0xA8]) || rest.starts(with: [0xE2, 0x80, 0xA9]) ? 3
                : text[i] == 0x0A || text[i] == 0x0D ? 1 : 0
            if width > 0 {
                i += width
                lengths.append(length)
                starts.append(i)
                length = 0
                continue
            }
            if text[i] & 0xC0 != 0x80 { length += 1 }
            i += 1
        }
        if starts.last! < text.count || lengths.isEmpty { lengths.append(length) } else { starts.removeLast() }
    }

    var count: Int { lengths.count }

    /// Whether `location` is on a line of the file, at most one column past its end.
    func contains(_ location: ImageManifest.SourceLocation) -> Bool {
        location.line >= 1 && location.line <= count && location.column >= 1 && location.column <= lengths[location.line - 1] + 1
    }

    func location(ofOffset offset: Int) -> ImageManifest.SourceLocation {
        let line = starts.lastIndex { $0 <= offset } ?? 0
        let column = 1 + text[starts[line]..<offset].count { $0 & 0xC0 != 0x80 }
        return ImageManifest.SourceLocation(line: line + 1, column: column)
    }
}

/// A small, seeded generator, so that a failure names the same mutation on every run.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}


extension Array where Element == UInt8 {
    func removing(at offset: Int) -> [UInt8] {
        var copy = self
        copy.remove(at: offset)
        return copy
    }

    func inserting(_ byte: UInt8, at offset: Int) -> [UInt8] {
        var copy = self
        copy.insert(byte, at: offset)
        return copy
    }
}
