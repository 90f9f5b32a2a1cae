import ImageManifest
import ImageTableCore

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
        var rows = manifest.formats.map { f in
            let l = Manifest.planLayout(of: f)
            return [f.fileName, f.family, "\(f.width)x\(f.height)", f.style.rawValue, String(l?.bytesPerRow ?? 0),
                    String(l?.slotStride ?? 0), String(f.capacity), ByteSize.describe(l?.maxFileBytes ?? 0)]
        }
        rows.insert(header, at: 0)
        let count = manifest.formats.count
        let total = manifest.totalMaxBytes
        return TextTable.render(rows, rightAligned: rightAligned)
            + "  total: \(count) table\(count == 1 ? "" : "s"), at most \(ByteSize.describe(total)) (\(total) bytes) on disk\n"
    }
}

extension String {
    func trimmedTrailingSpaces() -> String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
