import ImagePipeline
import ImageTableCore

/// Draws a contact sheet: the title, then each entry's tile and caption in its cell.
///
/// An entry that cannot be read leaves its cell blank but keeps its caption, so the sheet still
/// says which entry is missing; it is reported on standard error and counted.
struct SheetDrawing {
    let reader: ImageTableReader
    let sheet: SheetLayout
    private(set) var canvas: SheetCanvas
    private var captions: Captions?
    /// Entries that could not be read.
    private(set) var unreadable = 0

    init(reader: ImageTableReader, sheet: SheetLayout, captions: Bool) {
        self.reader = reader
        self.sheet = sheet
        canvas = SheetCanvas(width: sheet.width, height: sheet.height)
        self.captions = captions ? Captions() : nil
    }

    /// Why the sheet has no captions although they were asked for; `nil` when it has them.
    var captionFailure: String? { captions?.failure }

    /// Draws the first of `titles` that fits the sheet's width, along its top.
    mutating func drawTitle(_ titles: [String]) {
        let width = sheet.width - 2 * SheetLayout.gap
        guard let mask = captions?.mask(firstFitting: titles, font: Captions.titleFont, width: width) else { return }
        let y = SheetLayout.gap + (SheetLayout.titleHeight - mask.height) / 2
        canvas.paint(mask, colour: SheetCanvas.text, x: SheetLayout.gap, y: y, clipWidth: width, clipHeight: SheetLayout.titleHeight)
    }

    /// Draws `info`'s tile and caption in cell `index`.
    mutating func draw(_ info: EntryInfo, at index: Int) {
        do {
            let tile = try reader.withImage(entityUUID: info.entityUUID, sourceUUID: info.sourceUUID) { view in
                EntryBitmaps.premultipliedRGBA(view)
            }
            if let tile {
                let small = try Resampler.resize(tile, width: sheet.tileWidth, height: sheet.tileHeight, name: info.key)
                let origin = sheet.tileOrigin(index)
                canvas.composite(small, x: origin.x, y: origin.y)
            } else {
                fail(info, "it changed or was removed while it was read")
            }
        } catch {
            fail(info, "\(error)")
        }
        if let mask = captions?.mask(info.key, font: Captions.captionFont, width: sheet.cellWidth) {
            let cell = sheet.cellOrigin(index)
            let x = cell.x + max(0, (sheet.cellWidth - mask.width) / 2)
            let y = cell.y + sheet.tileHeight + max(0, (SheetLayout.captionHeight - mask.height) / 2)
            canvas.paint(mask, colour: SheetCanvas.text, x: x, y: y, clipWidth: sheet.cellWidth, clipHeight: SheetLayout.captionHeight)
        }
    }

    private mutating func fail(_ info: EntryInfo, _ why: String) {
        printError("\(reader.path): error: slot \(info.slot) (\(PrintableText.quoted(info.key))): \(why) [entry-unavailable]")
        unreadable += 1
    }
}
