import ImageTableCore

extension ImageTableReader {
    /// The entries the reader serves: `entries()` without the records the open skipped as
    /// damaged, which `entries()` still lists (it checks a record's state, not its checksum).
    var soundEntries: [EntryInfo] {
        let damaged = Set(notices.compactMap(\.slot))
        return entries().filter { !damaged.contains($0.slot) }
    }
}
