import Foundation
import ImageTableCore
import ImageBake
import ImageManifest

/// What `imagetable bake` prints: a summary for people, or one JSON document (fields in the
/// README, "imagetable bake").
enum BakeReport {
    struct Document: Encodable {
        let version = 1
        let manifest: String
        let ok: Bool
        let dryRun: Bool
        let seconds: Double
        /// Wall-clock seconds per phase of the bake.
        let phases: BakePhases
        /// CPU seconds of the bake's process and of its workers.
        let cpu: BakeCPU
        let sources: Sources
        let tables: [TableSummary]
        let failures: [SourceFailure]
        let skipped: [SourceFailure]
        let warnings: [BakeWarning]
        /// Tables no format of the manifest names, deleted by `--prune`.
        let prunedTables: [String]
        let diagnostics: [JSONReport.DiagnosticEntry]
        /// A dry run's plan, in detail.
        let plan: PlanDocument?
        let fatal: ImageTableError?
        /// `--shard`: which shard, of how many; absent for a bake of every source.
        var shard: Shard? = nil
    }

    struct Shard: Encodable {
        let index: Int
        let count: Int
    }

    struct Sources: Encodable {
        var found = 0, decoded = 0, unchanged = 0, failed = 0, leftOut = 0, removed = 0, keptPrevious = 0, skipped = 0, deferred = 0,
            notAttempted = 0
    }


    /// Prints a finished bake's report.
    ///
    /// - Parameters:
    ///   - summary: what the bake did.
    ///   - report: the manifest's validation, for its diagnostics.
    ///   - manifestPath: the manifest as given.
    ///   - format: text, json or github.
    ///   - alreadyShown: failures a progress display printed as they happened, not repeated.
    static func print(_ summary: BakeSummary, report: ValidationReport, manifestPath: String, format: OutputFormat,
                      alreadyShown: Set<SourceFailure> = []) {
        switch format {
        case .json:
            let sources = Sources(found: summary.sourcesFound, decoded: summary.decoded, unchanged: summary.unchanged,
                                  failed: summary.failed.count, leftOut: summary.leftOut, removed: summary.removed,
                                  keptPrevious: summary.keptPrevious, skipped: summary.skipped.count, deferred: summary.deferred,
                                  notAttempted: summary.notAttempted)
            emit(Document(manifest: manifestPath, ok: summary.failed.isEmpty && summary.stoppedBy == nil, dryRun: summary.dryRun,
                          seconds: summary.seconds,
                          phases: summary.phases, cpu: summary.cpu, sources: sources, tables: summary.tables,
                          failures: summary.failed, skipped: summary.skipped,
                          warnings: summary.warnings, prunedTables: summary.prunedTables, diagnostics: entries(report),
                          plan: summary.dryRun ? summary.plan.map { PlanDocument($0, tables: summary.tables) } : nil, fatal: summary.stoppedBy,
                          shard: summary.shard.map { Shard(index: $0.index, count: $0.count) }))
        case .text:
            for warning in summary.warnings { StandardError.print(warning.description) }
            for skip in summary.skipped {
                StandardError.print(skip.error.description.replacingOccurrences(of: ": error: ", with: ": warning: "))
            }
            for failure in summary.failed where !alreadyShown.contains(failure) { StandardError.report(failure.error) }
            StandardOutput.write(text(summary, manifestPath: manifestPath))
            for line in noteLines(summary) { StandardError.print(line) }
            // `--strict`'s stop repeated the failure printed above, with a second code; the
            // summary's last line says that it stopped there.
            if let stop = summary.stoppedBy, stop.code != .sourceFailed { StandardError.report(stop) }
        case .github:
            var out = ""
            for warning in summary.warnings { out += githubWarning(warning) + "\n" }
            for skip in summary.skipped { out += annotation("warning", skip.error) + "\n" }
            for failure in summary.failed { out += annotation("error", failure.error) + "\n" }
            // What stopped the bake is annotated too, as a bake stopped before its run is.
            if let stop = summary.stoppedBy, stop.code != .sourceFailed { out += annotation("error", stop) + "\n" }
            let notes = noteLines(summary).map { PrintableText.escaped($0) + "\n" }.joined()
            Swift.print(out + PrintableText.uncommanded(text(summary, manifestPath: manifestPath) + notes), terminator: "")
            if let stop = summary.stoppedBy, stop.code != .sourceFailed { StandardError.report(stop) }
        }
    }

    /// A summary warning as an annotation on its file, titled with its code, as every other
    /// annotation is (a decoder's warning, which has no code of ours, is titled `warning`).
    private static func githubWarning(_ warning: BakeWarning) -> String {
        DiagnosticLines.githubCommand("warning", file: relative(warning.path), line: warning.line, column: warning.column,
                                      title: warning.code ?? "warning", message: warning.message)
    }

