extension ImageTableError {
    /// The stable codes; the raw values are what CLI and JSON output show (`docs/CLI.md`).
    public enum Code: String, Sendable, CaseIterable, Codable {
        // MARK: Files and system calls

        /// No such file, or a part of the path is not a directory.
        case notFound = "not-found"
        /// This user may not read or write the file.
        case permissionDenied = "permission-denied"
        /// The path is a directory where a file was expected.
        case isADirectory = "is-a-directory"
        /// The path is a file (or something else) where a directory was expected: an output
        /// directory named like an existing file.
        case notADirectory = "not-a-directory"
        /// The disk is full or a file size limit was hit.
        case noSpace = "no-space"
        /// Another system call failed; the message names it.
        case io

        // MARK: Tables

        /// The requested layout is out of range or overflows.
        case invalidLayout = "invalid-layout"
        /// An argument (a name, a key, a rectangle, a format) is invalid.
        case invalidArgument = "invalid-argument"
        /// The file is not an image table at all (wrong magic, too short, not a regular file).
        case notATable = "not-a-table"
        /// The header or an index record is damaged or inconsistent.
        case corrupt
        /// The table was written by a newer, unknown format version.
        case unsupportedVersion = "unsupported-version"
        /// The file's permissions, type or link count make it unsafe to use.
        case insecureFile = "insecure-file"
        /// Another process holds the table's writer lock.
        case locked
        /// The entry changed under a reader too many times in a row, or every slot is reserved.
        case busy
        /// A write that may not evict found the table full.
        case full
        /// The table handle was closed, or opened read-only and asked to write; or a bake's output
        /// directory is on a read-only file system and the bake would write there.
        case notWritable = "not-writable"
        /// A table was rebuilt or changed under a worker rendering into it.
        case tableChanged = "table-changed"

        // MARK: Verifying tables

        /// An entry's pixels differ from the CRC-32 in its record.
        case pixelChecksumMismatch = "pixel-checksum-mismatch"
        /// An index record is unsound.
        case damagedRecord = "damaged-record"
        /// A write was interrupted (its record's generation is odd).
        case interruptedWrite = "interrupted-write"
        /// The hash index does not lead to an entry (format version 2): readers miss it until a
        /// writer, or `verify --repair`, rebuilds the index.
        case damagedIndex = "damaged-index"
        /// The header's live entry count disagrees with the records (format version 2), as a
        /// writer stopped between a record and the count leaves it: readers report the wrong
        /// count until a writer, or `verify --repair`, counts again.
        case staleEntryCount = "stale-entry-count"

        // MARK: Sources

        /// The source could not be opened or read: missing, a directory, a FIFO, an I/O error.
        case unreadable
        /// The source has no bytes at all.
        case empty
        /// The source's size in bytes is over the limit.
        case sourceTooLarge = "source-too-large"
        /// No allowed loader recognises the bytes: not an image, or a blocked format.
        case unsupportedFormat = "unsupported-format"
        /// The header declares more pixels than the limit; refused before decoding.
        case tooManyPixels = "too-many-pixels"
        /// The image data ends before the image does.
        case truncated
        /// The data is corrupt or cannot be decoded for another reason.
        case decodeFailed = "decode-failed"
        /// Resizing, cropping or converting the decoded image failed.
        case renderFailed = "render-failed"
        /// The source's path is longer than a table key may be.
        case keyTooLong = "key-too-long"
        /// A symbolic link leads outside the sources directory.
        case outsideSources = "outside-sources"
        /// The file's name is not UTF-8, so it cannot be a key; its path is printed with each
        /// byte that is not part of a UTF-8 character as `\xFF`.
        case nameNotUTF8 = "name-not-utf8"
        /// The file's name is another file's but for its Unicode normalization (`é` as one code
        /// point or as `e` and a combining accent): two keys that look the same and that Swift's
        /// strings compare as equal. The other file (the one in NFC) is baked; this one is not
        /// until one of them is renamed.
        case ambiguousName = "ambiguous-name"
        /// The file changed while it was read (its stat differed before and after); nothing was
        /// baked from it, and the next bake reads it again.
        case changedWhileReading = "changed-while-reading"
        /// The file is not an image by its first bytes; skipped with a warning.
        case notAnImage = "not-an-image"
        /// A FIFO, device or socket (or a link to one) that the patterns select; skipped with a
        /// warning, never opened.
        case notARegularFile = "not-a-regular-file"
        /// A hidden image file (its name starts with `.`) that the patterns would take but for
        /// the dot; skipped with a warning.
        case hiddenFile = "hidden-file"
        /// An image file the patterns would take if its extension were spelt another way
        /// (`IMG.JPG` against `**/*.jpg`); skipped with a warning.
        case extensionSpelling = "extension-spelling"

        // MARK: Workers

        /// The worker process died while working on a source.
        case workerCrashed = "worker-crashed"
        /// A source took longer than the timeout; its worker was stopped.
        case timedOut = "timed-out"
        /// `imagetable-worker` could not be started, or kept failing before doing anything.
        case workerUnavailable = "worker-unavailable"
        /// The worker speaks another protocol or rendering version than the command that started it.
        case workerMismatch = "worker-mismatch"
        /// A message between a command and its worker broke the protocol.
        case protocolError = "protocol-error"
        /// libvips could not be started.
        case libraryUnavailable = "library-unavailable"

        // MARK: Bakes and tools

        /// The manifest has errors (its diagnostics say which).
        case invalidManifest = "invalid-manifest"
        /// A family's sources directory is missing or unreadable.
        case sourcesUnreadable = "sources-unreadable"
        /// `--strict`: a source failed, so the bake stopped.
        case sourceFailed = "source-failed"
        /// The table has no entry with that key.
        case noSuchKey = "no-such-key"
        /// The entry changed or vanished while it was read.
        case entryUnavailable = "entry-unavailable"
        /// An output file or directory could not be written.
        case outputFailed = "output-failed"
        /// A preview sheet would have too many pixels.
        case sheetTooLarge = "sheet-too-large"
        /// Export: a table was made with other parameters than the manifest gives it (the next
        /// bake rebuilds it), so it is not what the manifest describes.
        case staleTable = "stale-table"
        /// Export: the destination exists and is not an earlier export, so it is not replaced.
        case notAnExport = "not-an-export"
        /// Shards that do not go together: a bake's output directory holds another shard (or an
        /// unsharded bake), or a merge's shards were split into different numbers, or one is
        /// given twice or missing.
        case shardMismatch = "shard-mismatch"
        /// A table another manifest bakes too (two manifests sharing an output directory with
        /// formats of the same file name): each bake would rebuild or prune the other's entries.
        case sharedTable = "shared-table"
        /// Tables that were not baked from the same manifest: a merge's inputs differ in their
        /// tables or in a table's parameters.
        case manifestMismatch = "manifest-mismatch"

        // MARK: The runtime cache

        /// A request names no configured format.
        case unknownFormat = "unknown-format"
        /// A request or configuration that cannot work: a key too long, no formats, two formats
        /// with one identifier, a render target of the wrong size.
        case invalidRequest = "invalid-request"
        /// The source provider threw; ``ImageTableError/cause`` holds its error.
        case sourceUnavailable = "source-unavailable"
        /// The calling task was cancelled while it waited.
        case cancelled
        /// A bake was stopped by SIGINT or SIGTERM between two sources: what it baked is kept.
        case interrupted
        /// The image was stored but evicted by other writes three times before it could be returned.
        case notStored = "not-stored"
    }
}
