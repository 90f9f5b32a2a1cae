import Foundation
import ImageManifest
import ImageTableCore

/// What `imagetable inspect` prints: aligned text for people, or one JSON document
/// (docs/CLI.md, "inspect").
enum InspectReport {
    /// The JSON document: one element of `tables` per table argument, in order.
    struct Document: Encodable {
        let version = 1
        let ok: Bool
        let tables: [TableResult]
    }

    /// One table: its summary's fields when it could be read, else `ok: false` and the error.
    struct TableResult: Encodable {
        let path: String
        let summary: TableInspection?
        let error: ImageTableError?

        func encode(to encoder: any Encoder) throws {
            if let summary {
                try summary.encode(to: encoder)
            } else {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(path, forKey: .path)
                try container.encode(error, forKey: .error)
            }
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(summary != nil, forKey: .ok)
        }

        enum CodingKeys: String, CodingKey {
            case path, ok, error
        }
    }

    static func json(_ results: [TableResult]) -> String {
        JSONOutput.encode(Document(ok: results.allSatisfy { $0.summary != nil }, tables: results))
    }

    /// The text report of one table; entries listed when the summary has them.
    static func text(_ s: TableInspection) -> String {
        let h = s.header
        let percent = s.capacity > 0 ? s.entryCount * 100 / s.capacity : 0
        var out = "\(PrintableText.escaped(s.path))\n"
        var facts: [(String, String)] = [
            ("format", "\(PrintableText.escaped(h.name))" + (h.family.isEmpty ? "" : ", family \(PrintableText.escaped(h.family))")
                + ", scale \(h.scale), protection \(h.protection)"),
            ("pixels", "\(h.width)x\(h.height) \(h.style), \(h.bytesPerRow) bytes a row, slots of \(h.slotStride) bytes "
                + "(page \(h.pageSize))"),
            ("entries", "\(s.entryCount) of \(s.capacity) (\(percent)%)"),
            ("size", "\(ByteSize.describe(s.fileBytes)) file (\(s.fileBytes) bytes), \(ByteSize.describe(s.allocatedBytes)) allocated; "
                + "entries fill \(ByteSize.describe(s.entryBytes)) of slots; \(ByteSize.describe(s.maxFileBytes)) when full"),
            ("created", Self.date(h.createdAt)),
            ("parameters", h.parametersHash),
        ]
        if !s.notices.isEmpty { facts.append(("notices", "\(s.notices.count) damaged or interrupted records skipped")) }
        for (label, value) in facts { out += "  " + label.padding(toLength: 12, withPad: " ", startingAt: 0) + value + "\n" }
        guard let entries = s.entries else { return out }
        if s.entryCount == 0 { return out + "  no entries\n" }
        // `--limit 0`: the totals above, without a column header over no rows.
        if entries.isEmpty { return out + "\n  \(s.entryCount) \(s.entryCount == 1 ? "entry" : "entries") not listed (--limit)\n" }
        let header = ["slot", "key", "recency", "written", "content", "entity UUID", "source UUID"]
        var rows = [header]
        for e in entries {
            let r = e.contentRect
            rows.append(["\(e.slot)", PrintableText.escaped(e.key), "\(e.recency)", Self.date(e.writtenAt),
                         "\(r.x),\(r.y) \(r.width)x\(r.height)", e.entityUUID, e.sourceUUID])
        }
        out += "\n" + TextTable.render(rows, rightAligned: [0, 2])
        if entries.count < s.entryCount {
            out += "  … \(s.entryCount - entries.count) more (--limit)\n"
        }
        return out
    }

    /// `2025-11-21T02:34:00Z`.
    static func date(_ seconds: UInt64) -> String {
        // gmtime_r rather than a date formatter: cheap enough for a million entries.
        var time = time_t(clamping: seconds), parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return "\(seconds)" }
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
