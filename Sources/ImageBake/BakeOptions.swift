import Foundation
import ImageTableCore
import WorkerProtocol

/// How to run a bake.
public struct BakeOptions: Sendable {
    /// Worker processes decoding at once; defaults to the number of cores.
    public var jobs: Int
    /// The `imagetable-worker` executable, which bakes talk to over the worker protocol.
    public var workerExecutable: String
    /// The limits and strictness every source is decoded with; images with more pixels than
    /// `maxPixels` are refused from their header, before decoding.
    public var decoding: DecodeOptions
    /// Seconds one source may take before its worker is stopped and the source failed.
    public var timeout: Double
    /// The most memory of its own (heap and private mappings: `RLIMIT_DATA`) each worker may
    /// have, in bytes; `nil` for no limit. A source that needs more fails as `decode-failed`
    /// (libvips: out of memory) instead of taking the machine's memory: a 1 MB PNG of
    /// 1,000,000 × 268 pixels took 4.7 GB to crop to a square. 4 GiB by default: room for an
    /// interlaced 16-bit PNG of 16383² (2.2 GB, the most any ordinary image within the default
    /// ``DecodeOptions/maxPixels`` was measured to need), not for such strips. Linux only
    /// (`RLIMIT_DATA`; macOS does not count large allocations against it).
    public var workerMemoryLimit: Int?

    /// The default ``workerMemoryLimit``: 4 GiB.
    public static let defaultWorkerMemoryLimit = 4 << 30
    /// Stop at the first failed source, committing nothing for it.
    public var strict: Bool
    /// Plan only: fingerprint and compare, touch no table and no state.
    public var dryRun: Bool
    /// Delete entries whose source is gone (their slots are reused first).
    public var prune: Bool
    /// Read and fingerprint every source again, trusting no stat the bake state remembers, and
    /// decode again the sources whose decode failed at an earlier bake.
    public var rehash: Bool
    /// Leave sources modified less than this many seconds ago for a later bake (their previous
    /// entries stay): for directories that writers fill slowly and in place. `nil`: bake all.
    /// Taken between 0 and ``maximumMinAge`` (NaN as 0).
    public var minAge: Double?

    /// The largest ``minAge`` a bake takes, 100 years: more defers every source all the same.
    public static let maximumMinAge: Double = 100 * 365 * 86_400
    /// Follow symbolic links in source directories that lead outside them.
    public var allowOutsidePaths: Bool
    /// Seconds to wait for another process writing a table.
    public var lockTimeout: Double
    /// Flush pixels before publishing (`flushed`), or rely on surviving process crashes only.
    public var durability: ImageTableWriter.Durability
    /// Entries published per flush, per table (bounded by a quarter of the table's capacity).
    public var publishBatch: Int
    /// The most sources sent to each worker ahead of its answers. The next sources wait in the
    /// worker's pipe while the bake places the last one, so the worker does not idle meanwhile.
    /// Fewer where tables are small (each outstanding source holds a slot in each of its tables:
    /// at most a quarter of a table's slots are held so), where formats are large (each also has
    /// shared scratch memory: 32 MiB for all workers at most), where requests would fill half the
    /// pipe, and one with ``strict``; 1 sends one source at a time.
    public var outstandingPerWorker: Int
    /// Files the bake state remembers before it commits them, while the diff reads sources and
    /// during the run: what it learns is held in memory this many at a time rather than all
    /// until the end.
    public var stateBatch: Int
    /// Bake only the sources of one shard (`--shard K/N`), into an output directory of its own;
    /// `nil` bakes every source.
    public var shard: ShardSelection?
    /// Called with progress, at most every tenth of a second and once at the end.
    public var progress: (@Sendable (BakeProgress) -> Void)?
    /// Called with each source a worker fails to bake, as it fails, from the thread that saw it:
    /// for a display that shows failures while the bake runs. They are in the summary too.
    public var failed: (@Sendable (SourceFailure) -> Void)?
    /// What may stop the render part-way, between two sources (the command's SIGINT and
    /// SIGTERM); `nil` for nothing.
    public var interruption: BakeInterruption?

    /// Options with the documented defaults.
    ///
    /// - Parameter workerExecutable: the `imagetable-worker` executable.
    public init(workerExecutable: String) {
        self.workerExecutable = workerExecutable
        jobs = ProcessInfo.processInfo.activeProcessorCount
        decoding = DecodeOptions()
        timeout = 120
        workerMemoryLimit = Self.defaultWorkerMemoryLimit
        strict = false
        dryRun = false
        prune = false
        rehash = false
        minAge = nil
        allowOutsidePaths = false
        lockTimeout = 10
        durability = .flushed
        publishBatch = 32
        outstandingPerWorker = 16
        stateBatch = 8192
        shard = nil
        progress = nil
        failed = nil
        interruption = nil
    }

    /// The decode limits for a family's sources, as the worker protocol carries them: the
    /// family's `failOn`, the bake's limits.
    func limits(failOn: FailLevel) -> SourceLimits {
        SourceLimits(maxPixels: decoding.maxPixels, maxSourceBytes: decoding.maxSourceBytes, failOn: failOn.rawValue)
    }
}

/// A request to stop a bake part-way, asked before each source is sent to a worker.
///
/// A stopped bake is one that stopped on an error once it had begun: the sources already sent
/// are finished and published, the bake state is committed, and the summary says what was done
/// (``BakeSummary/stoppedBy`` is the interruption's error). The next bake goes on from there.
public struct BakeInterruption: Sendable {
    /// Called when the render begins: from here the interruption is honoured.
    public var begin: @Sendable () -> Void
    /// Called when the render ends (also after an interruption).
    public var end: @Sendable () -> Void
    /// The error to stop with, once the interruption is asked for; `nil` until then.
    public var requested: @Sendable () -> ImageTableError?

    /// Creates an interruption.
    ///
    /// - Parameters:
    ///   - begin: called when the render begins.
    ///   - end: called when it ends.
    ///   - requested: the error to stop with, or `nil` to go on.
    public init(begin: @escaping @Sendable () -> Void, end: @escaping @Sendable () -> Void,
                requested: @escaping @Sendable () -> ImageTableError?) {
        self.begin = begin
        self.end = end
        self.requested = requested
    }
}
