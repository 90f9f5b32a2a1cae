import Foundation
import ImageBake
import ImagePipeline

// imagetable-worker: the only executable that links libvips. `imagetable bake` starts one per
// job slot and sends it jobs as JSON lines (see ImageBake's WorkerProtocol); keeping the pixel
// work here lets `imagetable validate`, `inspect` and `verify` start without loading libvips and
// its hundred libraries, and means a decoder that crashes on a hostile file takes down only
// this process.
//
//     imagetable-worker bake [--max-pixels N]

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("imagetable-worker: \(message)\n".utf8))
    exit(64)
}

var arguments = CommandLine.arguments.dropFirst()
guard arguments.popFirst() == "bake" else {
    fail("usage: imagetable-worker bake [--max-pixels N] (started by imagetable bake, not by people)")
}
var options = RenderOptions()
while let flag = arguments.popFirst() {
    switch flag {
    case "--max-pixels":
        guard let value = arguments.popFirst().flatMap(Int.init), value > 0 else { fail("--max-pixels needs a positive number") }
        options.maxPixels = value
    default:
        fail("unknown option \(flag)")
    }
}
// One source at a time per process: libvips' own threads would only compete with the other
// workers for the cores.
PipelineRuntime.configure(.init(concurrency: 1))
let runner = JobRunner(options: options)
let lines = LineReader(fd: 0)
while let line = lines.next() {
    guard let job = try? JSONDecoder().decode(WorkerProtocol.Job.self, from: line),
          let reply = try? WorkerProtocol.encodeLine(runner.run(job)) else { exit(2) }
    guard FileDescriptor.writeAll(1, reply) else { exit(2) }
}
exit(0)
