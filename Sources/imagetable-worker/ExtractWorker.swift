import Foundation
import ImagePipeline
import ImageTableCore
import WorkerProtocol

/// The worker's `extract` job: writes table entries as PNG files (the pixel half of
/// `imagetable extract`, which has already parsed and checked the command line).
///
/// Output files get the permissions of the table's protection (0644, 0640 or 0600, less the
/// umask), so extracting from a private table does not publish its pixels.
enum ExtractWorker {
    /// Runs the request; returns the exit status.
    static func run(_ request: ExtractJob) -> Int32 {
        guard !request.table.isEmpty,
              (request.key != nil && request.output != nil && request.all == nil) || (request.key == nil && request.output == nil && request.all != nil) else {
            printError("imagetable-worker: extract needs a table, and a key with an output or a directory for all entries")
            return 64
        }
        let reader: ImageTableReader
        do {
            reader = try ImageTableReader(path: request.table)
        } catch {
            printError("\(error)")
            return 1
        }
        let mode = mode_t(reader.header.protection.permissions)
        if let key = request.key, let given = request.output {
            let output = destination(given, key: key)
            guard let info = reader.entry(forKey: key) else {
                // `imagetable extract` looked first, with a suggestion: this is a key removed since.
                printError(reader.missingKeyError(key, path: request.table).description)
                return 1
            }
            guard extract(info, from: reader, request: request, destination: { png in
                try OutputFiles.write(png, to: output, mode: mode, sparing: request.table)
                return output
            }) else { return 1 }
            if output != "-" { printLine("\(output): \(describe(info, reader, request))") }
            return 0
        }
        return extractAll(reader, into: request.all!, request: request, mode: mode)
    }

    /// Where `-o` writes `key`'s PNG: `given`, or when it names a directory (one that exists,
    /// or any path ending in `/`), a file in it named as `--all` names the key's last
    /// component (`photos/cat.jpg` → `DIR/cat.jpg.png`), as `cp FILE DIR` would.
    static func destination(_ given: String, key: String) -> String {
        guard given != "-" else { return given }
        var st = stat()
        guard given.hasSuffix("/") || (stat(given, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR) else { return given }
        let directory = given.hasSuffix("/") ? given : given + "/"
        return directory + KeyPaths.components(for: key).last!
    }

    private static func extractAll(_ reader: ImageTableReader, into directory: String, request: ExtractJob, mode: mode_t) -> Int32 {
        let directoryMode = mode | ((mode & 0o444) >> 2)  // r → x, so readers may enter
        do {
            try OutputFiles.makeDirectory(directory, mode: directoryMode)
        } catch {
            printError(error.description)
            return 1
        }
        var written = 0, failed = 0
        let listed = reader.entries()
        // Printed once listed: the listing finds the damaged and interrupted records it skips.
        for notice in reader.notices { printError("\(request.table): warning: \(notice.message) [\(notice.kind.rawValue)]") }
        let keys = listed.map { ($0.key, $0.slot) }
        let names = KeyPaths.names(for: keys)
        let caseOnly = KeyPaths.renamedForCaseOnly(keys, named: names)
        for ((info, components), forCase) in zip(zip(listed, names), caseOnly) {
            let plain = info.key + ".png"
            let ok = extract(info, from: reader, request: request) { png in
                let path = try OutputFiles.write(png, below: directory, components: components, mode: mode, directoryMode: directoryMode,
                                                     sparing: request.table)
                if forCase {
                    printError("\(path): note: written for the key \(PrintableText.quoted(info.key)), renamed since another key needs a name "
                               + "that differs from its own only in case, which a file system that ignores case (macOS's, Windows') "
                               + "takes for the same")
                } else if components != KeyPaths.components(for: info.key) {
                    printError("\(path): note: written for the key \(PrintableText.quoted(info.key)), renamed since another key needs its name")
                } else if components.joined(separator: "/") != plain {
                    printError("\(path): note: written for the key \(PrintableText.quoted(info.key)), " + renaming(info.key, in: directory))
                }
                return path
            }
            if ok { written += 1 } else { failed += 1 }
        }
        let entries = written == 1 ? "entry" : "entries"
        // A record skipped as damaged (or one the damaged index does not lead to) is an entry
        // `--all` asked for and could not write.
        let damaged = reader.notices.count(where: \.skipsEntry)
        printLine("\(request.table): wrote \(written) \(entries) as PNG files to \(directory)"
              + (failed > 0 ? "; \(failed) failed" : "") + (damaged > 0 ? "; \(damaged) damaged, skipped" : ""))
        return failed == 0 && damaged == 0 ? 0 : 1
    }

    /// Why `--all` wrote `key` under another name (docs/CLI.md's rules): a path that would leave
    /// the directory or name none (`..`, a leading `/`, empty and `.` components), or else
    /// characters that are percent-encoded (`100%.jpg` was said to be renamed "to stay inside").
    private static func renaming(_ key: String, in directory: String) -> String {
        // By bytes, as ``KeyPaths`` splits.
        let parts = PathBytes.parts(key)
        let reshaped = parts.count > 1 && parts.contains { $0.isEmpty || PathBytes.same($0, ".") || PathBytes.same($0, "..") }
            || [".", "..", ""].contains { PathBytes.same($0, key) }
        return reshaped ? "renamed to stay inside \(directory)" : "renamed with '%', '\\' and control characters percent-encoded"
    }

    /// Converts, encodes and hands one entry to `destination`; reports failures and returns
    /// whether it was written.
    private static func extract(_ info: EntryInfo, from reader: ImageTableReader, request: ExtractJob,
                                destination: ([UInt8]) throws -> String) -> Bool {
        let converted: (Bitmap, Bool)?
        do {
            converted = try reader.withImage(entityUUID: info.entityUUID, sourceUUID: info.sourceUUID) { view in
                let region = request.contentOnly ? view.contentRect : PixelRect(x: 0, y: 0, width: view.width, height: view.height)
                guard region.width > 0, region.height > 0 else { return nil }
                return (EntryBitmaps.bitmap(view, region: region), EntryBitmaps.checksumHolds(view, expected: info.pixelChecksum))
            } ?? nil
        } catch {
            printError("\(error)")
            return false
        }
        guard let (bitmap, checksumHolds) = converted else {
            printError("\(request.table): error: the entry \(PrintableText.quoted(info.key)) (slot \(info.slot)) changed or was "
                       + "removed while it was read, or has an empty content rectangle [entry-unavailable]")
            return false
        }
        if !checksumHolds {
            printError("\(request.table): warning: slot \(info.slot) (\(PrintableText.quoted(info.key))): the pixels do not match "
                       + "their checksum; extracted as they are (run imagetable verify) [pixel-checksum-mismatch]")
        }
        do {
            let png = try PNGEncoder.encode(bitmap, name: request.output ?? info.key)
            let path = try destination(png)
            if request.verbose && request.all != nil { printLine("\(path): \(describe(info, reader, request))") }
            return true
        } catch let error as ImageTableError {
            printError(error.description)
        } catch {
            printError("\(error)")
        }
        return false
    }

    /// `key 'photos/a.jpg', 150x150 RGBA PNG`.
    private static func describe(_ info: EntryInfo, _ reader: ImageTableReader, _ request: ExtractJob) -> String {
        let layout = reader.layout
        let size = request.contentOnly ? "\(info.contentRect.width)x\(info.contentRect.height)" : "\(layout.width)x\(layout.height)"
        let kind = ["", "grey", "", "RGB", "RGBA"][EntryBitmaps.bands(for: layout.style)]
        return "key \(PrintableText.quoted(info.key)), \(size) \(kind) PNG"
    }
}
