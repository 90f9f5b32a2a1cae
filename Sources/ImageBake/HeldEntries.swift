import Foundation

/// What the tables of one family held when the bake began: one index of the keys for the whole
/// family, and per table, each key's entry or nothing.
///
/// A dictionary per table held every key once per table, in a hash table that is a power of two
/// at most three quarters full: at 100,000 entries, 262,144 buckets of 40 bytes, 10 MB a table.
/// Here the family's keys are indexed once (20 bytes a bucket), and each table keeps a row of 32
/// bytes per key.
final class FamilyHeld: Sendable {
    /// One table's entry: the source its pixels were made from, and its recency.
    typealias Entry = (source: UUID, recency: UInt64)

    private let rowOfKey: [String: Int32]
    private let rows: [[Entry?]]
    private let counts: [Int]

    /// Reads what `tables` hold.
    ///
    /// - Parameters:
    ///   - tables: the family's tables.
    ///   - keys: strings to share: a key found here is stored as this string rather than as a
    ///     copy read from a table (the family's scanned keys: one string per key for the bake).
    init(_ tables: [BakeTable], sharing keys: Set<String>) {
        var rowOfKey: [String: Int32] = [:]
        var rows: [[Entry?]] = []
        var counts: [Int] = []
        for (t, table) in tables.enumerated() {
            // Sized for the first table's keys: the others' are mostly the same ones.
            if t == 0 { rowOfKey.reserveCapacity(table.entryCount) }
            rows.append(Array(repeating: nil, count: rowOfKey.count))
            if t == 0 { rows[0].reserveCapacity(table.entryCount) }
            counts.append(0)
            table.forEachHeld { key, source, recency in
                let row: Int
                if let known = rowOfKey[key] {
                    row = Int(known)
                } else {
                    row = rowOfKey.count
                    rowOfKey[keys.firstIndex(of: key).map { keys[$0] } ?? key] = Int32(row)
                    for i in rows.indices { rows[i].append(nil) }
                }
                // The first entry of a key wins (a damaged table read for a dry run may list one twice).
                if rows[t][row] == nil {
                    rows[t][row] = (source, recency)
                    counts[t] += 1
                }
            }
        }
        (self.rowOfKey, self.rows, self.counts) = (rowOfKey, rows, counts)
    }

    /// Whether some table of the family holds `key`.
    func holds(_ key: String) -> Bool { rowOfKey[key] != nil }

    /// What the family's `table`th table holds, as the planner reads it.
    func table(_ table: Int) -> HeldEntries { HeldEntries(family: self, table: table) }

    fileprivate func entry(_ key: String, table: Int) -> Entry? { rowOfKey[key].flatMap { rows[table][Int($0)] } }

    fileprivate func keys(table: Int) -> some Sequence<String> {
        rowOfKey.lazy.filter { [rows] in rows[table][Int($0.value)] != nil }.map(\.key)
    }

    fileprivate func count(table: Int) -> Int { counts[table] }
}

/// One table's entries when the bake began: key → source UUID and recency.
struct HeldEntries: Sendable {
    fileprivate let family: FamilyHeld
    fileprivate let table: Int

    /// The entry of `key`, if the table holds it.
    subscript(key: String) -> FamilyHeld.Entry? { family.entry(key, table: table) }

    /// How many entries the table holds.
    var count: Int { family.count(table: table) }

    /// The keys the table holds, in no particular order.
    var keys: some Sequence<String> { family.keys(table: table) }
}
