import Foundation
import Testing
import ImageTableCore

/// A bake reads each worker's fingerprint with `SourceFingerprint.uuid(parsing:)`: it must read
/// the text `uuidString` writes, in either case, as `UUID(uuidString:)` does, and refuse
/// anything else (a fingerprint it cannot read fails the source as a protocol error rather than
/// recording another UUID). It is stricter than Foundation's `sscanf`, which takes a leading
/// space and a short last group.
struct FingerprintParsingTests {
    @Test func readsWhatFoundationReads() {
        for _ in 0..<200 {
            let uuid = UUID()
            #expect(SourceFingerprint.uuid(parsing: uuid.uuidString) == uuid)
            #expect(SourceFingerprint.uuid(parsing: uuid.uuidString.lowercased()) == uuid)
        }
        #expect(SourceFingerprint.uuid(parsing: "870839DD-0F0A-59B0-B79C-E16132A3DA73") == SourceFingerprint.namespace)
        #expect(SourceFingerprint.uuid(parsing: "00000000-0000-0000-0000-000000000000") == UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        #expect(SourceFingerprint.uuid(parsing: "FFFFFFFF-ffff-FFFF-ffff-FFFFFFFFFFFF")?.uuidString == "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")
    }

    @Test(arguments: [
        "", "870839DD-0F0A-59B0-B79C-E16132A3DA7", "870839DD-0F0A-59B0-B79C-E16132A3DA733",
        "870839DD0F0A-59B0-B79C-E16132A3DA73-", "870839DD-0F0A-59B0-B79C-E16132A3DA7G", "870839DD-0F0A-59B0-B79C_E16132A3DA73",
        " 870839DD-0F0A-59B0-B79C-E16132A3DA7", "870839DD-0F0A-59B0-B79C-E16132A3DA7\u{0}", "870839DD-0F0A-59B0-B79C-E16132A3DAé",
    ])
    func refusesWhatIsNoUUID(_ text: String) {
        #expect(SourceFingerprint.uuid(parsing: text) == nil, "\(text)")
    }
}
