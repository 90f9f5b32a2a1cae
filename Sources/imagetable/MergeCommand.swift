import ArgumentParser
import Foundation
import ImageBake
import ImageTableCore

/// `imagetable merge OUT DIR...`: combines the tables of several bakes' output directories (the
/// shards of `bake --shard`) into one set, copying slots and never decoding.
///
/// Pure `ImageTableCore` and the bake's merge; never loads libvips.
struct MergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Combine the tables of sharded bakes into one set, without decoding.",
        usage: "imagetable merge [<options>] <out> <dir> ...",
        discussion: """
            Every DIR must hold the same tables made with the same parameters, as
            bakes of one manifest make them (else manifest-mismatch); shards (bake
            --shard K/N) must be every shard of one split, once each (else
            shard-mismatch). A key several directories hold keeps the entry of its
            most recently modified source. When a table gets more entries than its
            maximumCount, the most recently modified sources get the slots, ties by
            key, as a bake of all of them would choose. Pixels are copied with
            their checksums checked; an entry whose pixels fail theirs is left out,
            with a warning. The tables do not depend on the order of the DIRs.

            OUT is replaced whole, in one atomic step: it must be new, empty, or the
            output of an earlier merge holding only that merge's tables (or this
            one's) and a bake's state; anything else there is refused, not deleted.
            A merge killed at any instant leaves the old
            set of tables or the new one, never a mix. Writers of the old tables (a
            bake, a runtime cache) are waited for (--lock-timeout), then refused.
            docs/SCALE.md describes sharded bakes on GNU parallel, Kubernetes and
            Slurm; docs/CLI.md ("merge") the JSON fields.

            EXAMPLES
              imagetable merge merged out/0 out/1 out/2 out/3
              imagetable merge merged out/* --format json
              # the shards, baked by GNU parallel:
              parallel imagetable bake site.yaml --shard {}/4 --output out/{} ::: 0 1 2 3

            EXIT STATUS
              0   merged
              1   not merged (OUT is unchanged): the directories do not go together,
                  a table cannot be read or written or holds a write a killed bake
                  left (bake it again), OUT is not a merge's output or holds something
                  else, or a writer kept
                  a table; or merged, but the report could not be written
              3   merged, but damaged entries were left out (damaged records, pixels
                  that fail their checksum)
              64  bad usage
              130, 143  stopped by SIGINT (Ctrl-C) or SIGTERM before the new set was
                  in place: OUT is unchanged and the staging directory deleted
            """
    )

    @Argument(help: ArgumentHelp("The directory to write; new, empty or made by an earlier merge.", valueName: "out"))
    var output: String

    @Argument(help: ArgumentHelp("The directories to merge: shards of one bake, or bakes of one manifest.", valueName: "dir"))
    var inputs: [String]

    @Option(help: "Output: text (a summary for people) or json (one document on standard output).")
    var format: TableOutputFormat = .text

    @Option(parsing: .unconditional, help: ArgumentHelp("Seconds to wait for another process writing a table of OUT or of a DIR.", valueName: "seconds"))
    var lockTimeout: Double = 10

    func validate() throws {
        guard !output.isEmpty else { throw ValidationError("OUT is empty: name the directory to write.") }
        guard !inputs.isEmpty else { throw ValidationError("give at least one directory to merge after OUT.") }
        guard !inputs.contains("") else { throw ValidationError("a directory to merge is named by an empty path: name the directory.") }
        guard lockTimeout >= 0 else { throw ValidationError("--lock-timeout must be a number of seconds, 0 or more.") }
    }

    func run() throws {
        let summary: MergeSummary
        // Ctrl-C or a CI system's cancel stops the merge between entries: its staging directory
        // (as large as the new set) is deleted and OUT left as it was; a merge killed by the
        // signal left the staging directory for the next merge into OUT to delete.
        InterruptSignals.catchFromNow()
        do {
            summary = try Merger.merge(inputs, into: output, lockTimeout: lockTimeout) {
                InterruptSignals.caught.map { Self.interrupted(by: $0, output: output) }
            }
        } catch {
            InterruptSignals.release()
            // Interrupted while waiting for a writer's lock: said as any interruption of a merge is.
            let shown = error.code == .interrupted ? InterruptSignals.caught.map { Self.interrupted(by: $0, output: output) } ?? error : error
            MergeReport.printFatal(shown.namingLockTimeoutOption(), output: output, inputs: inputs, format: format)
            if error.code == .interrupted, let signal = InterruptSignals.caught { BakeCommand.endInterrupted(by: signal) }
            throw ExitStatus.failure
        }
        InterruptSignals.release()
        MergeReport.print(summary, output: output, inputs: inputs, format: format)
        // A signal caught once the new set was going in place: merged, said, and ended by it.
        if let signal = InterruptSignals.caught { BakeCommand.endInterrupted(by: signal) }
        if !summary.warnings.isEmpty { throw ExitCode(3) }
    }

    /// The error a merge into `output` stopped by `signal` before its new set was in place ends with.
    private static func interrupted(by signal: Int32, output: String) -> ImageTableError {
        ImageTableError(.interrupted, "interrupted by \(InterruptSignals.name(signal)): \(output) is unchanged", path: output)
    }
}
