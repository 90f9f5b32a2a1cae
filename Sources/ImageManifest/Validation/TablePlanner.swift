import ImageTableCore

/// Sizes every table with the format's layout rules and checks the per-table and disk limits.
struct TablePlanner {
    let context: ValidationContext

    /// The tables, or `nil` when one is too large or the total exceeds the disk budget.
    ///
    /// - Parameters:
    ///   - formats: the valid formats.
    ///   - output: the output directory as written, and resolved.
    ///   - familiesPair: where the disk-budget error is reported.
    func plan(_ formats: [Manifest.Format], output: ManifestReader.CheckedPath, at familiesPair: YAMLPair) -> [PlannedTable]? {
        var tables: [PlannedTable] = []
        var ok = true
        for format in formats {
            let path = "families".appendingKey(format.family).appendingKey("formats").appendingKey(format.name)
            for scale in format.scales {
                let descriptor = format.descriptor(scale: scale)
                let fileName = format.tableFileName(scale: scale)
                guard let layout = try? descriptor.layout(pageSize: ManifestLimits.planPageSize),
                      layout.maxFileBytes <= ManifestLimits.maxTableBytes else {
                    context.report(.tableTooLarge, "table \(fileName) (\(descriptor.width)x\(descriptor.height) \(descriptor.style.rawValue) × \(descriptor.capacity)) could grow past the \(ByteSize.describe(ManifestLimits.maxTableBytes)) limit; lower maximumCount or size",
                                   at: format.location, keyPath: path)
                    ok = false
                    continue
                }
                tables.append(PlannedTable(format: format, scale: scale, fileName: fileName,
                                           path: output.resolved + "/" + fileName,
                                           displayPath: displayPath(output.written, fileName), descriptor: descriptor, layout: layout))
            }
        }
        guard ok else { return nil }
        let total = tables.reduce(0) { $0 + $1.maxBytes }
        if let budget = context.options.maxDiskBytes, total > budget {
            context.report(.diskBudgetExceeded, "the tables may grow to \(ByteSize.describe(total)) (\(total) bytes), over the --max-disk budget of \(ByteSize.describe(budget)) (\(budget) bytes)",
                           at: familiesPair.key.location, keyPath: "families")
            return nil
        }
        return tables
    }

    private func displayPath(_ output: String, _ fileName: String) -> String {
        if output.hasPrefix("/") { return PathResolver.normalize(output + "/" + fileName) }
        let file = context.file
        let directory = file.contains("/") ? String(file[..<file.lastIndex(of: "/")!]) : "."
        return PathResolver.normalize((directory.isEmpty ? "/" : directory) + "/" + output + "/" + fileName)
    }
}
