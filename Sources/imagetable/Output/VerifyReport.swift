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

    /// One table's verdict.
    struct TableResult: Encodable {
        let path: String
        let ok: Bool
        /// Entries whose record and pixels check out.
        let validEntries: Int
        /// Bad records and entries, by slot.
        let problems: [Problem]
        /// Why the table could not be checked at all (its header, or the file); `nil` otherwise.
        let error: ImageTableError?
    }

    /// One bad record or entry.
    struct Problem: Encodable {
        let slot: Int
        /// The key, when the record still holds a readable one.
        let key: String?
        let code: String
        let reason: String
    }

    /// The verdict from the core verifier's report, with its stable codes:
    /// `pixel-checksum-mismatch` when the pixels changed under a sound record, `damaged-record`
    /// (checksum, state, key, rectangle, duplicate, past the end of the file) and
    /// `interrupted-write`.
    static func result(path: String, _ report: TableVerifier.Report) -> TableResult {
        var problems: [Problem] = []
        var error: ImageTableError?
        for p in report.problems {
            guard let slot = p.slot else {
                error = ImageTableError(p.code, p.reason, path: path)
                continue
            }
            problems.append(Problem(slot: slot, key: p.key, code: p.code.rawValue, reason: p.reason))
        }
        return TableResult(path: path, ok: problems.isEmpty && error == nil, validEntries: report.validEntries,
                           problems: problems, error: error)
    }

    static func json(_ results: [TableResult]) -> String {
        JSONOutput.encode(Document(ok: results.allSatisfy(\.ok), tables: results))
    }

    /// `path: error: slot 3 ('a.jpg'): pixel checksum mismatch [pixel-checksum-mismatch]` per
    /// problem (for standard error), and the status line (for standard output).
    static func text(_ r: TableResult) -> (problems: [String], status: String) {
        if let error = r.error { return ([error.description], "\(r.path): not verified") }
        let lines = r.problems.map { p in
            let place = "slot \(p.slot)" + (p.key.map { " (\(PrintableText.quoted($0)))" } ?? "")
            return "\(r.path): error: \(place): \(PrintableText.escaped(p.reason)) [\(p.code)]"
        }
        let entries = "\(r.validEntries) entr\(r.validEntries == 1 ? "y" : "ies")"
        let status = r.ok ? "\(r.path): ok, \(entries) verified"
            : "\(r.path): \(r.problems.count) problem\(r.problems.count == 1 ? "" : "s"), \(entries) verified"
        return (lines, status)
    }
}
