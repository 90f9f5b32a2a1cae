/// The first message each way: who is talking, which versions its build speaks, and (from a
/// bake) the tables its render jobs name.
///
/// A command starts a worker and sends its own ``Hello``; the worker answers with its own. Either
/// side refuses the other when ``protocolVersion`` or ``renderingVersion`` differ, so a worker
/// left from another build can never draw old-version pixels into a table labelled new.
public struct Hello: Sendable, Equatable {
    /// ``WorkerProtocolVersion/current`` of the sender's build.
    public var protocolVersion: Int
    /// The rendering version compiled into the sender's build (`TableFormat.pipelineRenderingVersion`).
    public var renderingVersion: Int
    /// The sender's executable, for messages naming both sides.
    public var executable: String
    /// The tables a bake's render jobs may name, which they name by position in this list.
    ///
    /// Sent once per worker, so that a job carries a few numbers per member rather than its
    /// format's parameter text and its table's path (1.5 KB for four members, most of the
    /// protocol's cost per source). Empty in a worker's greeting, and from `extract` and
    /// `preview`, whose jobs name their tables themselves.
    public var tables: [CatalogueTable]

    /// Creates a greeting.
    ///
    /// - Parameters:
    ///   - protocolVersion: the protocol version of the sender's build.
    ///   - renderingVersion: the rendering version of the sender's build.
    ///   - executable: the sender's executable path.
    ///   - tables: the tables render jobs name by position; empty when there are none.
    public init(protocolVersion: Int = WorkerProtocolVersion.current, renderingVersion: Int, executable: String,
                tables: [CatalogueTable] = []) {
        self.protocolVersion = protocolVersion
        self.renderingVersion = renderingVersion
        self.executable = executable
        self.tables = tables
    }
}

/// One table of a bake, as its handshake describes it to a worker.
public struct CatalogueTable: Sendable, Equatable {
    /// The table file.
    public var path: String
    /// Its format: the canonical parameter text (`TableFormat.canonicalParameters`), the very
    /// text the table's parameter hash is made of, which the worker parses back.
    public var format: String

    /// Creates a table's description.
    ///
    /// - Parameters:
    ///   - path: the table file.
    ///   - format: its format's canonical parameter text.
    public init(path: String, format: String) {
        self.path = path
        self.format = format
    }
}

/// The protocol's own version.
public enum WorkerProtocolVersion {
    /// Bumped whenever a message changes shape or meaning.
    public static let current = 3
}

/// Where one member's pixels go.
public enum Destination: Sendable, Equatable {
    /// A slot the command has reserved in the member's table: the worker checks that the table
    /// still has the member's parameter hash and that the slot still carries `generation`, then
    /// renders into it.
    case slot(slot: Int, generation: UInt64)
    /// Bytes of the scratch memory shared at start-up, from `offset`, with the table's row size:
    /// for members whose table had no free slot, placed by the command once the source decoded.
    case scratch(offset: Int)
}

/// One format to render a source in: a table of the handshake's, and where the pixels go.
public struct RenderMember: Sendable, Equatable {
    /// The member's table: its position in the handshake's ``Hello/tables``, whose format the
    /// member is drawn in.
    public var table: Int
    /// Where the pixels go.
    public var destination: Destination

    /// Creates a member.
    ///
    /// - Parameters:
    ///   - table: the table's position in the handshake's tables.
    ///   - destination: where its pixels go.
    public init(table: Int, destination: Destination) {
        self.table = table
        self.destination = destination
    }
}

/// How a worker treats an untrusted source: the decode limits and strictness, sent with each job.
public struct SourceLimits: Sendable, Equatable {
    /// The most pixels a source's header may declare.
    public var maxPixels: Int
    /// The most bytes a source may have.
    public var maxSourceBytes: Int
    /// libvips' `fail_on`: `truncated`, `error` or `warning`.
    public var failOn: String

    /// Creates limits.
    ///
    /// - Parameters:
    ///   - maxPixels: the pixel limit.
    ///   - maxSourceBytes: the byte limit.
    ///   - failOn: the decoder strictness.
    public init(maxPixels: Int, maxSourceBytes: Int, failOn: String) {
        self.maxPixels = maxPixels
        self.maxSourceBytes = maxSourceBytes
        self.failOn = failOn
    }
}

