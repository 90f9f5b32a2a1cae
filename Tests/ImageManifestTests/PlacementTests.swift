import Foundation
import TestSupport
import Testing
@testable import ImageManifest

/// Issue 16: each diagnostic is where a person must edit, in the library and in every output.
@Suite struct PlacementTests {
    @Test(arguments: PlacementCase.all)
    func diagnosticsAreWhereTheEditIs(_ placement: PlacementCase) throws {
        let report = try check(placement.yaml)
        #expect(summary(report) == placement.expected, "\(report.diagnostics.map(\.description).joined(separator: "\n"))")
        let message = try #require(report.diagnostics.first).message
        #expect(message.contains(placement.says), "\(message)")
    }
}
