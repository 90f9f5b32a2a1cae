import Foundation
import ImageBake
import ImageTableCore
import Synchronization

/// What a bake shows while it runs, on standard error: a bar on a terminal, plain lines in a log.
/// Either way a source that fails is reported the moment it does.
protocol BakeProgressDisplay: Sendable {
    /// Shows the bake's progress.
    func update(_ progress: BakeProgress)
    /// Reports a source that failed, as it fails.
    func failed(_ failure: SourceFailure)
    /// Leaves standard error ready for the summary.
    func finish()
}

/// A one-line progress bar on a terminal: count, rate, time left and failures, redrawn in place
/// (`\r`, then erase to the end of the line) and never wider than the terminal, whose width is
/// asked again at every redraw, so a resized window never makes it wrap into the scrollback.
/// A failure erases the bar, takes a line of its own, and the bar is drawn again below it.
final class ProgressBar: BakeProgressDisplay {
    private struct State {
        var last: BakeProgress?
        var drawn = false
    }

    private let state = Mutex(State())

    func update(_ p: BakeProgress) {
        state.withLock { s in
            s.last = p
            s.drawn = true
            StandardError.write("\r\(Self.line(p, width: TerminalWidth.standardError()))\u{1B}[K")
        }
    }

    func failed(_ failure: SourceFailure) {
        state.withLock { s in
            var out = s.drawn ? "\r\u{1B}[K" : ""
            out += PrintableText.escaped(failure.error.description) + "\n"
            if let last = s.last { out += "\r" + Self.line(last, width: TerminalWidth.standardError()) + "\u{1B}[K" }
            StandardError.write(out)
        }
    }

    func finish() {
        state.withLock { s in
            if s.drawn { StandardError.write("\r\u{1B}[K") }
            s.drawn = false
        }
    }

    /// The bar for `width` columns: at most `width - 1` characters, since a character in the last
    /// column makes some terminals wrap. The bar itself shrinks first, then goes; then the text
    /// is cut. Listing has no bar: how many sources there are is what it finds out.
    static func line(_ p: BakeProgress, width: Int) -> String {
        // Over the stage's time: the listing and checking before rendering are not its sources'.
        let rate = p.inStage > 0 ? Double(p.done) / p.inStage : 0
        var text: String
        switch p.stage {
        case .listing: return String("listing sources: \(p.done) found".prefix(max(1, width - 1)))
        case .checking: text = "checking \(p.done)/\(p.total) new or changed sources"
        case .rendering: text = "\(p.done)/\(p.total) sources"
        }
        text += "  \(String(format: "%.1f", rate))/s"
        if p.done < p.total && rate > 0 { text += "  ~\(duration(Double(p.total - p.done) / rate)) left" }
        if p.failed > 0 { text += "  \(p.failed) failed" }
        let room = max(1, width - 1)
        let barWidth = min(30, room - text.count - 1)
        guard barWidth >= 10 else { return String(text.prefix(room)) }
        let filled = p.total > 0 ? barWidth * p.done / p.total : barWidth
        return String(repeating: "█", count: filled) + String(repeating: "░", count: barWidth - filled) + " " + text
    }

    static func duration(_ seconds: Double) -> String {
        seconds < 60 ? "\(Int(seconds.rounded(.up))) s" : "\(Int(seconds / 60)) min \(Int(seconds) % 60) s"
    }
}

/// `--progress` when standard error is not a terminal (a CI log): a plain line every few
/// seconds and at each new stage, never a carriage return, each failure as it happens, and a
/// last line at the end.
final class ProgressLines: BakeProgressDisplay {
    private struct State {
        var last: BakeProgress?
        var printedAt: Double?
        /// The line printed last: the last line at the end is not printed twice.
        var printed: String?
    }

    private let state = Mutex(State())
    /// Seconds between two progress lines.
    private let interval: Double

    init(interval: Double = 5) { self.interval = interval }

    func update(_ p: BakeProgress) {
        state.withLock { s in
            // A stage's first report is printed at once: what the bake does now.
            let newStage = s.last.map { $0.stage != p.stage } ?? true
            s.last = p
            if !newStage, let at = s.printedAt, p.elapsed - at < interval { return }
            s.printedAt = p.elapsed
            s.printed = Self.line(p)
            StandardError.write(Self.line(p) + "\n")
        }
    }

    func failed(_ failure: SourceFailure) {
        StandardError.write(PrintableText.escaped(failure.error.description) + "\n")
    }

    func finish() {
        state.withLock { s in
            guard let last = s.last, s.printedAt != last.elapsed, Self.line(last) != s.printed else { return }
            s.printedAt = last.elapsed
            s.printed = Self.line(last)
            StandardError.write(Self.line(last) + "\n")
        }
    }

    /// `progress: 12/40 sources to decode, 1 failed, 3.2 s`: of the sources to decode, not of
    /// those found (a re-bake that decodes nothing said `0/0 sources` of 144 found). Before
    /// rendering, `progress: listing sources, 120000 found, 2.1 s` and
    /// `progress: checking 5000/300000 new or changed sources, 7.0 s`.
    static func line(_ p: BakeProgress) -> String {
        let seconds = String(format: "%.1f", p.elapsed)
        switch p.stage {
        case .listing: return "progress: listing sources, \(p.done) found, \(seconds) s"
        case .checking: return "progress: checking \(p.done)/\(p.total) new or changed sources, \(seconds) s"
        case .rendering: return "progress: \(p.done)/\(p.total) sources to decode" + (p.failed > 0 ? ", \(p.failed) failed" : "") + ", \(seconds) s"
        }
    }
}
