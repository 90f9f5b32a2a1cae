import ImageTableCore

/// What `imagetable verify` prints: compiler-style lines for people, or one JSON document
/// (docs/CLI.md, "verify").
enum VerifyReport {
    /// The JSON document: one element of `tables` per table argument, in order.
    struct Document: Encodable {
        let version = 1
        let ok: Bool
        let tables: [TableResult]
    }

    /// What a table was found to be, best first. The command exits with the worst table's
    /// ``TableResult/exitStatus``.
    enum State: String, Encodable {
        /// Every header, record and checksum holds.
        case sound
        /// Only interrupted writes, left by a killed writer; the next bake completes them.
        case interrupted
        /// `--repair` cleared damaged or interrupted entries, and the next bake renders them
        /// again; or it only rebuilt the hash index, which leaves the table complete
        /// (``TableResult/exitStatus`` 0).
        case repaired
        /// Something is damaged (and, with `--repair`, could not be cleared).
        case damaged
        /// The table could not be checked at all: missing, unreadable, not a table, a bad header.
        case unverified

        /// `0` sound; `2` the next bake completes the table; `1` damage or no verdict.
        var exitStatus: Int32 {
            switch self {
            case .sound: 0
            case .interrupted, .repaired: 2
            case .damaged, .unverified: 1
            }
        }
    }

    /// One table's verdict.
    struct TableResult: Encodable {
        let path: String
        /// The table is sound as the command leaves it: nothing found, or a repair that only
        /// rebuilt the index.
        let ok: Bool
        let state: State
        /// Entries whose record and pixels check out.
        let validEntries: Int
        /// Entries a live writer was writing while they were checked.
        let inProgress: Int
        /// Bad records and entries, by slot.
        let problems: [Problem]
        /// With `--repair`: how many records were cleared; absent without it.
        let cleared: Int?
        /// Why the table could not be checked (or repaired); `nil` otherwise.
        let error: ImageTableError?

        /// The command's exit status for this table: its state's, but 0 for a repair that
        /// cleared no entry (the index rebuilt), after which the next bake has nothing to complete.
        var exitStatus: Int32 { ok ? 0 : state.exitStatus }

        private enum CodingKeys: String, CodingKey { case path, ok, state, validEntries, inProgress, problems, cleared, error }
    }

    /// One bad record or entry, or the header's stale count.
    struct Problem: Encodable {
        /// The slot; absent for the header (`stale-entry-count`).
        let slot: Int?
        /// The key, when the record still holds a readable one.
        let key: String?
        let code: String
        let reason: String
    }

    /// The verdict from the core verifier's report, with its stable codes:
    /// `pixel-checksum-mismatch` when the pixels changed under a sound record, `damaged-record`
    /// (checksum, state, key, rectangle, duplicate, past the end of the file) and
    /// `interrupted-write`.
    ///
    /// - Parameters:
    ///   - path: the table as given.
    ///   - report: what the verifier found (under the lock, for a repair).
    ///   - cleared: with `--repair`, whether the problems found were cleared.
    ///   - failure: why a repair could not be made.
    static func result(path: String, _ report: TableVerifier.Report, cleared: Bool? = nil,
                       failure: ImageTableError? = nil) -> TableResult {
        var problems: [Problem] = []
        var error = failure
        for p in report.problems {
            // Without a header, the one problem is why the file could not be opened.
            guard report.header != nil else {
                error = ImageTableError(p.code, p.reason, path: path)
                continue
            }
            problems.append(Problem(slot: p.slot, key: p.key, code: p.code.rawValue, reason: p.reason))
        }
        var state: State = if report.header == nil {
            .unverified
        } else if cleared == true && !problems.isEmpty {
            .repaired
        } else {
            switch report.verdict {
            case .sound: .sound
            case .interrupted: .interrupted
            case .damaged: .damaged
            }
        }
        // A repair that could not be made leaves whatever it was asked to clear.
        if failure != nil { state = max(state, .damaged) }
        // An index the repair rebuilt, or a count it made again, clears no entry: only the
        // other problems' records go.
        let clearedRecords = problems.filter { !Self.mendedInPlace.contains($0.code) }.count
        let indexOnly = state == .repaired && clearedRecords == 0
        return TableResult(path: path, ok: state == .sound || indexOnly, state: state, validEntries: report.validEntries,
                           inProgress: report.inProgress, problems: problems, cleared: cleared.map { $0 ? clearedRecords : 0 },
                           error: error)
    }

    /// A table that could not be opened; with `--repair` (`repairing`), none of its records was cleared.
    static func unverified(path: String, _ error: ImageTableError, repairing: Bool = false) -> TableResult {
        TableResult(path: path, ok: false, state: .unverified, validEntries: 0, inProgress: 0, problems: [], cleared: repairing ? 0 : nil,
                    error: error)
    }

    static func json(_ results: [TableResult]) -> String {
        JSONOutput.encode(Document(ok: results.allSatisfy(\.ok), tables: results))
    }

