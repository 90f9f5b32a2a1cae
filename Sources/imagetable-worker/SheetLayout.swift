/// Where everything goes on a contact sheet. Pure arithmetic, documented in docs/CLI.md
/// ("preview", "Sheet size") so that scripts and tests can predict the size:
///
///     scale   = min(1, tileSize / max(slotWidth, slotHeight))       (tiles are never enlarged)
///     tile    = max(1, round(slotWidth × scale)) × max(1, round(slotHeight × scale))
///     cell    = max(tileWidth, 96 if captions) × (tileHeight + 20 if captions)
///     width   = columns × cellWidth + (columns + 1) × 8
///     height  = (28 if captions) + rows × cellHeight + (rows + 1) × 8
struct SheetLayout: Equatable {
    static let gap = 8
    static let captionHeight = 20
    static let titleHeight = 28
    static let minimumCaptionWidth = 96
    /// The default column count keeps the sheet at most this wide.
    static let defaultMaximumWidth = 2048

    let count: Int
    let columns: Int
    let rows: Int
    let tileWidth: Int
    let tileHeight: Int
    let cellWidth: Int
    let cellHeight: Int
    let titleHeight: Int
    let captions: Bool
    let width: Int
    let height: Int

    /// Lays out `count` tiles of a `slotWidth` × `slotHeight` table.
    ///
    /// - Parameters:
    ///   - columns: the requested column count; `nil` for about square, at most 2048 pixels
    ///     wide. Never more than `count` (at least 1).
    init(slotWidth: Int, slotHeight: Int, count: Int, tileSize: Int, columns requested: Int?, captions: Bool) {
        let scale = min(1, Double(tileSize) / Double(max(slotWidth, slotHeight)))
        tileWidth = max(1, Int((Double(slotWidth) * scale).rounded()))
        tileHeight = max(1, Int((Double(slotHeight) * scale).rounded()))
        cellWidth = captions ? max(tileWidth, Self.minimumCaptionWidth) : tileWidth
        cellHeight = tileHeight + (captions ? Self.captionHeight : 0)
        titleHeight = captions ? Self.titleHeight : 0
        self.count = count
        self.captions = captions
        let square = Int(Double(count).squareRoot().rounded(.up))
        let fitting = max(1, (Self.defaultMaximumWidth - Self.gap) / (cellWidth + Self.gap))
        columns = max(1, min(requested ?? min(square, fitting), max(count, 1)))
        rows = (count + columns - 1) / columns
        width = columns * cellWidth + (columns + 1) * Self.gap
        height = titleHeight + rows * cellHeight + (rows + 1) * Self.gap
    }

    /// The top-left corner of tile `index`'s cell.
    func cellOrigin(_ index: Int) -> (x: Int, y: Int) {
        let column = index % columns, row = index / columns
        return (Self.gap + column * (cellWidth + Self.gap), titleHeight + Self.gap + row * (cellHeight + Self.gap))
    }

    /// The top-left corner of tile `index` itself, centred in its cell's width.
    func tileOrigin(_ index: Int) -> (x: Int, y: Int) {
        let cell = cellOrigin(index)
        return (cell.x + (cellWidth - tileWidth) / 2, cell.y)
    }
}
