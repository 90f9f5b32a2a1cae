import Foundation
import ImagePipeline
import ImageTableCore
import WorkerProtocol

/// The worker's `preview` job: draws a contact sheet of a table's entries, a grid of tiles
/// with their keys as captions and a title line, and writes it as an RGB PNG (the pixel half of
/// `imagetable preview`).
enum PreviewWorker {
    enum Order: String {
        case key, slot, recency
    }

    /// A preview job with its fields checked.
    struct Request {
        var table: String
        var output: String
        var columns: Int?
        var tileSize: Int
        var limit: Int
        var order: Order
        var captions: Bool
    }

    /// Runs a job from the command and says how it ended.
    static func reply(_ job: PreviewJob) -> WorkerReply {
        guard let order = Order(rawValue: job.order), !job.table.isEmpty, !job.output.isEmpty, job.tileSize >= 1, job.limit >= 1,
              (job.columns ?? 1) >= 1 else {
            return .failed(WorkerFailure(.protocolError, "a preview job needs a table, an output, positive sizes and an order of key, slot or recency"))
        }
        return .finished(Finished(status: run(Request(table: job.table, output: job.output, columns: job.columns, tileSize: job.tileSize,
                                                      limit: job.limit, order: order, captions: job.captions))))
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
        let all = sorted(reader.entries(), by: request.order)
        // After the listing, which finds the damaged and interrupted records it skips.
        for notice in reader.notices { printError("\(request.table): warning: \(notice.message) [\(notice.kind.rawValue)]") }
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
            try OutputFiles.write(png, to: request.output, mode: mode_t(reader.header.protection.permissions), sparing: request.table)
        } catch {
            printError(error.description)
            return 1
        }
        if request.output != "-" {
            let more = all.count > shown.count ? " (the first \(shown.count) of \(all.count); see --limit)" : ""
            printLine("\(request.output): \(shown.count) entr\(shown.count == 1 ? "y" : "ies") of \(request.table)\(more) "
                  + "in \(sheet.columns) column\(sheet.columns == 1 ? "" : "s") and \(sheet.rows) row\(sheet.rows == 1 ? "" : "s"), "
                  + "\(sheet.width)x\(sheet.height) pixels")
        }
        // A record skipped as damaged (or one the damaged index does not lead to) is an entry
        // the sheet cannot show.
        let damaged = reader.notices.contains(where: \.skipsEntry)
        return drawing.unreadable == 0 && !damaged ? 0 : 1
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
