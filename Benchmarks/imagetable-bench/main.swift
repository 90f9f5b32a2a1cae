import Foundation

// `make bench`: every figure is measured in this one process, next to its baseline.
let only = CommandLine.arguments.dropFirst().first
if only == nil || only == "core" { try CoreBench.run() }
if only == nil || only == "cache" { try await CacheBench.run() }
if only == nil || only == "scale" {
    // `imagetable`, built beside this benchmark, for the cost of `inspect --no-entries`.
    let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("imagetable").path
    try ScaleBench.run(imagetable: FileManager.default.isExecutableFile(atPath: beside) ? beside : nil)
}
if only == nil || only == "proto" { ProtoBench.run() }
if only == "render", CommandLine.arguments.count > 2 { try RenderBench.run(directory: CommandLine.arguments[2]) }
if only == "soak-reader", CommandLine.arguments.count > 3 {
    SoakReader.run(directory: CommandLine.arguments[2], seconds: Double(CommandLine.arguments[3]) ?? 10)
}
// The tables are large; the bake benchmark's generated sources in bench-out/ are kept for reuse.
Harness.removeScratch()