    /// A GitHub annotation of a source's problem, on the source file, named from the working
    /// directory (a workflow's checkout), since GitHub places annotations by relative paths.
    private static func annotation(_ severity: String, _ error: ImageTableError) -> String {
        DiagnosticLines.githubCommand(severity, file: relative(error.path), title: error.code.rawValue,
                                      message: (error.key.map { "'\($0)': " } ?? "") + error.message + (error.cause.map { " (\($0))" } ?? ""))
    }

    /// `path` as GitHub places it (``DiagnosticLines/repositoryPath(_:)``).
    private static func relative(_ path: String?) -> String? { path.map(DiagnosticLines.repositoryPath) }

    static func text(_ s: BakeSummary, manifestPath: String) -> String {
        let verb = s.dryRun ? "would bake" : "baked"
        var extra: [String] = []
        if s.leftOut > 0 { extra.append("\(s.leftOut) left out") }
        if s.removed > 0 {
            // Entries of removed sources stay (a runtime cache may share the tables): said, since
            // an export ships them.
            let kept = !s.pruning && s.removed > s.removedWithoutEntries
            extra.append("\(s.removed) removed" + (kept ? " (entries of removed sources stay until bake --prune)" : ""))
        }
        if s.keptPrevious > 0 { extra.append("\(s.keptPrevious) kept the previous image") }
        if !s.skipped.isEmpty { extra.append("\(s.skipped.count) skipped") }
        if s.deferred > 0 { extra.append("\(s.deferred) deferred (--min-age)") }
        if s.notAttempted > 0 { extra.append("\(s.notAttempted) not attempted") }
        let shard = s.shard.map { " of shard \($0)" } ?? ""
        // A dry run's time is the plan's, not a forecast of the bake's.
        let time = s.dryRun ? "(planned in \(String(format: "%.2f", s.seconds)) s)" : "in \(String(format: "%.2f", s.seconds)) s"
        // "baked 3 sources" read as a success when every one of them failed or was skipped.
        // And "baked 100000 sources" read as done of a bake stopped after a tenth of them.
        let none = s.sourcesFound > 0 && s.decoded + s.unchanged == 0 ? "none of " : s.notAttempted > 0 ? "part of " : ""
        let sources = s.sourcesFound == 1 ? "source" : "sources"
        var out = "\(PrintableText.escaped(manifestPath)): \(verb) \(none)\(s.sourcesFound) \(sources)\(shard) \(time): "
            + "\(s.decoded) decoded, \(s.unchanged) unchanged, \(s.failed.count) failed"
            + extra.map { ", " + $0 }.joined() + "\n"
        let rows = s.tables.map { t in
            [PrintableText.escaped(t.path), "\(t.written)", "\(t.evicted)", "\(t.pruned)", "\(t.entries)/\(t.capacity)",
             t.reset ? (s.dryRun ? "would rebuild" : "rebuilt") : ""]
        }
        let header = ["table", s.dryRun ? "would write" : "written", s.dryRun ? "would evict" : "evicted",
                      s.dryRun ? "would prune" : "pruned", "entries", ""]
        out += TextTable.render(header: header, rows: rows)
        for table in s.prunedTables {
            out += PrintableText.escaped("\(table): \(s.dryRun ? "would delete" : "deleted"): no format of the manifest names this table (--prune)") + "\n"
        }
        if s.stoppedEarly {
            // The error itself follows on standard error.
            out += s.stoppedBy.map { $0.code != .sourceFailed } == true ? "stopped by the error below; what is above was written\n"
                : s.stoppedBeforeDecoding && s.failed.count > 1 ? "stopped before decoding: \(s.failed.count) sources are known to fail (--strict)\n"
                : "stopped at the first failure (--strict)\n"
        }
        return out
    }

    /// The notes of the bake's tables, one line per table and kind: a bake after a `kill -9`
    /// finds one interrupted write per slot being written, hundreds in a large table, which
    /// were one line each (the JSON summary still lists every one).
    ///
    /// - Returns: lines such as `tables/t.imagetable: note: 86 slots: interrupted write;
    ///   dropped them (slots 3, 7, 9, 12, 15, …) [discarded-interrupted-write]`, unescaped.
    static func noteLines(_ s: BakeSummary) -> [String] {
        var lines: [String] = []
        for t in s.tables {
            for group in t.noticeGroups {
                let code = group.code.isEmpty ? "" : " [\(group.code)]"
                switch group.slots.count {
                case 0: lines.append("\(t.path): note: \(group.what)\(code)")
                case 1: lines.append("\(t.path): note: slot \(group.slots[0]): \(group.what)\(code)")
                default:
                    // The core says "dropped it" of the slot each notice names.
                    let what = group.what.hasSuffix("; dropped it") ? group.what.dropLast(2) + "them" : group.what
                    lines.append("\(t.path): note: \(group.slots.count) slots: \(what) (slots \(firstSlots(group.slots)))\(code)")
                }
            }
        }
        return lines
    }

