import Foundation
import ImageTableCore

/// How to run a bake.
public struct BakeOptions: Sendable {
    /// Worker processes decoding at once; defaults to the number of cores.
    public var jobs: Int
    /// The worker command: the `imagetable-worker` executable and `bake`; the bake appends the
    /// options the workers need (such as `--max-pixels`).
    public var workerCommand: [String]
    /// Images with more pixels than this are refused from their header, before decoding.
    public var maxPixels: Int
    /// Seconds one source may take before its worker is stopped and the source failed.
    public var timeout: Double
    /// Stop at the first failed source, committing nothing for it.
    public var strict: Bool
    /// Plan only: fingerprint and compare, touch no table.
    public var dryRun: Bool
    /// Follow symbolic links in source directories that lead outside them.
    public var allowOutsidePaths: Bool
    /// Seconds to wait for another process writing a table.
    public var lockTimeout: Double
    /// Flush pixels before publishing (`flushed`), or rely on surviving process crashes only.
    public var durability: ImageTableWriter.Durability
    /// Entries published per flush, per table (bounded by a quarter of the table's capacity).
    public var publishBatch: Int
    /// Called with progress, at most every tenth of a second and once at the end.
    public var progress: (@Sendable (BakeProgress) -> Void)?

    /// Options with the documented defaults.
    ///
    /// - Parameter workerCommand: the `imagetable-worker` executable followed by `bake`.
    public init(workerCommand: [String]) {
        self.workerCommand = workerCommand
        jobs = ProcessInfo.processInfo.activeProcessorCount
        maxPixels = DecodeOptions.defaultMaxPixels
        timeout = 120
        strict = false
        dryRun = false
        allowOutsidePaths = false
        lockTimeout = 10
        durability = .flushed
        publishBatch = 32
        progress = nil
    }

    /// The full command a worker is started with.
    var workerInvocation: [String] { workerCommand + ["--max-pixels", "\(maxPixels)"] }
}
