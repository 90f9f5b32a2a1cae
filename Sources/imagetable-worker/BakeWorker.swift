import CTableSupport
import Foundation
import ImageBake
import ImagePipeline
import ImageTableCore

/// `imagetable-worker bake [--max-pixels N]`: reads bake requests as JSON lines on standard input
/// and answers each with a JSON line (ImageBake's `WorkerProtocol`) until standard input ends.
///
/// Started by `imagetable bake`, one process per job slot. Exits 0 at the end of its input and
/// 2 when a line cannot be read or answered (the bake then reports the worker as crashed).
enum BakeWorker {
    static func run(_ arguments: inout WorkerArguments) -> Never {
        var options = DecodeOptions()
        while let flag = arguments.next() {
            switch flag {
            case "--max-pixels": options.maxPixels = arguments.integer(of: flag)
            default: usageError("unknown option \(flag)")
            }
        }
        // A worker outliving a killed bake could still be writing a slot that the next bake
        // reserves again: die with the parent.
        if itc_die_with_parent() != 0 { exit(2) }
        // One source at a time per process: libvips' own threads would only compete with the
        // other workers for the cores.
        PipelineRuntime.configure(.init(concurrency: 1))
        let runner = JobRunner(options: options)
        let lines = LineReader(fd: 0)
        while let line = lines.next() {
            guard let request = try? JSONDecoder().decode(WorkerProtocol.Request.self, from: line),
                  let reply = try? WorkerProtocol.encodeLine(runner.handle(request)) else { exit(2) }
            guard FileDescriptor.writeAll(1, reply) else { exit(2) }
        }
        exit(0)
    }
}
