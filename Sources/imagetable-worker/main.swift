import Foundation

// imagetable-worker: the only executable that links libvips. `imagetable bake` starts one per
// job slot and sends it jobs as JSON lines (see ImageBake's WorkerProtocol); `imagetable
// extract` and `imagetable preview` hand their pixel work over to it once they have parsed and
// checked their command line. Keeping the pixel work here lets `imagetable validate`, `inspect`
// and `verify` start without loading libvips and its hundred libraries, and means a decoder that
// crashes on a hostile file takes down only this process.
//
// The command lines are internal (people use `imagetable`):
//
//     imagetable-worker bake [--max-pixels N]
//     imagetable-worker extract --table PATH (--key KEY --output FILE | --all DIR) [--content] [--verbose]
//     imagetable-worker preview --table PATH --output FILE [--columns N] [--tile-size N] [--limit N]
//                               [--sort key|slot|recency] [--no-captions]
//
// Exit statuses: 0 done, 1 a table, entry or output failed (reported as `path: error: … [code]`
// on standard error), 2 the bake protocol broke, 64 a malformed command line.

var arguments = WorkerArguments(Array(CommandLine.arguments.dropFirst()))
switch arguments.next() {
case "bake":
    BakeWorker.run(&arguments)
case "extract":
    exit(ExtractWorker.run(ExtractWorker.Request(parsing: &arguments)))
case "preview":
    exit(PreviewWorker.run(PreviewWorker.Request(parsing: &arguments)))
default:
    usageError("usage: imagetable-worker bake|extract|preview … (started by imagetable, not by people)")
}
