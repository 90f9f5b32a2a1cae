import Foundation
import ImageTableCore

/// One shard of a bake split `count` ways: the sources whose key falls in shard `index`
/// (``KeyShard``), baked on their own into their own output directory (`docs/SCALE.md`).
public struct ShardSelection: Sendable, Equatable, CustomStringConvertible {
    /// The shard, `0 ..< count`.
    public let index: Int
    /// How many shards the sources are split into.
    public let count: Int

    /// The most shards a bake may be split into.
    public static let maxCount = 1_000_000

    /// A shard.
    ///
    /// - Parameters:
    ///   - index: the shard, `0 ..< count`.
    ///   - count: how many there are, 1 … ``maxCount``.
    /// - Throws: ``ImageTableError`` `invalidArgument` when out of range.
    public init(index: Int, count: Int) throws(ImageTableError) {
        guard (1...Self.maxCount).contains(count), (0..<count).contains(index) else {
            throw ImageTableError(.invalidArgument, "shard \(index)/\(count) is not a shard: K/N needs 0 ≤ K < N ≤ \(Self.maxCount)")
        }
        self.index = index
        self.count = count
    }

    /// `K/N`.
    public var description: String { "\(index)/\(count)" }

    /// Whether the source with `key` belongs to this shard.
    ///
    /// - Parameter key: the source's key.
    public func contains(key: String) -> Bool { count == 1 || KeyShard.shard(of: key, count: count) == index }

    /// Reads `--shard`: `K/N`, or `auto` / `auto/N` to take `K` (and `N`) from a job engine's
    /// environment (`docs/SCALE.md`, "Which shard am I"):
    ///
    /// 1. `JOB_COMPLETION_INDEX` (a Kubernetes Indexed Job) is `K`; `N` must be given as `auto/N`
    ///    (the Job's `completions`), since Kubernetes does not export it.
    /// 2. Otherwise `SLURM_ARRAY_TASK_ID` (a Slurm job array) is `K`, and `N` is `auto/N`, or
    ///    `SLURM_ARRAY_TASK_COUNT` when the array is exactly `0 ..< N` (its minimum 0, step 1,
    ///    maximum `N − 1`): a part of an array, or a task resubmitted alone, needs `auto/N`.
    /// 3. Otherwise `auto` is an error.
    ///
    /// - Parameters:
    ///   - text: the option's value.
    ///   - environment: the process's environment.
    /// - Throws: ``ImageTableError`` `invalidArgument`, saying what is wrong.
    public static func parse(_ text: String, environment: [String: String]) throws(ImageTableError) -> ShardSelection {
        func number(_ s: Substring, _ what: String) throws(ImageTableError) -> Int {
            guard !s.isEmpty, s.allSatisfy(\.isASCII), s.allSatisfy(\.isNumber), let n = Int(s) else {
                throw ImageTableError(.invalidArgument, "\(what) '\(s)' is not a whole number")
            }
            return n
        }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { throw ImageTableError(.invalidArgument, "'\(text)' is not K/N, auto or auto/N") }
        let given = parts.count == 2 ? try number(parts[1], "the shard count") : nil
        guard parts[0] == "auto" else {
            guard let given else { throw ImageTableError(.invalidArgument, "'\(text)' is not K/N, auto or auto/N") }
            return try ShardSelection(index: number(parts[0], "the shard"), count: given)
        }
        if let index = environment["JOB_COMPLETION_INDEX"] {
            guard let given else {
                throw ImageTableError(.invalidArgument, "JOB_COMPLETION_INDEX gives the shard but not how many there are: "
                                      + "write --shard auto/N, N being the Job's completions")
            }
            return try ShardSelection(index: number(Substring(index), "JOB_COMPLETION_INDEX"), count: given)
        }
        if let id = environment["SLURM_ARRAY_TASK_ID"] {
            // The task's index is the shard: a task resubmitted alone (`--array=7`) is shard 7
            // still, though its array has one task. So `N` comes from the option; the array's own
            // count only when the array is exactly 0 … N−1, of more than one task: task 0
            // resubmitted alone is the array 0 … 0, and took it for a split in one, baking
            // every source.
            let k = try number(Substring(id), "SLURM_ARRAY_TASK_ID")
            if let given { return try ShardSelection(index: k, count: given) }
            func variable(_ name: String) throws(ImageTableError) -> Int? {
                try environment[name].map { (s: String) throws(ImageTableError) in try number(Substring(s), name) }
            }
            let low = try variable("SLURM_ARRAY_TASK_MIN") ?? 0, step = try variable("SLURM_ARRAY_TASK_STEP") ?? 1
            guard let count = try variable("SLURM_ARRAY_TASK_COUNT"), count > 1, low == 0, step == 1,
                  try variable("SLURM_ARRAY_TASK_MAX").map({ $0 == count - 1 }) ?? true else {
                throw ImageTableError(.invalidArgument, "SLURM_ARRAY_TASK_ID gives the shard, but this array is not 0 … N−1 "
                                      + "of several tasks (a part of one, or a resubmitted task): write --shard auto/N, N being the shard count")
            }
            return try ShardSelection(index: k, count: count)
        }
        throw ImageTableError(.invalidArgument, "neither JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) "
                              + "nor SLURM_ARRAY_TASK_ID (a Slurm job array) is set")
    }
}
