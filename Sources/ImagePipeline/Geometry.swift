import ImageTableCore

/// Where one member's image goes: its size after scaling, the part kept, and its place in the
/// slot. Pure arithmetic on the upright source size; see `docs/PIPELINE.md`, "Fits".
struct MemberGeometry: Hashable {
    /// The scale from the upright source, per axis (equal except for `fill`).
    var scaleX: Double
    var scaleY: Double
    /// The whole source scaled for this member, before cropping.
    var resizedWidth: Int
    var resizedHeight: Int
    /// The part drawn into the slot (≤ the slot, ≤ the resized image).
    var contentWidth: Int
    var contentHeight: Int
    /// Where the drawn part goes in the slot (centred).
    var placement: PixelRect
    /// What the entry reports: the placement for `inside`, else the whole slot.
    var contentRect: PixelRect

    /// Whether the resized image is larger than what is drawn (cover cropping).
    var crops: Bool { contentWidth < resizedWidth || contentHeight < resizedHeight }

    init(sourceWidth sw: Int, sourceHeight sh: Int, format: TableFormat) {
        let w = format.width, h = format.height, options = format.rendering
        let sx = Double(w) / Double(sw), sy = Double(h) / Double(sh)
        func scaled(_ size: Int, _ scale: Double) -> Int { max(1, Int((Double(size) * scale).rounded())) }
        switch options.fit {
        case .cover:
            var s = max(sx, sy)
            let clamped = !options.upscale && s > 1
            if clamped { s = 1 }
            var rw = scaled(sw, s), rh = scaled(sh, s)
            if !clamped {
                // Covering scale: rounding must never leave the slot short.
                rw = max(rw, w)
                rh = max(rh, h)
            }
            scaleX = s
            scaleY = s
            resizedWidth = rw
            resizedHeight = rh
            contentWidth = min(w, rw)
            contentHeight = min(h, rh)
        case .contain, .inside:
            var s = min(sx, sy)
            if !options.upscale { s = min(s, 1) }
            scaleX = s
            scaleY = s
            resizedWidth = min(w, scaled(sw, s))
            resizedHeight = min(h, scaled(sh, s))
            contentWidth = resizedWidth
            contentHeight = resizedHeight
        case .fill:
            let fx = options.upscale ? sx : min(sx, 1), fy = options.upscale ? sy : min(sy, 1)
            scaleX = fx
            scaleY = fy
            resizedWidth = min(w, scaled(sw, fx))
            resizedHeight = min(h, scaled(sh, fy))
            contentWidth = resizedWidth
            contentHeight = resizedHeight
        }
        placement = PixelRect(x: (w - contentWidth) / 2, y: (h - contentHeight) / 2,
                              width: contentWidth, height: contentHeight)
        contentRect = options.fit == .inside ? placement : PixelRect(x: 0, y: 0, width: w, height: h)
    }
}

/// The libvips work one or more members share: members whose resized size, drawn size and crop
/// agree get identical pixels from libvips (style, background and corners are applied afterwards
/// in Swift), so libvips computes them once.
struct RenderGroup: Hashable {
    var scaleX: Double
    var scaleY: Double
    var resizedWidth: Int
    var resizedHeight: Int
    var contentWidth: Int
    var contentHeight: Int
    /// The crop strategy when cropping; `nil` when nothing is cropped.
    var crop: CropStrategy?

    /// A total order, largest resize first: by area, then each field, so that a plan's order of
    /// groups depends on the groups alone.
    func precedes(_ other: RenderGroup) -> Bool {
        let a = (resizedWidth * resizedHeight, resizedWidth, resizedHeight, contentWidth, contentHeight)
        let b = (other.resizedWidth * other.resizedHeight, other.resizedWidth, other.resizedHeight, other.contentWidth, other.contentHeight)
        if a != b { return a > b }
        let c = (scaleX, scaleY, crop?.rawValue ?? ""), d = (other.scaleX, other.scaleY, other.crop?.rawValue ?? "")
        return c > d
    }

    init(_ g: MemberGeometry, crop: CropStrategy) {
        scaleX = g.scaleX
        scaleY = g.scaleY
        resizedWidth = g.resizedWidth
        resizedHeight = g.resizedHeight
        contentWidth = g.contentWidth
        contentHeight = g.contentHeight
        self.crop = g.crops ? crop : nil
    }
}

/// The decode-once plan for one source: the size of the single decode and, for each group, the
/// image it is derived from.
struct RenderPlan {
    /// Distinct libvips outputs, largest first.
    var groups: [RenderGroup]
    /// For each target, the index of its group.
    var groupOfTarget: [Int]
    /// The scale of the one decode relative to the upright source: the smallest that covers every
    /// member, never above 1.
    var decodeScale: Double

