import Foundation
import ImageTableCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the scan makes of each file it meets: a source, or the problem it reports.
extension SourceScanner {
    /// Takes a regular file the patterns select as a source, or says why not (hidden, a key
    /// too long).
    func consider(key: String, root: String, stat: FileStat, into sources: inout [SourceFile], _ skipped: inout [ImageTableError]) {
        var path: String { root + "/" + key }
        guard selects(key) else {
            if selectsHidden?(key) == true {
                skipped.append(ImageTableError(.hiddenFile, "the name starts with '.', so the patterns' wildcards do not match it "
                                               + "(hidden files are skipped); to take it, add a pattern that spells the dot, "
                                               + "such as '**/.*'", path: path, key: key))
            } else if let taken = otherSpelling?(key) {
                let written = key[key.index(after: key.lastIndex(of: ".")!)...]
                let wanted = taken[taken.index(after: taken.lastIndex(of: ".")!)...]
                skipped.append(ImageTableError(.extensionSpelling, "the patterns take '*.\(wanted)' but not '*.\(written)' (they match "
                                               + "case and spelling exactly); to take it, spell both in the include pattern, as in "
                                               + "'*.{\(wanted),\(written)}'", path: path, key: key))
            }
            return
        }
        guard key.utf8.count <= TableLimits.maxKeyBytes else {
            skipped.append(ImageTableError(.keyTooLong, "path is \(key.utf8.count) bytes; keys are limited to \(TableLimits.maxKeyBytes)",
                                           path: path, key: key))
            return
        }
        sources.append(SourceFile(key: key, root: root, stat: stat))
    }

    /// The image files below `excludedKey` (the output directory, which is not scanned) that the
    /// patterns select: the first 10 keys, in listing order, and how many, up to 10,000 files
    /// looked at (an output directory holds tables, their locks and the bake state, none of them
    /// named like an image; one that holds images was probably meant as sources).
    ///
    /// - Parameters:
    ///   - excludedKey: the excluded directory's key below `root`.
    ///   - root: the resolved sources directory.
    /// - Returns: the keys, their count, and whether every file was looked at.
    func selectedImages(below excludedKey: String, root: String) -> (keys: [String], count: Int, complete: Bool) {
        var keys: [String] = [], count = 0, looked = 0
        guard let walk = FileManager.default.enumerator(atPath: root + "/" + excludedKey) else { return ([], 0, true) }
        while let relative = walk.nextObject() as? String {
            guard looked < 10_000 else { return (keys, count, false) }
            looked += 1
            let key = excludedKey + "/" + relative
            guard namedLikeImage(key) else { continue }
            // A link to an image would be baked where the scan reached it, so it counts too.
            switch walk.fileAttributes?[.type] as? FileAttributeType {
            case .typeRegular?: break
            case .typeSymbolicLink?:
                var st = stat()
                guard stat(root + "/" + key, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { continue }
            default: continue
            }
            count += 1
            if keys.count < 10 { keys.append(key) }
        }
        return (keys, count, true)
    }

    /// Whether the patterns select `key` and it has an image's extension: a directory so named
    /// is reported, since whoever named it may have meant it as a source.
    func namedLikeImage(_ key: String) -> Bool {
        selects(key) && GlobPattern.images.matches(key)
    }

    /// The failure for an entry whose name is not UTF-8 (a key must be), when the patterns
    /// select its printable form, or when it is a directory: nothing under one is scanned.
    func notUTF8(_ name: [UInt8], printable: String, in dir: String, relative: String) -> (error: ImageTableError, isDirectory: Bool)? {
        let key = relative.isEmpty ? printable : "\(relative)/\(printable)"
        let isDirectory = DirectoryListing.entryStat(name, in: dir).map { $0.st_mode & S_IFMT == S_IFDIR } ?? false
        guard isDirectory || selects(key) else { return nil }
        let what = isDirectory ? "a directory whose name is not UTF-8: nothing in it is scanned"
            : "the name is not UTF-8, so it cannot be a key"
        return (ImageTableError(.nameNotUTF8, what + "; rename it (bytes outside UTF-8 are shown as \\xFF)",
                                path: "\(dir)/\(printable)", key: key), isDirectory)
    }

    /// The warning for a FIFO, device or socket that the patterns select: never opened, since a
    /// read could wait forever (a FIFO) or never end (`/dev/zero`).
    static func special(_ st: stat, path: String, key: String, through target: String?) -> ImageTableError {
        let kind = switch st.st_mode & S_IFMT {
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
        let what = target.map { "a symbolic link to \(kind) (\($0))" } ?? kind
        return ImageTableError(.notARegularFile, "\(what), not a regular file; skipped without opening it", path: path, key: key)
    }
}