    /// The first five of `slots`, then `…` when there are more: `3, 7, 9, 12, 15, …`, as the
    /// bake's notes and `verify` name the slots of a problem they say in one line.
    static func firstSlots(_ slots: [Int]) -> String {
        slots.prefix(5).map(String.init).joined(separator: ", ") + (slots.count > 5 ? ", …" : "")
    }

    static func printInvalid(_ report: ValidationReport, format: OutputFormat, listing: Bool = false) {
        switch format {
        case .json:
            let fatal = ImageTableError(.invalidManifest, "the manifest has errors", path: report.file)
            if listing { return Swift.print(SourceListing.json(stoppedBy: fatal, diagnostics: entries(report)), terminator: "") }
            emit(failure(report, fatal))
        case .text:
            // Standard error: standard output holds the report of a bake, or `--list`'s sources.
            StandardError.write(TextReport.render([report]))
        case .github:
            Swift.print(GitHubReport.render([report]), terminator: "")
        }
    }

    /// Prints the error that stopped a bake before it had a summary.
    ///
    /// - Parameters:
    ///   - error: what stopped it.
    ///   - report: the manifest's validation, for its diagnostics.
    ///   - format: text, json or github.
    ///   - seconds: how long the bake ran before it stopped (a lock it waited for counts).
    ///   - dryRun: whether it was a dry run.
    static func printFatal(_ error: ImageTableError, report: ValidationReport, format: OutputFormat, seconds: Double, dryRun: Bool,
                           listing: Bool = false) {
        switch format {
        case .json:
            if listing { return Swift.print(SourceListing.json(stoppedBy: error, diagnostics: entries(report)), terminator: "") }
            emit(failure(report, error, seconds: seconds, dryRun: dryRun))
        case .text:
            // Placed on the family's `sources` line, as the manifest's own diagnostics are.
            if let family = unreadableSources(error, report) {
                // The scanner's messages all start so: the directory is named inside the sentence.
                let subject = "sources directory '\(family.sources)' (\(error.path ?? family.sourcesPath)) of family '\(family.name)'"
                let lead = "sources directory "
                let sentence = error.message.hasPrefix(lead) ? subject + " " + error.message.dropFirst(lead.count) : subject + ": " + error.message
                let cause = error.cause.map { " (\($0))" } ?? ""
                StandardError.print("\(report.file):\(family.sourcesLocation.line):\(family.sourcesLocation.column): error: "
                                    + "\(sentence)\(cause) [\(error.code.rawValue)]")
            } else {
                StandardError.report(error)
            }
        case .github:
            // A sources directory that cannot be listed (missing in a checkout, say) is placed on
            // the family's `sources` line of the manifest: GitHub shows no annotation on a directory.
            if let family = unreadableSources(error, report), let manifest = report.manifest {
                Swift.print(DiagnosticLines.githubCommand("error", file: relative(manifest.file), line: family.sourcesLocation.line,
                                                          column: family.sourcesLocation.column, title: error.code.rawValue,
                                                          message: "'\(family.sources)': " + error.message))
            } else {
                Swift.print(DiagnosticLines.githubCommand("error", file: relative(error.path), title: error.code.rawValue, message: error.message))
            }
            StandardError.report(error)
        }
    }

    /// The family whose sources directory `error` says cannot be listed, if it is one.
    private static func unreadableSources(_ error: ImageTableError, _ report: ValidationReport) -> Manifest.Family? {
        error.code == .sourcesUnreadable ? report.manifest?.families.first { $0.sourcesPath == error.path } : nil
    }

    private static func entries(_ report: ValidationReport) -> [JSONReport.DiagnosticEntry] {
        report.diagnostics.map(JSONReport.DiagnosticEntry.init)
    }

    /// The document for a bake that stopped before it had a summary.
    private static func failure(_ report: ValidationReport, _ fatal: ImageTableError, seconds: Double = 0, dryRun: Bool = false) -> Document {
        Document(manifest: report.file, ok: false, dryRun: dryRun, seconds: seconds, phases: BakePhases(), cpu: BakeCPU(), sources: Sources(),
                 tables: [], failures: [], skipped: [], warnings: [], prunedTables: [], diagnostics: entries(report), plan: nil,
                 fatal: fatal)
    }

    private static func emit(_ document: Document) {
        Swift.print(JSONOutput.encode(document), terminator: "")
    }
}