/// Decode one source, once, into several members.
public struct RenderJob: Sendable, Equatable {
    /// The source file.
    public var source: String
    /// The formats to render, with where each goes.
    public var members: [RenderMember]
    /// The decode limits and strictness.
    public var limits: SourceLimits
    /// The family's other tables (positions in the handshake's ``Hello/tables``): not drawn,
    /// but their formats are planned with the members', so that the decode and its
    /// intermediates, and thus every member's pixels, are the same whichever of the family's
    /// tables a bake happens to fill.
    public var planned: [Int]

    /// Creates a job.
    ///
    /// - Parameters:
    ///   - source: the source file.
    ///   - members: the formats and their destinations.
    ///   - limits: the decode limits.
    ///   - planned: the family's tables that are not drawn.
    public init(source: String, members: [RenderMember], limits: SourceLimits, planned: [Int] = []) {
        self.source = source
        self.members = members
        self.limits = limits
        self.planned = planned
    }
}

/// A rectangle of pixels, as the wire carries it.
public struct WireRect: Sendable, Equatable {
    /// Left, top, width and height in pixels.
    public var x, y, width, height: Int

    /// Creates a rectangle.
    ///
    /// - Parameters:
    ///   - x: left edge.
    ///   - y: top edge.
    ///   - width: width.
    ///   - height: height.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
}

/// A source file's stat as the worker saw it, the same before and after its one read.
public struct SourceStat: Sendable, Equatable {
    /// Device, inode and size in bytes.
    public var device, inode: UInt64
    /// Size in bytes.
    public var size: Int
    /// Modification and status change times, nanoseconds since 1970.
    public var modifiedNs, changedNs: Int64
    /// When the read started, nanoseconds since 1970.
    public var readNs: Int64

    /// Creates a stat.
    ///
    /// - Parameters:
    ///   - device: the device.
    ///   - inode: the inode.
    ///   - size: the size.
    ///   - modifiedNs: the modification time.
    ///   - changedNs: the status change time.
    ///   - readNs: when the read started.
    public init(device: UInt64, inode: UInt64, size: Int, modifiedNs: Int64, changedNs: Int64, readNs: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modifiedNs = modifiedNs
        self.changedNs = changedNs
        self.readNs = readNs
    }
}

/// What a render job produced: every member's pixels are in its destination, drawn from the
/// bytes whose fingerprint this is (the worker reads each source once and fingerprints exactly
/// what it decodes).
public struct Rendered: Sendable, Equatable {
    /// Each member's content rectangle, in member order.
    public var contentRects: [WireRect]
    /// How many times the job decoded the source (1).
    public var decodes: Int
    /// The source UUID (`SourceFingerprint`) of the bytes decoded.
    public var fingerprint: String
    /// The file's stat during the read.
    public var stat: SourceStat
    /// What the decoder warned about, in order.
    public var warnings: [String]
    /// Each member's CRC-32 of its image bytes as the worker left them (row padding included),
    /// in member order: the bake publishes it instead of reading every slot back. Empty (or
    /// absent on the wire) makes the bake compute them.
    public var pixelChecksums: [UInt32]

    /// Creates a result.
    ///
    /// - Parameters:
    ///   - contentRects: one per member.
    ///   - decodes: decodes the job cost.
    ///   - fingerprint: the source UUID of the bytes decoded.
    ///   - stat: the file's stat during the read.
    ///   - warnings: the decoder's warnings.
    ///   - pixelChecksums: each member's CRC-32 of its image bytes.
    public init(contentRects: [WireRect], decodes: Int, fingerprint: String, stat: SourceStat, warnings: [String] = [],
                pixelChecksums: [UInt32]) {
        self.contentRects = contentRects
        self.pixelChecksums = pixelChecksums
        self.decodes = decodes
        self.fingerprint = fingerprint
        self.stat = stat
        self.warnings = warnings
    }
}
