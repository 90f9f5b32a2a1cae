import Foundation
import ImageTableCore

/// One table of a merge: the entries of every input's table of that name, chosen by the plan's
/// rules and copied into a new table, in an order that depends on the entries alone.
///
/// 1. A key several inputs hold (inputs that are not shards of one split may overlap) keeps
///    the entry made from the most recently modified source, then the most recently written,
///    then the smallest source UUID: a choice that depends on the entries, never on the order
///    the inputs are given in.
/// 2. When more entries remain than the table's capacity, the capacity goes to the most
///    recently modified sources, ties by key (`docs/BAKE.md`, "The plan", rule 1): what a bake
///    of all the sources on one machine would select.
/// 3. The entries are written in key order (UTF-8 byte order) into slots 0, 1, 2…; their
///    recency stamps follow the selection order, the least recently modified source getting 1,
///    so that a later bake evicts the entries of the oldest sources first.
struct TableMerge {
    /// An entry of an input table.
    struct Candidate {
        let info: EntryInfo
        let input: Int
    }

    /// What merging one table did.
    struct Outcome {
        var entries = 0
        var leftOut = 0
        var duplicates = 0
        var bytes = 0
        var skipped: [String] = []
    }

    let name: String
    let readers: [ImageTableReader]

    /// Builds the merged table at `path`.
    ///
    /// - Parameter path: the new file (in the merge's staging directory).
    /// - Returns: what was merged.
    /// - Throws: ``ImageTableError`` when the table cannot be written.
    func build(at path: String) throws(ImageTableError) -> Outcome {
        var outcome = Outcome()
        var best: [String: Candidate] = [:]
        for (input, reader) in readers.enumerated() {
            for info in reader.entries() {
                let candidate = Candidate(info: info, input: input)
                if let held = best[info.key] {
                    outcome.duplicates += 1
                    if Self.precedes(candidate.info, held.info) { best[info.key] = candidate }
                } else {
                    best[info.key] = candidate
                }
            }
            // Entries the listing passed over (a damaged record, one the index does not lead
            // to) are said, as pixels that fail their checksum are: the merge lacks them.
            for notice in reader.notices where notice.kind == .damagedRecord || notice.kind == .damagedIndex {
                outcome.skipped.append("\(reader.path): warning: \(notice.message); left out of the merge [\(notice.kind.rawValue)]")
            }
        }
        let capacity = readers[0].layout.capacity
        let ranked = best.values.sorted { a, b in
            a.info.sourceModifiedNs != b.info.sourceModifiedNs ? a.info.sourceModifiedNs > b.info.sourceModifiedNs : Self.keyOrder(a.info.key, b.info.key)
        }
        let selected = ranked.prefix(capacity)
        outcome.leftOut = ranked.count - selected.count
        let recency = Dictionary(uniqueKeysWithValues: selected.enumerated().map { ($1.info.key, UInt64(selected.count - $0)) })
        let header = try TableBuilder.header(like: Self.widestPage(readers).header, createdAt: readers.map(\.header.createdAt).max() ?? 0)
        let builder = try TableBuilder(path: path, header: header)
        for candidate in selected.sorted(by: { Self.keyOrder($0.info.key, $1.info.key) }) {
            switch try builder.append(copying: candidate.info, from: readers[candidate.input], recency: recency[candidate.info.key]!) {
            case .copied:
                outcome.entries += 1
                outcome.bytes += builder.layout.imageBytes
            case .pixelChecksumMismatch:
                outcome.skipped.append("\(readers[candidate.input].path): warning: slot \(candidate.info.slot) "
                                       + "(\(PrintableText.quoted(candidate.info.key))): pixel checksum mismatch; left out of the merge [pixel-checksum-mismatch]")
            case .changed:
                outcome.skipped.append("\(readers[candidate.input].path): warning: slot \(candidate.info.slot) "
                                       + "(\(PrintableText.quoted(candidate.info.key))): changed while it was copied; left out of the merge [entry-unavailable]")
            }
        }
        try builder.finish(clock: UInt64(selected.count))
        return outcome
    }

    /// Whether `a` wins over `b` for one key: the newer source, then the later write, then the
    /// smaller source UUID.
    static func precedes(_ a: EntryInfo, _ b: EntryInfo) -> Bool {
        if a.sourceModifiedNs != b.sourceModifiedNs { return a.sourceModifiedNs > b.sourceModifiedNs }
        if a.writtenAt != b.writtenAt { return a.writtenAt > b.writtenAt }
        if a.sourceUUID != b.sourceUUID { return a.sourceUUID.uuidString < b.sourceUUID.uuidString }
        return a.pixelChecksum < b.pixelChecksum
    }

    /// Keys in UTF-8 byte order, as the plan orders them.
    static func keyOrder(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    /// The input with the largest page size (tables made on machines with larger pages lay
    /// their slots out wider); the merged table takes it, whatever the inputs' order.
    static func widestPage(_ readers: [ImageTableReader]) -> ImageTableReader {
        readers.max { $0.layout.pageSize < $1.layout.pageSize }!
    }
}
