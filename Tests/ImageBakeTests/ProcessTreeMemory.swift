import Foundation
import TestSupport

/// Runs a command and measures the memory of its whole process tree (a bake and its workers).
///
/// A Python parent starts the command and, every 10 ms until it exits, lists the tree (by parent
/// PID under /proc) and sums two fields of each live process's /proc/PID/status:
/// - `VmRSS`, its resident size now: the sum is the tree's resident size at that sample;
/// - `VmHWM`, its resident peak so far: at least its size at any earlier instant of its life, so
///   the sum bounds the tree's size at the sample and at every instant since the last one for
///   each process still alive (it counts each process's peak as if all peaked at once).
/// A process that starts and ends between two samples is in neither sum; `getrusage`'s
/// `RUSAGE_CHILDREN` peak covers it, as the largest single process the command ever had (the
/// kernel passes a reaped worker's peak up to the bake, and the bake's to the parent).
/// Shared pages (libvips in each worker) count once per process: the figures err high.
struct ProcessTreeMemory {
    /// The command's exit status.
    let status: Int32
    /// Its standard output.
    let stdout: String
    /// Its standard error, without the line the sampler adds.
    let stderr: String
    /// The most the tree's summed `VmRSS` reached at a sample, in bytes.
    let sampledBytes: Int
    /// The most the tree's summed `VmHWM` reached at a sample, in bytes: the bound to assert.
    let boundBytes: Int
    /// The largest resident peak of any one process of the tree, in bytes.
    let largestProcessBytes: Int

    private static let sampler = """
        import os, resource, subprocess, sys, threading, time
        def tree(root):
            children = {}
            for name in os.listdir("/proc"):
                try:
                    stat = open(f"/proc/{name}/stat").read() if name.isdigit() else ""
                    if stat:
                        children.setdefault(int(stat[stat.rindex(")") + 2:].split()[1]), []).append(int(name))
                except (OSError, ValueError):
                    pass
            found, todo = [], [root]
            while todo:
                pid = todo.pop()
                found.append(pid)
                todo += children.get(pid, [])
            return found
        def kib(pid, field):
            try:
                for line in open(f"/proc/{pid}/status"):
                    if line.startswith(field):
                        return int(line.split()[1])
            except OSError:
                pass
            return 0
        command = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        done, peaks = threading.Event(), [0, 0]
        def sample():
            while not done.is_set():
                pids = tree(command.pid)
                peaks[0] = max(peaks[0], sum(kib(p, "VmRSS:") for p in pids))
                peaks[1] = max(peaks[1], sum(kib(p, "VmHWM:") for p in pids))
                time.sleep(0.01)
        sampler = threading.Thread(target=sample)
        sampler.start()
        out, err = command.communicate()
        done.set()
        sampler.join()
        sys.stdout.buffer.write(out)
        sys.stderr.buffer.write(err)
        largest = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        sys.stderr.write(f"\\nMEMORY {peaks[0] * 1024} {peaks[1] * 1024} {largest * 1024}\\n")
        sys.exit(command.returncode)
        """

    /// Runs `program` with `arguments` under the sampler.
    ///
    /// - Throws: when the sampler cannot run or prints no figures.
    init(_ program: String, _ arguments: [String]) throws {
        let run = try TestSupport.run("/usr/bin/env", ["python3", "-c", Self.sampler, program] + arguments)
        let lines = run.stderr.split(separator: "\n", omittingEmptySubsequences: false)
        guard let last = lines.last(where: { $0.hasPrefix("MEMORY ") }) else {
            throw ProcessTreeMemoryError(stderr: run.stderr)
        }
        let figures = last.split(separator: " ").dropFirst().compactMap { Int($0) }
        guard figures.count == 3 else { throw ProcessTreeMemoryError(stderr: run.stderr) }
        (sampledBytes, boundBytes, largestProcessBytes) = (figures[0], figures[1], figures[2])
        status = run.status
        stdout = run.stdout
        stderr = run.stderr.range(of: "\n" + last, options: .backwards).map { String(run.stderr[..<$0.lowerBound]) } ?? run.stderr
    }
}

/// The sampler printed no figures (it could not run, or the command could not start).
struct ProcessTreeMemoryError: Error, CustomStringConvertible {
    let stderr: String
    var description: String { "the memory sampler failed: \(stderr.suffix(1000))" }
}
