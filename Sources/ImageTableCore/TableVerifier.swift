import CTableSupport

/// Checks a table end to end: the header, every record, and every entry's pixel checksum.
///
/// This is what `imagetable verify` runs and what the kill test asserts after every kill. It
/// never changes the file.
public enum TableVerifier {
    /// One thing wrong with a table.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// The slot concerned, or `nil` for the header.
        public let slot: Int?
        /// The entry's key, when it could be read.
        public let key: String?
        /// `pixelChecksumMismatch`, `damagedRecord` or `interruptedWrite`; for the header or the
        /// file, why it could not be opened (`corrupt`, `notATable`, `notFound`…).
        public let code: ImageTableError.Code
        /// What is wrong, for people.
        public let reason: String

        /// `slot N (key): reason [code]`.
        public var description: String {
            let place = slot.map { "slot \($0)" } ?? "header"
            return (key.map { "\(place) (\($0))" } ?? place) + ": \(reason) [\(code.rawValue)]"
        }
    }

    /// The outcome of verifying one table.
    public struct Report: Sendable {
        /// The header, when it was valid.
        public let header: TableHeader?
        /// The number of entries whose record and pixels check out.
        public let validEntries: Int
        /// Everything wrong; empty when the table is sound.
        public let problems: [Problem]
        /// Whether the table is sound.
        public var isValid: Bool { problems.isEmpty }
    }

    /// Verifies the table at `path`.
    ///
    /// - Parameter path: the table file.
    /// - Returns: the report; a file that cannot be opened yields one header problem.
    public static func verify(path: String) -> Report {
        let file: TableFile
        do {
            file = try TableFile(path: path, writable: false)
        } catch {
            return Report(header: nil, validEntries: 0, problems: [Problem(slot: nil, key: nil, code: error.code, reason: error.message)])
        }
        let scan = RecordScan(file, checkKeys: true)
        var problems = scan.problems.map {
            Problem(slot: $0.slot, key: file.record($0.slot).key,
                    code: $0.kind == .discardedInterruptedWrite ? .interruptedWrite : .damagedRecord, reason: $0.reason)
        }
        var valid = 0
        for entry in scan.committed {
            let record = file.record(entry.slot)
            let generation = record.generation
            let stored = record.pixelChecksum
            let pixels = UnsafeRawBufferPointer(start: file.slot(entry.slot), count: file.layout.imageBytes)
            let matches = CRC32.checksum(pixels) == stored
            itc_fence_acquire()
            if record.generation != generation {
                continue  // A live writer replaced it meanwhile; neither good nor bad.
            } else if matches {
                valid += 1
            } else {
                problems.append(Problem(slot: entry.slot, key: record.key, code: .pixelChecksumMismatch, reason: "pixel checksum mismatch"))
            }
        }
        return Report(header: file.header, validEntries: valid, problems: problems.sorted { ($0.slot ?? -1) < ($1.slot ?? -1) })
    }
}
