import Foundation

// `make bench`: every figure is measured in this one process, next to its baseline.
let only = CommandLine.arguments.dropFirst().first
if only == nil || only == "core" { try CoreBench.run() }
if only == nil || only == "cache" { try await CacheBench.run() }
try? FileManager.default.removeItem(atPath: FileManager.default.currentDirectoryPath + "/bench-out")
