import Foundation
import TestSupport
import Testing
import WorkerProtocol

/// The wire format: every message survives a round trip, and what is not a message is refused.
@Suite struct WireCodecTests {
    static let requests: [WorkerRequest] = [
        .hello(Hello(renderingVersion: 3, executable: "/usr/bin/imagetable")),
        .render(RenderJob(source: "/src/a b/ü.jpg", members: [
            RenderMember(format: "imagetable/1\nname=a\n", destination: .slot(table: "/t/a.imagetable", slot: 7, generation: 9)),
            RenderMember(format: "imagetable/1\nname=b\n", destination: .scratch(offset: 4096)),
        ], limits: SourceLimits(maxPixels: 100, maxSourceBytes: 200, failOn: "warning"))),
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
