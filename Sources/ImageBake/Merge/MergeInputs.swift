import Foundation
import ImageTableCore
import ImageManifest

/// The directories a merge combines, read and checked before anything is written: each holds
/// the same tables (by file name) with the same parameters, and, when they are shards, they are
/// every shard of one split exactly once.
struct MergeInputs {
    /// One input directory.
    struct Input {
        /// As given on the command line.
        let path: String
        /// Its shard marker, if it holds a shard.
        let marker: ShardMarker?
        /// Its tables, by file name, open read-only.
        let tables: [String: ImageTableReader]
    }

    let inputs: [Input]
    /// The table file names every input holds, sorted.
    let tableNames: [String]
    /// The inputs' tables' writer locks, held until ``release()``: a shard whose bake is still
    /// running is waited for (up to the lock timeout), never merged half done.
    private let locks: [TableLock]

    /// Opens every input and checks that they go together.
    ///
    /// - Parameters:
    ///   - paths: the input directories.
    ///   - output: the merge's output directory (it may not be one of the inputs).
    /// - Throws: ``ImageTableError``: `not-found`/`io` for an input that cannot be read, the error
    ///   of a table that cannot be opened, `shard-mismatch` for shards that do not make one
    ///   whole, `manifest-mismatch` for tables that differ.
    init(_ paths: [String], output: String, lockTimeout: Double = 10) throws(ImageTableError) {
        guard !paths.isEmpty else { throw ImageTableError(.invalidArgument, "no directory to merge") }
        // By bytes: `café` spelt two ways is two directories, which were called one given twice.
        var seen: [PathBytes.Key: String] = [:]
        let outputReal = SourceScanner.realPath(output)
        var inputs: [Input] = []
        var locks: [TableLock] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw ImageTableError(.notFound, "no such directory", path: path)
            }
            guard isDirectory.boolValue else { throw ImageTableError(.invalidArgument, "not a directory of tables", path: path) }
            let real = SourceScanner.realPath(path) ?? path
            if let first = seen[PathBytes.Key(real)] { throw ImageTableError(.shardMismatch, "given twice (also as \(first))", path: path) }
            seen[PathBytes.Key(real)] = path
            if let outputReal, PathBytes.same(real, outputReal) {
                throw ImageTableError(.invalidArgument, "the output directory cannot be one of the inputs", path: path)
            }
            // The merge replaces the output whole, and everything in it with it: by bytes, since
            // through Characters `merged/\u{301}s` (a slash and a combining accent, one
            // Character) was not below `merged`, and the merge deleted it.
            if let outputReal, PathBytes.isBelow(real, outputReal) {
                throw ImageTableError(.invalidArgument, "is inside the output directory, which the merge replaces whole", path: path)
            }
            var names = try Self.names(in: path)
            var tables: [String: ImageTableReader] = [:]
            // Only a lock held says a bake is there: a lock file that is a directory does not.
            func lockFailure(_ error: ImageTableError) -> ImageTableError {
                locks.forEach { $0.release() }
                let what = names.contains(ShardMarker.fileName) ? "this shard" : "these tables"
                return error.code == .locked ? error.explained("a bake may still be writing \(what)") : error
            }
            // A lock file whose table is not there yet: a bake takes every table's lock before
            // it makes the tables, so a shard whose bake has just begun is waited for, where it
            // was blamed as another manifest's (`manifest-mismatch`, `holds no table`).
            for name in names where name.hasSuffix(".imagetable.lock") && !PathBytes.isHidden(name)
                && !names.contains(String(name.dropLast(".lock".count))) {
                do throws(ImageTableError) {
                    try TableLock.unlessReadOnly(tablePath: path + "/" + name.dropLast(".lock".count), timeout: lockTimeout)?.release()
                } catch {
                    throw lockFailure(error)
                }
            }
            // Listed again: the tables of a bake waited for above are there now.
            names = (try? Self.names(in: path)) ?? names
            for name in names where name.hasSuffix(".imagetable") && !PathBytes.isHidden(name) {
                let table = path + "/" + name
                do throws(ImageTableError) {
                    // A read-only input (a mounted volume) is read without its lock.
                    if let lock = try TableLock.unlessReadOnly(tablePath: table, timeout: lockTimeout) { locks.append(lock) }
                } catch {
                    throw lockFailure(error)
                }
                do {
                    tables[name] = try ImageTableReader(path: table)
                } catch {
                    locks.forEach { $0.release() }
                    throw error.at(table)
                }
            }
            inputs.append(Input(path: path, marker: try ShardMarker.read(in: path), tables: tables))
        }
        do throws(ImageTableError) {
            try Self.checkShards(inputs)
            tableNames = try Self.checkTables(inputs)
            try Self.checkOneManifest(inputs)
        } catch {
            locks.forEach { $0.release() }
            throw error
        }
        self.inputs = inputs
        self.locks = locks
    }

    /// The names in an input directory. Foundation decoded a name that is not UTF-8 lossily, so
    /// a table file named so was opened under another name (`not-found`), and a lock file made
    /// beside it under that name; such a table is no manifest's, and is said so.
    ///
    /// - Throws: ``ImageTableError`` `unreadable` when the directory cannot be listed,
    ///   `name-not-utf8` for a table or lock file whose name is not UTF-8.
    private static func names(in path: String) throws(ImageTableError) -> [String] {
        guard let listed = DirectoryListing.names(in: path) else {
            throw ImageTableError(.unreadable, "cannot list the directory: \(String(cString: strerror(errno)))", path: path)
        }
        var names: [String] = []
        for name in listed {
            switch name {
            case .utf8(let text): names.append(text)
            case .notUTF8(let bytes, let printable):
                guard !PathBytes.isHidden(printable), [".imagetable", ".imagetable.lock"].contains(where: { bytes.reversed().starts(with: $0.utf8.reversed()) }) else { continue }
                throw ImageTableError(.nameNotUTF8, "a table file whose name is not UTF-8 (bytes outside UTF-8 are shown as \\xFF), "
                                      + "which no manifest names; rename or remove it", path: path + "/" + printable)
            }
        }
        return names
    }

    /// Releases the inputs' locks.
    func release() { locks.forEach { $0.release() } }

    /// Shards must be of one manifest: equal tables are not enough, since two projects (or one
    /// whose sources moved) may have the same formats. Checked after the tables, whose error
    /// names the parameter that differs. A marker from before the manifest was recorded says
    /// nothing either way.
    private static func checkOneManifest(_ inputs: [Input]) throws(ImageTableError) {
        if let pending = inputs.first(where: { $0.marker?.isPending ?? false }), let marker = pending.marker {
            throw ImageTableError(.shardMismatch, "the last bake of shard \(marker.shard)/\(marker.count) (its first, or one from a changed "
                                  + "manifest) did not run to the end, so its tables may lack entries or hold two manifests'; bake it again, "
                                  + "then merge", path: pending.path)
        }
        let marked = inputs.filter { $0.marker?.manifest != nil }
        guard let first = marked.first, let other = marked.first(where: { $0.marker!.manifest != first.marker!.manifest }) else { return }
        throw ImageTableError(.shardMismatch, "was baked from another manifest than \(first.path) (their families' names, sources, "
                              + "patterns or formats differ); bake every shard from one manifest, then merge", path: other.path)
    }

    /// Shards must be every shard of one split, once each; inputs without a marker (whole bakes
    /// of parts of a collection) may be merged together, but not with shards.
    private static func checkShards(_ inputs: [Input]) throws(ImageTableError) {
        let marked = inputs.filter { $0.marker != nil }
        guard !marked.isEmpty else { return }
        if let plain = inputs.first(where: { $0.marker == nil }) {
            throw ImageTableError(.shardMismatch, "holds no shard, while \(marked[0].path) holds shard "
                                  + "\(marked[0].marker!.shard)/\(marked[0].marker!.count)", path: plain.path)
        }
        let count = marked[0].marker!.count
        var byShard: [Int: String] = [:]
        for input in marked {
            let marker = input.marker!
            guard marker.count == count else {
                throw ImageTableError(.shardMismatch, "holds shard \(marker.shard)/\(marker.count), while \(marked[0].path) holds a shard of \(count)",
                                      path: input.path)
            }
            if let other = byShard[marker.shard] {
                throw ImageTableError(.shardMismatch, "holds shard \(marker.shard)/\(count), as \(other) does", path: input.path)
            }
            byShard[marker.shard] = input.path
        }
        let missing = (0..<count).filter { byShard[$0] == nil }
        guard missing.isEmpty else {
            let list = missing.prefix(10).map { "\($0)/\(count)" }.joined(separator: ", ") + (missing.count > 10 ? ", …" : "")
            // Named by the first shard given, as every error names a file: the split it belongs to.
            throw ImageTableError(.shardMismatch, "\(missing.count) of the \(count) shards of its split \(missing.count == 1 ? "is" : "are") "
                                  + "missing: \(list)", path: marked[0].path)
        }
    }

    /// Every input holds the same tables, each made with the same parameters (hash and header
    /// fields): tables from another manifest, or from another version of one, hold other pixels.
    private static func checkTables(_ inputs: [Input]) throws(ImageTableError) -> [String] {
        let first = inputs[0]
        let names = first.tables.keys.sorted()
        guard !names.isEmpty else { throw ImageTableError(.invalidArgument, "holds no table to merge", path: first.path) }
        for input in inputs.dropFirst() {
            if let extra = input.tables.keys.sorted().first(where: { first.tables[$0] == nil }) {
                throw ImageTableError(.manifestMismatch, "has \(extra), which \(first.path) has not: "
                                      + "the directories were not baked from one manifest", path: input.path)
            }
            if let lacking = names.first(where: { input.tables[$0] == nil }) {
                throw ImageTableError(.manifestMismatch, "has no \(lacking), which \(first.path) has: "
                                      + "the directories were not baked from one manifest", path: input.path)
            }
            for name in names {
                let a = first.tables[name]!.header, b = input.tables[name]!.header
                let differences = a.parametersHash != b.parametersHash ? ["parameter hash \(hex(b.parametersHash)) ≠ \(hex(a.parametersHash))"]
                    : []
                let fields = differences + Self.fieldDifferences(a, b)
                guard fields.isEmpty else {
                    throw ImageTableError(.manifestMismatch, "was made with other parameters than \(first.path)/\(name) ("
                                          + fields.joined(separator: "; ") + "): the directories were not baked from one manifest",
                                          path: input.path + "/" + name)
                }
            }
        }
        return names
    }

    /// The header fields a format decides, where two headers differ.
    private static func fieldDifferences(_ a: TableHeader, _ b: TableHeader) -> [String] {
        let pairs: [(String, String, String)] = [
            ("name", a.name, b.name), ("family", a.family, b.family), ("scale", "\(a.scale)", "\(b.scale)"),
            ("protection", a.protection.rawValue, b.protection.rawValue), ("style", a.layout.style.rawValue, b.layout.style.rawValue),
            ("size", "\(a.layout.width)x\(a.layout.height)", "\(b.layout.width)x\(b.layout.height)"),
            ("capacity", "\(a.layout.capacity)", "\(b.layout.capacity)"),
        ]
        return pairs.filter { $0.1 != $0.2 }.map { "\($0.0) \($0.2) ≠ \($0.1)" }
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}
