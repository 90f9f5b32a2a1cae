import Foundation
import ImageManifest

/// What the tables of one family held when the bake began: one index of the keys for the whole
/// family, and per table, each key's entry or nothing.
///
/// A dictionary per table held every key once per table, in a hash table that is a power of two
/// at most three quarters full: at 100,000 entries, 262,144 buckets of 40 bytes, 10 MB a table.
/// Here the family's keys are indexed once (20 bytes a bucket), and each table keeps a row of 32
/// bytes per key, or, when it holds under a quarter of what the family's largest table does (a
/// small format beside a large one), a dictionary of its own rows.
final class FamilyHeld: Sendable {
    /// One table's entry: the source its pixels were made from, and its recency.
    typealias Entry = (source: UUID, recency: UInt64)

    /// A table's entries by row: dense, a place per key of the family, or sparse.
    private enum Rows: Sendable {
        case dense([Entry?])
        case sparse([Int32: Entry])

        subscript(row: Int32) -> Entry? {
            switch self {
            case .dense(let rows): Int(row) < rows.count ? rows[Int(row)] : nil
            case .sparse(let rows): rows[row]
            }
        }
    }

    private let rowOfKey: [String: Int32]
    private let rows: [Rows]
    private let counts: [Int]
    /// Per row, whether the scan found the key's source: what the planner asks of every held
    /// key, which a set of the scan's keys answered at 40 bytes a source.
    private let scannedRows: [Bool]
    /// Per table, the keys of entries that are another key's but for their bytes (Unicode
    /// normalization): see ``HeldEntries/aliases``.
    private let aliases: [[String]]
    /// Per table, the keys of entries whose recorded source modification time is not their
    /// scanned source's: see ``HeldEntries/retimed``. Empty unless sources were touched.
    private let retimed: [[String]]

