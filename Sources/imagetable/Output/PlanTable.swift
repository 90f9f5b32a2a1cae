import ImageManifest

/// The aligned table of a valid manifest's tables, shared by the text and GitHub outputs.
///
/// ```
///   table                family  pixels   style      bytes/row  slot bytes  count  max size
///   small@2x.imagetable  users   100x100  16BitBGR         256       20480    250    4.9 MiB
///   total                                                                    1 table 4.9 MiB (5152768 bytes)
/// ```
enum PlanTable {
    /// The plan of `manifest`, indented by two spaces, one line per table and a total line.
    static func render(_ manifest: Manifest) -> String {
        let header = ["table", "family", "pixels", "style", "bytes/row", "slot bytes", "count", "max size"]
        let rightAligned: Set<Int> = [4, 5, 6, 7]
        var rows = manifest.tables.map { t in
            [t.fileName, t.family, "\(t.pixelWidth)x\(t.pixelHeight)", t.style.rawValue, String(t.bytesPerRow),
             String(t.slotBytes), String(t.maximumCount), ByteSize.describe(t.maxBytes)]
        }
        rows.insert(header, at: 0)
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        var lines = rows.map { row in
            row.indices.map { column in
                let cell = row[column], pad = String(repeating: " ", count: widths[column] - cell.count)
                return rightAligned.contains(column) ? pad + cell : cell + pad
            }.joined(separator: "  ")
        }
        let count = manifest.tables.count
        let total = manifest.totalMaxBytes
        lines.append("total: \(count) table\(count == 1 ? "" : "s"), at most \(ByteSize.describe(total)) (\(total) bytes) on disk")
        return lines.map { "  " + $0.trimmedTrailingSpaces() + "\n" }.joined()
    }
}

extension String {
    func trimmedTrailingSpaces() -> String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
