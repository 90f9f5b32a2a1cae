import Foundation
import TestSupport
import Testing
import WorkerProtocol

/// The wire format: every message survives a round trip, and what is not a message is refused.
@Suite struct WireCodecTests {
    static let requests: [WorkerRequest] = [
        .hello(Hello(renderingVersion: 3, executable: "/usr/bin/imagetable")),
        .hello(Hello(renderingVersion: 3, executable: "/usr/bin/imagetable", tables: [
            CatalogueTable(path: "/t/a b/ü.imagetable", format: "imagetable/1\nname=a\n"),
            CatalogueTable(path: "/t/b.imagetable", format: "imagetable/1\nname=b\n"),
        ])),
        .render(RenderJob(source: "/src/a b/ü.jpg", members: [
            RenderMember(table: 0, destination: .slot(slot: 7, generation: 9)),
            RenderMember(table: 1, destination: .scratch(offset: 4096)),
        ], limits: SourceLimits(maxPixels: 100, maxSourceBytes: 200, failOn: "warning"), planned: [2, 3])),
        .extract(ExtractJob(table: "t.imagetable", key: "k\n\"", output: "-", contentOnly: true)),
        .extract(ExtractJob(table: "t.imagetable", all: "out", verbose: true)),
        .preview(PreviewJob(table: "t.imagetable", output: "s.png", columns: 3, tileSize: 64, limit: 9, order: "recency", captions: false)),
    ]

    static let replies: [WorkerReply] = [
        .hello(Hello(protocolVersion: 7, renderingVersion: 3, executable: "/w")),
        .rendered(Rendered(contentRects: [WireRect(x: 1, y: 2, width: 3, height: 4)], decodes: 1,
                           fingerprint: "7FAC457A-682F-50D7-9889-2BD6D967B340",
                           stat: SourceStat(device: 2049, inode: 77, size: 11, modifiedNs: 1_700_000_000_123_456_789,
                                            changedNs: 1_700_000_001_000_000_000, readNs: 1_700_000_002_000_000_000),
                           warnings: ["Corrupt JPEG data: 3 extraneous bytes before marker 0xdb"], pixelChecksums: [0xDEAD_BEEF])),
        .finished(Finished(status: 1)),
        .failed(WorkerFailure(.truncated, "the image data ends early", cause: "Premature end of JPEG file")),
    ]

    @Test func everyRequestRoundTrips() throws {
        for (i, request) in Self.requests.enumerated() {
            let line = WireCodec.line(request, id: i + 10)
            #expect(line.last == 0x0A && !line.dropLast().contains(0x0A), "one line each")
            let decoded = try #require(WireCodec.request(line.dropLast()))
            #expect(decoded.id == i + 10 && decoded.request == request)
        }
    }

    @Test func everyReplyRoundTrips() throws {
        for (i, reply) in Self.replies.enumerated() {
            let decoded = try #require(WireCodec.reply(WireCodec.line(reply, id: i).dropLast()))
            #expect(decoded.id == i && decoded.reply == reply)
        }
    }

    @Test func theEnvelopeIsTheDocumentedOne() throws {
        let line = WireCodec.line(.failed(WorkerFailure(.tableChanged, "rebuilt")), id: 5)
        let object = try #require(try JSONSerialization.jsonObject(with: line) as? [String: Any])
        #expect(object["id"] as? Int == 5 && object["kind"] as? String == "failed")
        #expect((object["body"] as? [String: Any])?["code"] as? String == "table-changed")
    }

    @Test(arguments: ["", "{}", "not json", #"{"id": 1, "kind": "render", "body": {}}"#, #"{"id": 1, "kind": "dance", "body": {}}"#,
                      #"{"id": "1", "kind": "hello", "body": {"protocolVersion": 1, "renderingVersion": 1, "executable": "x"}}"#])
    func whatIsNotAMessageIsRefused(_ text: String) {
        #expect(WireCodec.request(Data(text.utf8)) == nil)
        #expect(WireCodec.reply(Data(text.utf8)) == nil)
    }

    /// A worker is a process that decodes untrusted images, so the command reads its lines as
    /// untrusted too: every message, mutated at random (bytes changed, dropped, repeated, JSON's
    /// own punctuation and escapes inserted), is read or refused without a crash, and what is
    /// read writes back to a line that reads the same (the writer is the reader's inverse).
    @Test func mutatedMessagesAreReadOrRefusedAndReadOnesRoundTrip() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let inserts: [[UInt8]] = ["\"", "\\", "\\u", "\\ud83d", "{", "}", "[", "]", ",", ":", "-", "0", "9", "1e5", "null", " "].map { Array($0.utf8) }
            + [[0xFF], [0xC3], [0x00], [0x0A], [0xE2, 0x82]]
        let lines = Self.requests.map { WireCodec.line($0, id: 3) } + Self.replies.map { WireCodec.line($0, id: 3) }
        var read = 0
        for line in lines {
            let original = [UInt8](line.dropLast())
            for _ in 0..<1500 {
                var bytes = original
                for _ in 0...next(3) {
                    let at = next(bytes.count + 1)
                    switch next(4) {
                    case 0 where at < bytes.count: bytes[at] = UInt8(next(256))
                    case 1 where at < bytes.count: bytes.removeSubrange(at..<min(bytes.count, at + 1 + next(8)))
                    case 2 where at < bytes.count: bytes.insert(contentsOf: bytes[at..<min(bytes.count, at + 1 + next(16))], at: at)
                    default: bytes.insert(contentsOf: inserts[next(inserts.count)], at: at)
                    }
                }
                let data = Data(bytes)
                if let r = WireCodec.request(data) {
                    read += 1
                    let again = WireCodec.request(WireCodec.line(r.request, id: r.id).dropLast())
                    #expect(again?.id == r.id && again?.request == r.request, "\(String(decoding: bytes, as: UTF8.self))")
                }
                if let r = WireCodec.reply(data) {
                    read += 1
                    let again = WireCodec.reply(WireCodec.line(r.reply, id: r.id).dropLast())
                    #expect(again?.id == r.id && again?.reply == r.reply, "\(String(decoding: bytes, as: UTF8.self))")
                }
            }
        }
        // Some mutations leave a valid message (a changed digit, a repeated character of a
        // string): the round trip above was exercised, not only refusals.
        #expect(read > 100, "\(read) mutated lines were messages")
    }

    @Test func failureCodesAreTheDocumentedStrings() {
        #expect(WorkerFailure.Code.allCases.map(\.rawValue) == [
            "unreadable", "empty", "source-too-large", "unsupported-format", "too-many-pixels", "truncated", "decode-failed",
            "render-failed", "changed-while-reading", "library-unavailable", "table-changed", "worker-mismatch", "protocol-error",
        ])
    }

    @Test func theWorkerRefusesToRunWithoutACommand() throws {
        let result = try run(Products.worker, [])
        #expect(result.status == 64 && result.stderr.contains("started by imagetable"))
    }
}