    /// The problems a repair mends without clearing a record: the index, rebuilt, and the
    /// header's count, counted again.
    private static let mendedInPlace: Set<String> = [ImageTableError.Code.damagedIndex.rawValue,
                                                      ImageTableError.Code.staleEntryCount.rawValue]

    /// What a repair did, in words: the entries it cleared, whether it rebuilt the index, and
    /// whether it counted the entries again.
    private static func repairs(_ r: TableResult) -> String {
        let count = r.cleared ?? 0
        var done = count == 0 ? [] : ["cleared \(count) entr\(count == 1 ? "y" : "ies") for the next bake to render again"]
        if r.problems.contains(where: { $0.code == ImageTableError.Code.damagedIndex.rawValue }) { done.append("rebuilt the index") }
        if r.problems.contains(where: { $0.code == ImageTableError.Code.staleEntryCount.rawValue }) { done.append("counted the entries again") }
        guard let last = done.popLast() else { return "cleared 0 entries" }
        return done.isEmpty ? last : done.joined(separator: ", ") + " and " + last
    }

    /// `path: error: slot 3 ('a.jpg'): pixel checksum mismatch [pixel-checksum-mismatch]` per
    /// problem (a `warning` for an interrupted write), for standard error, and the status line,
    /// for standard output. Paths, keys and reasons are escaped for the terminal. More than
    /// ``groupedFrom`` interrupted writes are one line, as a bake's notes group them: a bake
    /// killed while it published a batch leaves one per slot of it, dozens of lines that said
    /// one thing (the JSON still lists each).
    static func text(_ r: TableResult) -> (problems: [String], status: String) {
        let path = PrintableText.escaped(r.path)
        if let error = r.error, r.state == .unverified { return ([error.description], "\(path): not verified") }
        let interruptedCode = ImageTableError.Code.interruptedWrite.rawValue
        let interrupted = r.problems.filter { $0.code == interruptedCode && $0.slot != nil }
        let grouped = interrupted.count > groupedFrom
        var lines = r.problems.filter { !grouped || $0.code != interruptedCode || $0.slot == nil }.map { p in
            let place = (p.slot.map { "slot \($0)" } ?? "header") + (p.key.map { " (\(PrintableText.quoted($0)))" } ?? "")
            let mend: String? = switch p.code {
            case ImageTableError.Code.interruptedWrite.rawValue: "; the next bake completes it"
            case ImageTableError.Code.staleEntryCount.rawValue: "; the next bake counts them again"
            default: nil
            }
            // After a repair, the status line says what was done instead.
            let advice = r.state == .repaired ? "" : mend ?? ""
            return "\(path): \(mend == nil ? "error" : "warning"): \(place): \(PrintableText.escaped(p.reason))\(advice) [\(p.code)]"
        }
        if grouped {
            let slots = interrupted.compactMap(\.slot)
            let advice = r.state == .repaired ? "" : "; the next bake completes them"
            lines.insert("\(path): warning: \(slots.count) slots: interrupted write (slots \(BakeReport.firstSlots(slots)))\(advice) "
                         + "[\(interruptedCode)]", at: 0)
        }
        if let error = r.error { lines.append(error.description) }
        let count = r.problems.count
        let verified = "\(r.validEntries) entr\(r.validEntries == 1 ? "y" : "ies") verified"
            + (r.inProgress > 0 ? ", \(r.inProgress) being written" : "")
        let status = switch r.state {
        case .sound: "\(path): ok, \(verified)"
        case .interrupted: "\(path): interrupted, \(Self.forTheNextBake(r)), \(verified)"
        case .repaired: "\(path): repaired, " + repairs(r) + ", \(verified)"
        case .damaged, .unverified: "\(path): \(count) problem\(count == 1 ? "" : "s"), \(verified)"
        }
        return (lines, status)
    }
}

extension VerifyReport {
    /// Interrupted writes past this many are said in one line.
    static let groupedFrom = 5

    /// What an interrupted table leaves the next bake: `2 writes to complete`, `a stale entry
    /// count to correct`, or both.
    fileprivate static func forTheNextBake(_ r: TableResult) -> String {
        let writes = r.problems.count { $0.code == ImageTableError.Code.interruptedWrite.rawValue }
        var parts = writes == 0 ? [] : ["\(writes) write\(writes == 1 ? "" : "s") for the next bake to complete"]
        if r.problems.contains(where: { $0.code == ImageTableError.Code.staleEntryCount.rawValue }) {
            parts.append(writes == 0 ? "a stale entry count for the next bake to correct" : "a stale entry count")
        }
        return parts.joined(separator: " and ")
    }
}

extension VerifyReport.State: Comparable {
    private var rank: Int {
        switch self {
        case .sound: 0
        case .interrupted: 1
        case .repaired: 2
        case .damaged: 3
        case .unverified: 4
        }
    }

    static func < (a: Self, b: Self) -> Bool { a.rank < b.rank }
}
