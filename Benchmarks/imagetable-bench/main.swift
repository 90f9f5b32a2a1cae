import Foundation

// `make bench`: every figure is measured in this one process, next to its baseline.
let only = CommandLine.arguments.dropFirst().first
if only == nil || only == "core" { try CoreBench.run() }
try? FileManager.default.removeItem(atPath: FileManager.default.currentDirectoryPath + "/bench-out")
