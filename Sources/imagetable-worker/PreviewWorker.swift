import Foundation
import ImagePipeline
import ImageTableCore

/// `imagetable-worker preview`: draws a contact sheet of a table's entries, a grid of tiles
/// with their keys as captions and a title line, and writes it as an RGB PNG (the pixel half of
/// `imagetable preview`).
enum PreviewWorker {
    enum Order: String {
        case key, slot, recency
    }

    struct Request {
        var table = ""
        var output = ""
        var columns: Int?
        var tileSize = 160
        var limit = 500
        var order = Order.key
        var captions = true

        init(parsing arguments: inout WorkerArguments) {
            while let flag = arguments.next() {
                switch flag {
                case "--table": table = arguments.value(of: flag)
                case "--output": output = arguments.value(of: flag)
                case "--columns": columns = arguments.integer(of: flag)
                case "--tile-size": tileSize = arguments.integer(of: flag)
                case "--limit": limit = arguments.integer(of: flag)
                case "--sort":
                    guard let order = Order(rawValue: arguments.value(of: flag)) else { usageError("--sort takes key, slot or recency") }
                    self.order = order
                case "--no-captions": captions = false
                default: usageError("unknown option \(flag)")
                }
            }
            guard !table.isEmpty, !output.isEmpty else { usageError("preview needs --table and --output") }
        }
    }

    /// The largest sheet drawn: 100 million pixels, 300 MB of RGB in memory.
    static let maximumPixels = 100_000_000

    /// Runs the request; returns the exit status.
    static func run(_ request: Request) -> Int32 {
        let reader: ImageTableReader
        do {
            reader = try ImageTableReader(path: request.table)
        } catch {
            printError("\(error)")
            return 1
        }
        for notice in reader.notices { printError("\(request.table): warning: \(notice.message) [\(notice.kind.rawValue)]") }
        let all = sorted(reader.entries(), by: request.order)
        let shown = Array(all.prefix(request.limit))
        let layout = reader.layout
        let sheet = SheetLayout(slotWidth: layout.width, slotHeight: layout.height, count: shown.count,
                                tileSize: request.tileSize, columns: request.columns, captions: request.captions)
        guard sheet.width * sheet.height <= maximumPixels else {
            printError("\(request.output): error: the sheet would be \(sheet.width)x\(sheet.height) pixels, over \(maximumPixels); "
                       + "show fewer entries (--limit) or smaller tiles (--tile-size) [sheet-too-large]")
            return 1
        }
        var drawing = SheetDrawing(reader: reader, sheet: sheet, captions: request.captions)
        drawing.drawTitle(titles(reader, shown: shown.count, total: all.count))
        for (index, info) in shown.enumerated() { drawing.draw(info, at: index) }
        if let failure = drawing.captionFailure {
            printError("\(request.table): note: the sheet has no captions: \(failure)")
        }
        let canvas = drawing.canvas
        do {
            let png = try PNGEncoder.encode(canvas.bitmap, name: request.output)
            try OutputFiles.write(png, to: request.output, mode: mode_t(reader.header.protection.permissions))
        } catch {
            printError(error.description)
            return 1
        }
        if request.output != "-" {
            let more = all.count > shown.count ? " (the first \(shown.count) of \(all.count); see --limit)" : ""
            print("\(request.output): \(shown.count) entr\(shown.count == 1 ? "y" : "ies") of \(request.table)\(more) "
                  + "in \(sheet.columns) column\(sheet.columns == 1 ? "" : "s") and \(sheet.rows) row\(sheet.rows == 1 ? "" : "s"), "
                  + "\(sheet.width)x\(sheet.height) pixels")
        }
        return drawing.unreadable == 0 ? 0 : 1
    }

    static func sorted(_ entries: [EntryInfo], by order: Order) -> [EntryInfo] {
        switch order {
        case .key: entries.sorted { $0.key.unicodeScalars.lexicographicallyPrecedes($1.key.unicodeScalars) }
        case .slot: entries
        case .recency: entries.sorted { ($0.recency, $1.slot) > ($1.recency, $0.slot) }
        }
    }

    /// `grid · family photos · 150x150 32BitBGRA · 5 of 100 entries`, then shorter forms for
    /// narrow sheets, which drop the family, then the counts' words, then the pixels.
    private static func titles(_ reader: ImageTableReader, shown: Int, total: Int) -> [String] {
        let h = reader.header, l = h.layout
        let pixels = "\(l.width)x\(l.height) \(l.style.rawValue)"
        let counts = shown == total ? "\(total) of \(l.capacity) entries" : "\(shown) shown of \(total) entries, capacity \(l.capacity)"
        let short = shown == total ? "\(total)/\(l.capacity)" : "\(shown) of \(total)/\(l.capacity)"
        var titles = [[h.name, pixels, counts], [h.name, pixels, short], [h.name, short]]
        if !h.family.isEmpty { titles.insert([h.name, "family \(h.family)", pixels, counts], at: 0) }
        return titles.map { $0.joined(separator: " · ") }
    }
}