    /// Reads what `tables` hold.
    ///
    /// - Parameters:
    ///   - tables: the family's tables.
    ///   - sources: the family's scanned files, sorted by key: a key found among them is stored
    ///     as their string rather than as a copy read from a table (one string per key for the
    ///     bake), found by a binary search rather than through a set of every key.
    init(_ tables: [BakeTable], sharing sources: [SourceFile]) {
        let largest = tables.map(\.entryCount).max() ?? 0
        var rowOfKey: [String: Int32] = [:]
        rowOfKey.reserveCapacity(largest)
        var rows: [Rows] = []
        var counts: [Int] = []
        var scannedRows: [Bool] = []
        // Per row, the scanned source's position, whose time each table's entry is compared
        // with: 4 bytes a row while reading, rather than a second search of the sources per
        // entry and table.
        var sourceOfRow: [Int32] = []
        var aliases: [[String]] = [], retimed: [[String]] = []
        for table in tables {
            var dense: [Entry?] = [], sparse: [Int32: Entry] = [:]
            var tableAliases: [String] = [], tableRetimed: [String] = []
            let isDense = table.entryCount * 4 >= largest
            if isDense { dense.reserveCapacity(max(rowOfKey.count, table.entryCount)) } else { sparse.reserveCapacity(table.entryCount) }
            var count = 0
            table.forEachHeld { key, source, recency, modifiedNs in
                let row: Int32
                // Swift's == holds for keys that differ in their bytes, a table's identity of
                // an entry (its entity UUID): such an entry is an alias, not this row's.
                if let known = rowOfKey.index(forKey: key) {
                    guard rowOfKey[known].key.utf8.elementsEqual(key.utf8) else { return tableAliases.append(key) }
                    row = rowOfKey[known].value
                } else {
                    let i = sources.partitionPoint { $0.key < key }
                    let scanned = i < sources.count && sources[i].key == key
                    if scanned && !sources[i].key.utf8.elementsEqual(key.utf8) { return tableAliases.append(key) }
                    row = Int32(rowOfKey.count)
                    rowOfKey[scanned ? sources[i].key : key] = row
                    scannedRows.append(scanned)
                    sourceOfRow.append(scanned ? Int32(i) : -1)
                }
                // The first entry of a key wins (a damaged table read for a dry run may list one twice).
                if isDense {
                    if dense.count <= Int(row) { dense.append(contentsOf: repeatElement(nil, count: Int(row) + 1 - dense.count)) }
                    guard dense[Int(row)] == nil else { return }
                    dense[Int(row)] = (source, recency)
                } else {
                    guard sparse[row] == nil else { return }
                    sparse[row] = (source, recency)
                }
                count += 1
                let scannedAt = sourceOfRow[Int(row)]
                if scannedAt >= 0 && sources[Int(scannedAt)].stat.modifiedNs != modifiedNs { tableRetimed.append(sources[Int(scannedAt)].key) }
            }
            rows.append(isDense ? .dense(dense) : .sparse(sparse))
            counts.append(count)
            aliases.append(tableAliases.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
            // The tables of a family usually hold the same keys, touched alike: one list, shared.
            retimed.append(retimed.last == tableRetimed ? retimed.last! : tableRetimed)
        }
        (self.rowOfKey, self.rows, self.counts, self.scannedRows, self.aliases) = (rowOfKey, rows, counts, scannedRows, aliases)
        self.retimed = retimed
    }

    /// Whether some table of the family holds `key`.
    func holds(_ key: String) -> Bool { rowOfKey[key] != nil }

    /// Whether some table holds `key` and every table that does holds it made from `source`: what
    /// the planner calls unchanged.
    func isUnchanged(_ key: String, source: UUID) -> Bool {
        guard let row = rowOfKey[key] else { return false }
        var held = false
        for table in rows {
            guard let entry = table[row] else { continue }
            guard entry.source == source else { return false }
            held = true
        }
        return held
    }

    /// What the family's `table`th table holds, as the planner reads it.
    func table(_ table: Int) -> HeldEntries { HeldEntries(family: self, table: table) }

    fileprivate func entry(_ key: String, table: Int) -> Entry? { rowOfKey[key].flatMap { rows[table][$0] } }

    fileprivate func keys(table: Int) -> some Sequence<(key: String, scanned: Bool)> {
        rowOfKey.lazy.filter { [rows] in rows[table][$0.value] != nil }.map { [scannedRows] in ($0.key, scannedRows[Int($0.value)]) }
    }

    fileprivate func count(table: Int) -> Int { counts[table] }

    fileprivate func aliases(table: Int) -> [String] { aliases[table] }

    fileprivate func retimed(table: Int) -> [String] { retimed[table] }
}

/// One table's entries when the bake began: key → source UUID and recency.
struct HeldEntries: Sendable {
    fileprivate let family: FamilyHeld
    fileprivate let table: Int

    /// The entry of `key`, if the table holds it.
    subscript(key: String) -> FamilyHeld.Entry? { family.entry(key, table: table) }

    /// How many entries the table holds, less its ``aliases``.
    var count: Int { family.count(table: table) }

    /// Keys of entries the table holds that are equal to another key of the family as Swift
    /// compares strings (canonical equivalence) but not byte for byte: `café` with one code
    /// point and with a combining accent. The table tells them apart (an entry's identity is its
    /// key's bytes); the plan, keyed by strings, cannot, so they are in no other answer here,
    /// and the planner removes them. A scan takes only one of such names (`ambiguous-name`).
    var aliases: [String] { family.aliases(table: table) }

    /// Keys of entries whose recorded source modification time differs from the time the scan
    /// found on their source, in slot order (the order the table lists them, so that records
    /// updated together lie together). A source touched without changing keeps its entry, and
    /// the bake records the new time there (``BakePlanner/retimes(of:in:change:)``), since
    /// `imagetable merge` ranks entries by it. Empty when no source was touched.
    var retimed: [String] { family.retimed(table: table) }

    /// The keys the table holds, each with whether the scan (given to ``FamilyHeld``) found its
    /// source, in no particular order.
    var keys: some Sequence<(key: String, scanned: Bool)> { family.keys(table: table) }
}
