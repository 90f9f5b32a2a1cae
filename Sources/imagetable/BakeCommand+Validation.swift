import ArgumentParser
import Foundation
import ImageBake
import ImageManifest
import ImageTableCore

/// `imagetable bake`'s options checked before the manifest is read: values out of range, and
/// combinations in which one option would be dropped without a word, are bad usage (64).
extension BakeCommand {
    /// Checks the options, as ArgumentParser asks before ``run()``.
    ///
    /// - Throws: a `ValidationError` naming the option and what it takes.
    func validate() throws {
        try ManifestArgument.refuseStandardInput(manifest, command: "bake")
        try RootArgument.check(root)
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1.") }
        guard maxPixels > 0 else { throw ValidationError("--max-pixels must be positive.") }
        if let maxSourceSize {
            let bytes = ByteSize.parse(maxSourceSize)
            if bytes == 0 { throw ValidationError("--max-source-size must be more than 0 bytes.") }
            if (bytes ?? 0) < 1 {
                throw ValidationError("--max-source-size must be a size such as 50MB or 1GiB (units B, kB, MB, GB, TB, KiB, MiB, GiB, TiB), not '\(maxSourceSize)'.")
            }
        }
        guard timeout > 0 else { throw ValidationError("--timeout must be a positive number of seconds.") }
        if let maxWorkerMemory, maxWorkerMemory != "none" {
            // A worker holds its source whole while it decodes it, and needs some 128 MiB more
            // (libraries, thread stacks, libvips' buffers): less fails sources that are sound.
            let source = maxSourceSize.flatMap(ByteSize.parse) ?? DecodeOptions.defaultMaxSourceBytes
            let least = max(256 << 20, source + (128 << 20))
            guard let bytes = ByteSize.parse(maxWorkerMemory), bytes >= least else {
                throw ValidationError("--max-worker-memory must be 'none' or a size of at least \(ByteSize.describe(least)) "
                                      + "(--max-source-size plus 128 MiB, 256 MiB at least), such as 2GiB, not '\(maxWorkerMemory)'.")
            }
        }
        guard lockTimeout >= 0 else { throw ValidationError("--lock-timeout must be a number of seconds, 0 or more.") }
        if let minAge, !(0...BakeOptions.maximumMinAge).contains(minAge) {
            throw ValidationError("--min-age must be a number of seconds from 0 to \(Int(BakeOptions.maximumMinAge)) (100 years).")
        }
        if let output, output.isEmpty { throw ValidationError("--output needs a directory.") }
        // Each would be dropped without a word: --list prints its listing, not the plan's summary
        // nor annotations.
        if list, dryRun {
            throw ValidationError("--list and --dry-run cannot be combined: --list prints each source's state, --dry-run the plan's summary; neither touches a table.")
        }
        if list, format == .github { throw ValidationError("--list prints text or json, not github annotations.") }
        if list, prune { throw ValidationError("--list touches nothing, so it prunes nothing; --dry-run --prune shows what --prune would delete.") }
        if let shard {
            // It takes a value that starts with '-' (to say '-1/3' is out of range), so a missing
            // value takes the next option: said as such, not as that option being missing.
            if shard.hasPrefix("--") || shard == "-j" {
                throw ValidationError("--shard needs a value, K/N (such as 0/4) or auto; '\(shard)' is an option.")
            }
            guard output != nil else {
                throw ValidationError("--shard needs --output: each shard bakes into a directory of its own, which `imagetable merge` combines.")
            }
            do {
                _ = try ShardSelection.parse(shard, environment: ProcessInfo.processInfo.environment)
            } catch {
                throw ValidationError("--shard \(shard): \(error.message).")
            }
        }
    }
}
