import CTableSupport
import Foundation
import ImageTableCore
import WorkerProtocol

// imagetable-worker: the only executable that runs libvips, which it opens at run time on the
// first source that needs it (plain JPEGs do not: see docs/PIPELINE.md). `imagetable bake`
// starts one per job slot, and `imagetable extract` and `imagetable preview` one each, and they
// talk to it over the worker protocol (module WorkerProtocol): a handshake that compares the
// protocol and rendering versions compiled into both, then requests answered one at a time in
// the order they came (a bake queues several), on descriptors of their own (not standard
// output). Keeping the pixel work here lets `imagetable validate`, `inspect` and `verify` start
// without loading libvips and its hundred libraries, and means a decoder that crashes on a
// hostile file takes down only this process.
//
// Exit statuses: 0 the command closed the channel, 2 the channel broke or the command is from
// another build, 64 not started by a command.

guard WorkerEndpoint.isConnected else {
    SystemIO.writeStandardError("imagetable-worker: started by imagetable, not by people (see imagetable --help)\n")
    exit(64)
}
// Its command's limit on memory of its own (heap and private mappings; shared scratch memory and
// mapped files are not counted): a decode that needs more fails, as "out of memory", where a
// 1 MB PNG of 1,000,000 × 268 pixels took 4.7 GB to crop. A build under a sanitizer (`make
// sanitize`) has none: its shadow memory alone is far past any limit.
if itc_sanitized() == 0, let bytes = WorkerArguments.memoryLimit(in: Array(CommandLine.arguments.dropFirst())) {
    var limit = rlimit(rlim_cur: rlim_t(bytes), rlim_max: rlim_t(bytes))
    #if os(Linux)
    _ = setrlimit(__rlimit_resource_t(RLIMIT_DATA.rawValue), &limit)
    #else
    _ = setrlimit(RLIMIT_DATA, &limit)
    #endif
}
// A worker outliving a killed bake could still be writing a slot that the next bake reserves
// again: on Linux the kernel kills it with its parent; the lifeline does it everywhere.
if itc_die_with_parent() != 0 { exit(2) }
// Each job allocates and frees the same buffers: keep up to 16 MiB of freed heap rather than
// fault in and zero it again per source (bigger images still get their own mappings, returned
// at once, so an odd huge source does not leave the worker large).
itc_keep_heap(16 << 20)
// Ctrl-C reaches every process of the terminal's group, and a CI system's cancel the whole
// tree: the command decides (a bake finishes the sources it sent, then stops), and a worker
// whose command is gone is killed with it.
signal(SIGINT, SIG_IGN)
signal(SIGTERM, SIG_IGN)
// Blocked from the spawn until now, so that none arrived while they still had their default.
var interrupts = sigset_t()
sigemptyset(&interrupts)
sigaddset(&interrupts, SIGINT)
sigaddset(&interrupts, SIGTERM)
sigprocmask(SIG_UNBLOCK, &interrupts, nil)
// A file size limit (`ulimit -f`) must be the EFBIG error of the write that met it, which names
// the file, not SIGXFSZ, which killed the worker with no word of why (extract, preview).
signal(SIGXFSZ, SIG_IGN)
/// `reply` with its status changed to a failure when what the job printed did not all reach
/// standard output (see ``StandardOutputFlush``).
func flushed(_ reply: WorkerReply) -> WorkerReply {
    guard case .finished(let finished) = reply else { return reply }
    return .finished(Finished(status: StandardOutputFlush.finish(status: finished.status)))
}
let me = Bundle.main.executablePath ?? CommandLine.arguments[0]
let runner = JobRunner()
do {
    try WorkerEndpoint.serve(Hello(renderingVersion: TableFormat.pipelineRenderingVersion, executable: me),
                             greeted: runner.adopt) { request in
        switch request {
        case .render(let job): runner.run(job)
        // Flushed before the reply, whose status the command exits with: a report that a full
        // disk cut short must change it, and must reach the file before the command ends.
        case .extract(let job): flushed(.finished(Finished(status: ExtractWorker.run(job))))
        case .preview(let job): flushed(PreviewWorker.reply(job))
        case .hello: .failed(WorkerFailure(.protocolError, "a second handshake"))
        }
    }
    exit(0)
} catch {
    exit(2)
}
