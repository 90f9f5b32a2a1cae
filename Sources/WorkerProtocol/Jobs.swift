/// `imagetable extract`'s pixel half: entries of a table as PNG files.
public struct ExtractJob: Sendable, Equatable {
    /// The table to read.
    public var table: String
    /// One entry's key, written to ``output``; `nil` with ``all``.
    public var key: String?
    /// The PNG file for ``key``; `-` for standard output.
    public var output: String?
    /// Every entry into this directory, named after their keys.
    public var all: String?
    /// Only the entries' content rectangles.
    public var contentOnly: Bool
    /// A line per file written, with ``all``.
    public var verbose: Bool

    /// Creates a job.
    ///
    /// - Parameters:
    ///   - table: the table.
    ///   - key: the key, with `output`.
    ///   - output: the file, with `key`.
    ///   - all: the directory for every entry.
    ///   - contentOnly: content rectangles only.
    ///   - verbose: a line per file.
    public init(table: String, key: String? = nil, output: String? = nil, all: String? = nil, contentOnly: Bool = false,
                verbose: Bool = false) {
        self.table = table
        self.key = key
        self.output = output
        self.all = all
        self.contentOnly = contentOnly
        self.verbose = verbose
    }
}

/// `imagetable preview`'s pixel half: a contact sheet of a table's entries as a PNG.
public struct PreviewJob: Sendable, Equatable {
    /// The table to read.
    public var table: String
    /// The PNG file; `-` for standard output.
    public var output: String
    /// Columns of tiles; chosen from the count when `nil`.
    public var columns: Int?
    /// The longest side of a tile in pixels.
    public var tileSize: Int
    /// The most entries shown.
    public var limit: Int
    /// `key`, `slot` or `recency`.
    public var order: String
    /// Whether tiles have their keys as captions.
    public var captions: Bool

    /// Creates a job.
    ///
    /// - Parameters:
    ///   - table: the table.
    ///   - output: the PNG file.
    ///   - columns: columns of tiles.
    ///   - tileSize: tile size in pixels.
    ///   - limit: the most entries shown.
    ///   - order: the order of the entries.
    ///   - captions: whether to caption tiles.
    public init(table: String, output: String, columns: Int? = nil, tileSize: Int = 160, limit: Int = 500, order: String = "key",
                captions: Bool = true) {
        self.table = table
        self.output = output
        self.columns = columns
        self.tileSize = tileSize
        self.limit = limit
        self.order = order
        self.captions = captions
    }
}

/// The end of an extract or preview job: what the command exits with. The job's own report went
/// to the standard output and error the worker shares with its command.
public struct Finished: Sendable, Equatable {
    /// The exit status: 0 done, 1 a table, entry or output failed.
    public var status: Int32

    /// Creates the end of a job.
    ///
    /// - Parameter status: the exit status.
    public init(status: Int32) {
        self.status = status
    }
}
