import Foundation
import TestSupport
import Testing
@testable import ImageTableCore

struct DelegatedSlotsTests {
    @Test func anotherHandleFillsAReservedSlotAndTheWriterPublishesIt() throws {
        let dir = try TemporaryDirectory()
        let d = descriptor(width: 9, height: 4, capacity: 3)
        let table = try openTable(dir.file("t.imagetable"), d)
        let reservation = try table.reserve(key: "k", sourceUUID: UUID())
        let worker = try DelegatedSlots(path: table.path, parametersHash: d.parametersHash)
        let pixels = [UInt8](repeating: 0x5A, count: worker.layout.imageBytes)
        try pixels.withUnsafeBytes { try worker.write($0, slot: reservation.slot, generation: reservation.generation) }
        try table.publish([reservation])
        #expect(try table.withImage(forKey: "k") { $0.bytes.allSatisfy { $0 == 0x5A } } == true)
        #expect(TableVerifier.verify(path: table.path).isValid)
        // Once published, the slot is no longer open to the worker, and its pixels stay.
        #expect(throws: ImageTableError.self) {
            try [UInt8](repeating: 1, count: worker.layout.imageBytes).withUnsafeBytes {
                try worker.write($0, slot: reservation.slot, generation: reservation.generation)
            }
        }
        #expect(try table.withImage(forKey: "k") { $0.bytes.allSatisfy { $0 == 0x5A } } == true)
    }

    @Test func stalePartiesAreRefused() throws {
        let dir = try TemporaryDirectory()
        let d = descriptor(capacity: 3)
        let table = try openTable(dir.file("t.imagetable"), d)
        let reservation = try table.reserve(key: "k", sourceUUID: UUID())
        #expect(throws: ImageTableError.self) { try DelegatedSlots(path: table.path, parametersHash: descriptor(capacity: 4).parametersHash) }
        let worker = try DelegatedSlots(path: table.path, parametersHash: d.parametersHash)
        #expect(throws: ImageTableError.self) { try worker.checkReservation(slot: reservation.slot, generation: reservation.generation + 2) }
        #expect(throws: ImageTableError.self) { try worker.checkReservation(slot: 7, generation: reservation.generation) }
        let short = [UInt8](repeating: 0, count: worker.layout.imageBytes - 1)
        #expect(throws: ImageTableError.self) { try short.withUnsafeBytes { try worker.write($0, slot: reservation.slot, generation: reservation.generation) } }
        table.abandon(reservation)
        #expect(throws: ImageTableError.self) { try worker.checkReservation(slot: reservation.slot, generation: reservation.generation) }
    }
}