    init(sourceWidth sw: Int, sourceHeight sh: Int, geometries: [MemberGeometry], formats: [TableFormat]) {
        var groups: [RenderGroup] = []
        var index: [RenderGroup: Int] = [:]
        var scale = 0.0
        for (g, format) in zip(geometries, formats) {
            let group = RenderGroup(g, crop: format.rendering.crop)
            if index[group] == nil {
                index[group] = groups.count
                groups.append(group)
            }
            scale = max(scale, g.scaleX, g.scaleY)
        }
        // Largest first, and groups of equal area in an order of their own, not the formats':
        // the manifest's order of formats, or which of them a call draws, picked the intermediate
        // a smaller group is resized from among equal ones, and so its pixels.
        let order = groups.indices.sorted { groups[$0].precedes(groups[$1]) }
        var renumber = [Int](repeating: 0, count: groups.count)
        for (new, old) in order.enumerated() { renumber[old] = new }
        self.groups = order.map { groups[$0] }
        groupOfTarget = zip(geometries, formats).map { renumber[index[RenderGroup($0, crop: $1.rendering.crop)]!] }
        decodeScale = min(1, scale)
    }

    /// The decode's target box, for `vips_thumbnail` (which fits the source inside it).
    ///
    /// Preferably the largest group's own resized size: the decode then yields exactly that
    /// member (as `vipsthumbnail` to that size would), with no second resampling. That box is used
    /// when, with libvips' uniform scale for it, it covers every other group to within a pixel.
    /// Otherwise (stretching fills, mixed aspect ratios) the box at ``decodeScale``, rounded up.
    func decodeBox(sourceWidth sw: Int, sourceHeight sh: Int) -> (width: Int, height: Int) {
        if let largest = groups.first {
            // A pixel more on the side a crop cuts: vips_thumbnail fits the source inside the box
            // by the side whose ratio is the larger, and a cut side rounded down (228.28 to 228)
            // made it that one, a fraction of a pixel off the member's scale, which the other
            // side's rounding then stretched. The uncut side is exact, and decides.
            let bw = largest.resizedWidth + (largest.contentWidth < largest.resizedWidth ? 1 : 0)
            let bh = largest.resizedHeight + (largest.contentHeight < largest.resizedHeight ? 1 : 0)
            let shrink = max(Double(sw) / Double(bw), Double(sh) / Double(bh))
            let pw = Double(sw) / shrink, ph = Double(sh) / shrink
            if shrink >= 1, groups.allSatisfy({ pw >= Double($0.resizedWidth) - 1 && ph >= Double($0.resizedHeight) - 1 }) {
                return (bw, bh)
            }
        }
        func up(_ size: Int) -> Int { max(1, min(size, Int((Double(size) * decodeScale - 1e-6).rounded(.up)))) }
        return (up(sw), up(sh))
    }

    /// For each group, where its resize starts: `nil` for the decoded image, else the index of
    /// an earlier (larger) group whose uncropped resize is at least twice as large on both axes,
    /// the smallest such. Never a cropped image, nor one enlarged from the decode on either axis
    /// (a `fill` with upscaling): its pixels on that axis are interpolated, and libvips draws an
    /// enlargement half a pixel off, which a smaller member resized from it carried (4.6 levels
    /// off the member drawn alone).
    func sources(decodedWidth: Int, decodedHeight: Int) -> [Int?] {
        var result: [Int?] = []
        for (i, g) in groups.enumerated() {
            var best: Int?
            for j in 0..<i {
                let c = groups[j]
                guard c.resizedWidth >= 2 * g.resizedWidth, c.resizedHeight >= 2 * g.resizedHeight,
                      c.resizedWidth <= decodedWidth, c.resizedHeight <= decodedHeight,
                      c.resizedWidth < decodedWidth || c.resizedHeight < decodedHeight else { continue }
                if let b = best, groups[b].resizedWidth * groups[b].resizedHeight <= c.resizedWidth * c.resizedHeight { continue }
                best = j
            }
            result.append(best)
        }
        return result
    }

    /// Which groups to compute: those of the first `drawn` formats (the targets; the rest were
    /// only planned) and, transitively, the intermediates they are resized from.
    func needed(drawn: Int, sources: [Int?]) -> [Bool] {
        var needed = [Bool](repeating: false, count: groups.count)
        for t in 0..<drawn { needed[groupOfTarget[t]] = true }
        // Sources are earlier (larger) groups, so one pass from the end reaches every ancestor.
        for g in groups.indices.reversed() where needed[g] {
            if let s = sources[g] { needed[s] = true }
        }
        return needed
    }
}
