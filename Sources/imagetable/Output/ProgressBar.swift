import Foundation
import ImageBake
import Synchronization

/// A one-line progress bar on standard error: count, rate and time left. Only used when standard
/// error is a terminal; redirected output gets the final summary alone.
final class ProgressBar: Sendable {
    private let lastWidth = Mutex(0)

    func update(_ p: BakeProgress) {
        let rate = p.elapsed > 0 ? Double(p.done) / p.elapsed : 0
        let left = rate > 0 ? Double(p.total - p.done) / rate : 0
        let width = 30
        let filled = p.total > 0 ? width * p.done / p.total : width
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        var line = "\(bar) \(p.done)/\(p.total) sources  \(String(format: "%.1f", rate))/s"
        if p.done < p.total { line += "  ~\(Self.duration(left)) left" }
        if p.failed > 0 { line += "  \(p.failed) failed" }
        let pad = lastWidth.withLock { w in
            defer { w = line.count }
            return max(0, w - line.count)
        }
        FileHandle.standardError.write(Data(("\r" + line + String(repeating: " ", count: pad)).utf8))
    }

    func finish() {
        let width = lastWidth.withLock { $0 }
        guard width > 0 else { return }
        FileHandle.standardError.write(Data(("\r" + String(repeating: " ", count: width) + "\r").utf8))
    }

    static func duration(_ seconds: Double) -> String {
        seconds < 60 ? "\(Int(seconds.rounded(.up))) s" : "\(Int(seconds / 60)) min \(Int(seconds) % 60) s"
    }
}
