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
        var skipped: [BakeWarning] = []
        /// The entries left out for damage in this attempt.
        fileprivate var failed: [CandidateID] = []
        /// Keys more than one input held.
        fileprivate var keysWithAlternatives: Set<String> = []

        /// Whether building again without `failed` would admit another entry: a copy of one of
        /// their keys from another input, or a source left out for capacity.
        fileprivate func alternatives(for failed: Set<CandidateID>) -> Bool {
            leftOut > 0 || failed.contains { keysWithAlternatives.contains($0.key) }
        }
    }

    let name: String
    let readers: [ImageTableReader]
    /// Asked every 256 entries copied (fewer for slots over 256 KiB): an error to stop with
    /// (Ctrl-C), or `nil` to go on.
    var stopRequested: () -> ImageTableError? = { nil }

    /// Builds the merged table at `path`.
    ///
    /// An entry whose pixels fail their checksum as they are copied is left out with a warning.
    /// When another input held its key, or entries were left out for capacity, the table is
    /// built again without it: the sound copy of the key, or the next source in rank, takes its
    /// place, as if the damaged entry had not been there (rare, so paid for by a second copy).
    ///
    /// - Parameter path: the new file (in the merge's staging directory).
    /// - Returns: what was merged.
    /// - Throws: ``ImageTableError`` when the table cannot be written.
    func build(at path: String) throws(ImageTableError) -> Outcome {
        var excluded: Set<CandidateID> = []
        var warnings: [BakeWarning] = []
        while true {
            // The listing's notices are the same at every attempt: said at the first.
            var outcome = try attempt(at: path, excluding: excluded, listingNotices: excluded.isEmpty)
            let failed = Set(outcome.failed)
            warnings += outcome.skipped
            guard !failed.isEmpty, outcome.alternatives(for: failed) else {
                outcome.skipped = warnings
                return outcome
            }
            excluded.formUnion(failed)
            unlink(path)
        }
    }

    /// An entry of one input: which input, and its key.
    struct CandidateID: Hashable {
        let input: Int
        let key: String
    }

    private func attempt(at path: String, excluding excluded: Set<CandidateID>, listingNotices: Bool) throws(ImageTableError) -> Outcome {
        var outcome = Outcome()
        var all: [Candidate] = []
        for (input, reader) in readers.enumerated() {
            for info in reader.entries() where excluded.isEmpty || !excluded.contains(CandidateID(input: input, key: info.key)) {
                // A record whose key is not its entity's (its checksum made over a forged or
                // misplaced key): the listing does not hash keys, `verify` does, and the merge
                // copied such a record into a table that `verify` then failed.
                guard EntityKey.uuid(for: info.key) == info.entityUUID else {
                    if listingNotices {
                        outcome.skipped.append(BakeWarning(path: reader.path, message: "slot \(info.slot) ('\(PrintableText.escaped(info.key))'): "
                                                           + "key does not match entity UUID; left out of the merge", code: TableNotice.Kind.damagedRecord.rawValue))
                    }
                    continue
                }
                all.append(Candidate(info: info, input: input))
            }
            // A write a killed bake left unfinished is refused, as `export` refuses it: the next
            // bake of that directory completes it, where a merge without it lacked the entry
            // (and a replaced entry's old pixels are gone) and still reported success.
            if let notice = reader.notices.first(where: { $0.kind == .discardedInterruptedWrite }) {
                let count = reader.notices.count { $0.kind == .discardedInterruptedWrite }
                let slot = notice.slot.map { ", slot \($0) first" } ?? ""
                throw ImageTableError(.interruptedWrite, "\(count) interrupted write\(count == 1 ? "" : "s") of a bake that was stopped"
                                      + "\(slot); bake that directory again, which completes \(count == 1 ? "it" : "them"), before merging",
                                      path: reader.path)
            }
            // Entries the listing passed over (a damaged record, one the index does not lead
            // to) are said, as pixels that fail their checksum are: the merge lacks them.
            for notice in reader.notices where listingNotices && notice.skipsEntry {
                // By its key too, where the record names one: the merged set lacks that entry.
                outcome.skipped.append(BakeWarning(path: reader.path, message: "\(notice.located(naming: true)); left out of the merge",
                                                   code: notice.kind.rawValue))
            }
        }
        // Grouped by key, each key's winner first, so that one pass finds every key's entry:
        // the candidates are sorted by position, as structs of a hundred bytes moved slowly,
        // and a dictionary of every key cost its hashing (a sixth of a merge of small slots).
        // Keys are grouped as Swift compares them, canonically equal spellings together, as a
        // bake takes them for one key (`ambiguous-name`) and the dictionary did; of those the
        // spelling a bake keeps wins (NFC, else the first by bytes), then, among its entries,
        // the newest source: the newest spelling won, which a bake of the same sources then
        // replaced, and a lookup of the NFC spelling missed.
        var byKey = Array(all.indices)
        byKey.sort { a, b in
            let (x, y) = (all[a].info.key, all[b].info.key)
            if x < y { return true }
            if y < x { return false }
            if !PathBytes.same(x, y) { return Self.spellingPrecedes(x, y) }
            return Self.precedes(all[a].info, all[b].info)
        }
        var unique: [Int] = []
        unique.reserveCapacity(byKey.count)
        for i in byKey {
            if let last = unique.last, all[last].info.key == all[i].info.key {
                outcome.duplicates += 1
                outcome.keysWithAlternatives.insert(all[i].info.key)
            } else {
                unique.append(i)
            }
        }
        let capacity = readers[0].layout.capacity
        // Rank: the most recently modified sources first, ties by key.
        var ranked = unique
        ranked.sort { a, b in
            let (x, y) = (all[a].info.sourceModifiedNs, all[b].info.sourceModifiedNs)
            return x != y ? x > y : Self.compareKeys(all[a].info.key, all[b].info.key) < 0
        }
        outcome.leftOut = max(0, ranked.count - capacity)
        // Recency by rank, the least recently modified source selected getting 1; 0 marks a
        // candidate that is not selected.
        var recency = [UInt64](repeating: 0, count: all.count)
        let selectedCount = min(capacity, ranked.count)
        for (rank, i) in ranked.prefix(capacity).enumerated() { recency[i] = UInt64(selectedCount - rank) }
        let header = try TableBuilder.header(like: Self.widestPage(readers).header, createdAt: readers.map(\.header.createdAt).max() ?? 0)
        let builder = try TableBuilder(path: path, header: header)
        // Written in UTF-8 byte order, which Swift's order of strings is not beyond ASCII.
        let written = unique.filter { recency[$0] > 0 }.sorted { Self.compareKeys(all[$0].info.key, all[$1].info.key) < 0 }
        // Asked every 256 entries, or every 64 MiB of large slots: 216 slots of 4 MiB went by
        // between a Ctrl-C and the check that heeds it.
        let checkEvery = max(1, min(256, (64 << 20) / max(1, builder.layout.imageBytes)))
        for (n, i) in written.enumerated() {
            if n % checkEvery == checkEvery - 1, let stop = stopRequested() { throw stop }
            let candidate = all[i]
            // Only when said: quoting a key looks at each of its characters (an eighth of a
            // merge of small slots, when it was made for every entry).
            func leftOut(_ why: String, _ code: ImageTableError.Code) -> BakeWarning {
                BakeWarning(path: readers[candidate.input].path, message: "slot \(candidate.info.slot) (\(PrintableText.quoted(candidate.info.key))): "
                                + "\(why); left out of the merge", code: code.rawValue)
            }
            switch try builder.append(copying: candidate.info, from: readers[candidate.input], recency: recency[i]) {
            case .copied:
                outcome.entries += 1
                outcome.bytes += builder.layout.imageBytes
            case .pixelChecksumMismatch:
                outcome.skipped.append(leftOut("pixel checksum mismatch", .pixelChecksumMismatch))
                outcome.failed.append(CandidateID(input: candidate.input, key: candidate.info.key))
            case .changed:
                outcome.skipped.append(leftOut("changed while it was copied", .entryUnavailable))
                outcome.failed.append(CandidateID(input: candidate.input, key: candidate.info.key))
            }
        }
        try builder.finish(clock: UInt64(selectedCount))
        return outcome
    }

    /// Of two canonically equal spellings of a key, whether `x` is the one a bake keeps
    /// (``SourceScanner``'s `dropAmbiguousNames`): the one in NFC, else the first by bytes.
    static func spellingPrecedes(_ x: String, _ y: String) -> Bool {
        let (xNFC, yNFC) = (KeyNormalization.isNFC(x), KeyNormalization.isNFC(y))
        if xNFC != yNFC { return xNFC }
        return x.utf8.lexicographicallyPrecedes(y.utf8)
    }

    /// Whether `a` wins over `b` for one key: the newer source, then the later write, then the
    /// smaller source UUID.
    static func precedes(_ a: EntryInfo, _ b: EntryInfo) -> Bool {
        if a.sourceModifiedNs != b.sourceModifiedNs { return a.sourceModifiedNs > b.sourceModifiedNs }
        if a.writtenAt != b.writtenAt { return a.writtenAt > b.writtenAt }
        if a.sourceUUID != b.sourceUUID { return a.sourceUUID.uuidString < b.sourceUUID.uuidString }
        return a.pixelChecksum < b.pixelChecksum
    }

    /// `a` against `b` in UTF-8 byte order: negative, zero or positive, as `memcmp`. Native
    /// strings' bytes are compared with `memcmp`, several times faster than comparing their
    /// UTF-8 views a byte at a time.
    static func compareKeys(_ a: String, _ b: String) -> Int {
        let order = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y -> Int in
                let n = memcmp(x.baseAddress!, y.baseAddress!, min(x.count, y.count))
                return n != 0 ? Int(n) : x.count - y.count
            }
        }
        if let order = order.flatMap({ $0 }) { return order }
        if a.utf8.elementsEqual(b.utf8) { return 0 }
        return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
    }

    /// The input with the largest page size (tables made on machines with larger pages lay
    /// their slots out wider); the merged table takes it, whatever the inputs' order.
    static func widestPage(_ readers: [ImageTableReader]) -> ImageTableReader {
        readers.max { $0.layout.pageSize < $1.layout.pageSize }!
    }
}
