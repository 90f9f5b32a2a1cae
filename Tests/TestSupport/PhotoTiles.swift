import Foundation

/// Many small real-photo sources, for tests that need hundreds of them: each corpus photo cut
/// into 256×256 tiles (smaller at the right and bottom edges) by one `vips dzsave` call, so the
/// tiles of all 18 photos cost about two seconds once per test process, where a `vips` call per
/// crop would cost a minute. The tiles are JPEGs re-encoded at quality 85.
public enum PhotoTiles {
    /// The directory of the tiles, removed when the process exits.
    nonisolated(unsafe) private static var directory = ""

    /// Every tile, sorted by name (`Landscape_0-3_2.jpg`: photo, column, row), made on first use
    /// in a temporary directory of this process; empty if `vips` failed.
    public static let all: [String] = {
        let directory = NSTemporaryDirectory() + "imagetables-tiles-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        Self.directory = directory
        atexit { try? FileManager.default.removeItem(atPath: PhotoTiles.directory) }
        var tiles: [String] = []
        let photos = ((try? FileManager.default.contentsOfDirectory(atPath: Corpus.root + "/photos")) ?? []).filter { $0.hasSuffix(".jpg") }.sorted()
        for photo in photos {
            let name = String(photo.dropLast(4))
            let base = directory + "/" + name
            guard let made = try? run("/usr/bin/env", ["vips", "dzsave", Corpus.photo(photo), base, "--tile-size", "256",
                                                       "--overlap", "0", "--depth", "one", "--suffix", ".jpg[Q=85]"]),
                  made.status == 0 else { continue }
            let level = base + "_files/0"
            for tile in ((try? FileManager.default.contentsOfDirectory(atPath: level)) ?? []) where tile.hasSuffix(".jpg") {
                let target = directory + "/" + name + "-" + tile
                try? FileManager.default.moveItem(atPath: level + "/" + tile, toPath: target)
                tiles.append(target)
            }
            try? FileManager.default.removeItem(atPath: base + "_files")
        }
        return tiles.sorted()
    }()

    /// The first `count` tiles, spread over the photos (every photo's tiles in turn), so that a
    /// few dozen of them are not all from one picture.
    ///
    /// - Parameter count: how many; at most ``all``'s count.
    public static func first(_ count: Int) -> [String] {
        let byPhoto = Dictionary(grouping: all) { String(($0 as NSString).lastPathComponent.split(separator: "-").first ?? "") }
        let columns = byPhoto.keys.sorted().map { byPhoto[$0]!.sorted() }
        var out: [String] = []
        var row = 0
        while out.count < count && columns.contains(where: { row < $0.count }) {
            for column in columns where row < column.count && out.count < count { out.append(column[row]) }
            row += 1
        }
        return out
    }
}
