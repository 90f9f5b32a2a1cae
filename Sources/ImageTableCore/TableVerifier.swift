/// Checks a table end to end: the header, every record, and every entry's pixel checksum.
///
/// This is what `imagetable verify` runs and what the kill test asserts after every kill. It
/// never changes the file, and it is safe while a writer works: every record is read under its
/// seqlock, as readers read it, so an entry that a writer is replacing is reported as being
/// written (``Report/inProgress``), never as damage. What it calls damage is damage.
public enum TableVerifier {
    /// One thing wrong with a table.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// The slot concerned, or `nil` for the header.
        public let slot: Int?
        /// The entry's key, when it could be read.
        public let key: String?
        /// `pixelChecksumMismatch`, `damagedRecord`, `interruptedWrite` or `damagedIndex`;
        /// `staleEntryCount` for the header's count (slot `nil`); for a file that could not be
        /// opened (``Report/header`` `nil`), why (`corrupt`, `notATable`, `notFound`…).
        public let code: ImageTableError.Code
        /// What is wrong, for people.
        public let reason: String

        /// Creates a problem.
        ///
        /// - Parameters:
        ///   - slot: the slot concerned, or `nil` for the header.
        ///   - key: the entry's key, when it could be read.
        ///   - code: what kind of problem.
        ///   - reason: what is wrong, for people.
        public init(slot: Int?, key: String?, code: ImageTableError.Code, reason: String) {
            self.slot = slot
            self.key = key
            self.code = code
            self.reason = reason
        }

        /// `slot N (key): reason [code]`.
        public var description: String {
            let place = slot.map { "slot \($0)" } ?? "header"
            return (key.map { "\(place) (\($0))" } ?? place) + ": \(reason) [\(code.rawValue)]"
        }
    }

    /// What a table's problems amount to, from best to worst.
    public enum Verdict: String, Sendable, Comparable {
        /// Nothing is wrong.
        case sound
        /// Only what a stopped writer leaves and the next writer to open the table (a bake)
        /// mends: interrupted writes, which it clears and the bake writes again, and a stale
        /// entry count, which it counts again.
        case interrupted
        /// Something is damaged: a pixel checksum, a record, or the header.
        case damaged

        private var rank: Int {
            switch self {
            case .sound: 0
            case .interrupted: 1
            case .damaged: 2
            }
        }

        /// Whether `a` is better than `b`: sound, then interrupted, then damaged.
        ///
        /// - Parameters:
        ///   - a: a verdict.
        ///   - b: another.
        public static func < (a: Verdict, b: Verdict) -> Bool { a.rank < b.rank }
    }

    /// The outcome of verifying one table.
    public struct Report: Sendable {
        /// The header, when it was valid.
        public let header: TableHeader?
        /// The number of entries whose record and pixels check out.
        public let validEntries: Int
        /// Entries that a live writer (one holding the table's lock) was writing while they were
        /// checked, again and again: neither good nor bad.
        public let inProgress: Int
        /// Everything wrong, by slot; empty when the table is sound.
        public let problems: [Problem]

        /// Creates a report.
        ///
        /// - Parameters:
        ///   - header: the header, when it was valid.
        ///   - validEntries: entries whose record and pixels check out.
        ///   - inProgress: entries a live writer was writing.
        ///   - problems: everything wrong.
        public init(header: TableHeader?, validEntries: Int, inProgress: Int = 0, problems: [Problem]) {
            self.header = header
            self.validEntries = validEntries
            self.inProgress = inProgress
            self.problems = problems
        }

        /// Whether the table is sound.
        public var isValid: Bool { problems.isEmpty }

        /// Sound, interrupted (only interrupted writes and a stale count, which the next bake
        /// mends) or damaged.
        public var verdict: Verdict {
            if problems.isEmpty { return .sound }
            return problems.allSatisfy { $0.code == .interruptedWrite || $0.code == .staleEntryCount } ? .interrupted : .damaged
        }
    }

    /// Verifies the table at `path`, read-only and without its lock.
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
        return verify(file, writerMayBeActive: true)
    }

    /// Verifies an open table.
    ///
    /// - Parameters:
    ///   - file: the mapped table.
    ///   - writerMayBeActive: `false` when the caller holds the writer lock, so nothing can change
    ///     and an odd generation can only be an interrupted write.
    static func verify(_ file: TableFile, writerMayBeActive: Bool) -> Report {
        // Readings are repeated, with pauses, to give a live writer time to finish a write. Under
        // the lock nothing changes, and with no writer holding it there is none to wait for: one
        // reading settles every slot (a writer that comes meanwhile is caught by the lock check
        // below). Without this, every odd generation of a damaged table cost milliseconds.
        let attempts = writerMayBeActive && WriterLock.isHeld(tablePath: file.path) != false ? 3 : 1
        var checks = VerifierPass(file: file)
        checks.run(slots: 0..<file.scanLimit, attempts: attempts)
        if !checks.unsettled.isEmpty {
            if writerMayBeActive && WriterLock.isHeld(tablePath: file.path) == true {
                checks.settleAsInProgress()
            } else {
                // No writer now: what was in flux settles, and an odd generation that stays is an
                // interrupted write, unless a writer has appeared meanwhile.
                checks.run(slots: checks.unsettled.map(\.slot), attempts: attempts)
                let writerNow = writerMayBeActive && WriterLock.isHeld(tablePath: file.path) == true
                checks.settleRemaining(writerActive: writerNow)
            }
        }
        checks.findDuplicates()
        if file.layout.formatVersion >= 2 {
            checks.checkIndex(writerActive: { writerMayBeActive && WriterLock.isHeld(tablePath: file.path) == true })
            checks.checkEntryCount(writerActive: { writerMayBeActive && WriterLock.isHeld(tablePath: file.path) == true })
        }
        return Report(header: file.header, validEntries: checks.valid.count, inProgress: checks.inProgress,
                      problems: checks.problems.sorted { ($0.slot ?? -1) < ($1.slot ?? -1) })
    }
}
