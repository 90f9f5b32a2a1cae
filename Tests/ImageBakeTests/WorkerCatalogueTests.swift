import Foundation
import ImageTableCore
import TestSupport
import Testing
import WorkerProtocol

/// A bake's render jobs name their tables by position in the handshake's list (protocol
/// version 3): a real worker takes each member's format and table file from that list, and
/// refuses a position the list does not have.
@Suite struct WorkerCatalogueTests {
    static let limits = SourceLimits(maxPixels: 1 << 20, maxSourceBytes: 1 << 20, failOn: "error")

    static func worker(tables: [CatalogueTable]) throws -> WorkerConnection {
        try WorkerConnection(executable: Products.worker,
                             hello: Hello(renderingVersion: TableFormat.pipelineRenderingVersion, executable: "WorkerCatalogueTests",
                                          tables: tables),
                             outputToStandardError: true)
    }

    static func failure(_ job: RenderJob, tables: [CatalogueTable]) throws -> WorkerFailure? {
        let worker = try worker(tables: tables)
        defer { worker.finish() }
        guard case .success(.failed(let failure)) = worker.send(.render(job), timeout: 30) else { return nil }
        return failure
    }

    @Test func aMemberNamingATableTheHandshakeDidNotListIsAProtocolError() throws {
        let format = TableFormat(name: "g", width: 4, height: 4, style: .grayscale8, capacity: 2)
        let job = RenderJob(source: "/nonexistent.jpg", members: [RenderMember(table: 1, destination: .slot(slot: 0, generation: 1))],
                            limits: Self.limits)
        let failure = try #require(try Self.failure(job, tables: [CatalogueTable(path: "/t/g.imagetable", format: format.canonicalParameters)]))
        #expect(failure.code == .protocolError && failure.message == "the job names table 1; the handshake listed 1", "\(failure)")

        // A planned table too: its format shapes every member's pixels.
        let planned = RenderJob(source: "/nonexistent.jpg", members: [], limits: Self.limits, planned: [0])
        let none = try #require(try Self.failure(planned, tables: []))
        #expect(none.code == .protocolError && none.message == "the job names table 0; the handshake listed 0", "\(none)")
    }

    /// The member's slot is looked for in the file the handshake gave for its position: a table
    /// that is not there is a changed table (not the source's fault), before the source is read.
    @Test func aSlotMemberOpensTheTableTheHandshakeListed() throws {
        let directory = try TemporaryDirectory()
        let format = TableFormat(name: "g", width: 4, height: 4, style: .grayscale8, capacity: 2)
        let listed = [CatalogueTable(path: directory.path + "/elsewhere.imagetable", format: format.canonicalParameters),
                      CatalogueTable(path: directory.path + "/g.imagetable", format: format.canonicalParameters)]
        let writer = try ImageTableWriter(path: listed[1].path, format: format)
        defer { writer.close() }
        let job = RenderJob(source: "/nonexistent.jpg", members: [RenderMember(table: 0, destination: .slot(slot: 0, generation: 1))],
                            limits: Self.limits)
        let missing = try #require(try Self.failure(job, tables: listed))
        #expect(missing.code == .tableChanged && missing.message.contains("elsewhere.imagetable"), "\(missing)")

        // The existing table, at position 1, opens; its slot 0 is not reserved with generation 1.
        var there = job
        there.members[0].table = 1
        let unreserved = try #require(try Self.failure(there, tables: listed))
        #expect(unreserved.code == .tableChanged && !unreserved.message.contains("elsewhere"), "\(unreserved)")
    }
}
