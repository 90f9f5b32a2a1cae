import ImageTableCore

/// Sizes every table with the format's layout rules and checks the per-table and disk limits.
struct TablePlanner {
    let context: ValidationContext

    /// Whether every table fits the per-table limit; reports each one that does not, and the
    /// total when it is over the disk budget. A manifest over the budget alone is still sized:
    /// its plan is what shows which tables take the space.
    ///
    /// - Parameters:
    ///   - formats: the valid formats.
    ///   - familiesPair: where the disk-budget error is reported.
    func check(_ formats: [ReadFormat], at familiesPair: YAMLPair) -> Bool {
        var ok = true
        var total = 0
        for format in formats {
            let path = "families".appendingKey(format.family).appendingKey("formats").appendingKey(format.name)
            for table in format.tables {
                guard let layout = Manifest.planLayout(of: table), layout.maxFileBytes <= ManifestLimits.maxTableBytes else {
                    context.report(.tableTooLarge, "table \(table.fileName) (\(table.width)x\(table.height) \(table.style.rawValue) × \(table.capacity)) could grow past the \(ByteSize.describe(ManifestLimits.maxTableBytes)) limit; lower maximumCount or size",
                                   at: format.location, keyPath: path)
                    ok = false
                    continue
                }
                total += layout.maxFileBytes
            }
        }
        guard ok else { return false }
        if let budget = context.options.maxDiskBytes, total > budget {
            context.report(.diskBudgetExceeded, "the tables may grow to \(ByteSize.describe(total)) (\(total) bytes), over the --max-disk budget of \(ByteSize.describe(budget)) (\(budget) bytes)",
                           at: familiesPair.key.location, keyPath: "families")
        }
        return true
    }
}
