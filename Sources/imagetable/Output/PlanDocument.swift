import Foundation
import ImageBake
import ImageTableCore

/// A dry run's plan in `bake --dry-run --format json`: every source to decode and, per table,
/// the keys written, evicted, pruned and left out (docs/CLI.md, "bake").
struct PlanDocument: Encodable {
    struct Job: Encodable {
        let family: String
        let key: String
        let status: String
        let tables: [String]
    }

    struct Table: Encodable {
        let path: String
        let writes: [String]
        let evictions: [String]
        let prunes: [String]
        let leftOut: [String]
        let gone: [String]
        let entriesBefore: Int
        let entriesAfter: Int
    }

    let jobs: [Job]
    let tables: [Table]

    init(_ plan: BakePlan, tables summaries: [TableSummary]) {
        jobs = plan.jobs.map { job in
            Job(family: plan.families[job.family], key: job.source.key, status: job.status.rawValue,
                tables: job.tables.map { summaries[$0].path })
        }
        tables = zip(summaries, plan.tables).map { summary, change in
            Table(path: summary.path, writes: change.writes, evictions: change.evictions, prunes: change.prunes,
                  leftOut: change.leftOut, gone: change.gone, entriesBefore: change.entriesBefore, entriesAfter: change.entriesAfter)
        }
    }
}

/// `bake --list`: every matched source with its status, and keys whose source is gone.
enum SourceListing {
    /// `new        photos  a.jpg`, one line each, keys escaped for the terminal.
    static func text(_ listing: [BakePlan.Listed]) -> String {
        let width = listing.map(\.family.count).max() ?? 0
        return listing.map { item in
            item.status.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)
                + item.family.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + PrintableText.escaped(item.key)
                + (item.failure.map { "  (fails: \($0))" } ?? "") + (item.skipped.map { "  (\($0))" } ?? "") + "\n"
        }.joined()
    }

    /// `12 listed: 3 new, 9 unchanged`: the count of each status, in ``BakePlan/SourceStatus``'s
    /// order, for standard error, so that the lines on standard output stay one per source for
    /// `grep` and `awk` while a person still sees the totals of a long listing.
    static func counts(_ listing: [BakePlan.Listed]) -> String {
        var count: [BakePlan.SourceStatus: Int] = [:]
        for item in listing { count[item.status, default: 0] += 1 }
        let parts = BakePlan.SourceStatus.allCases.compactMap { status in count[status].map { "\($0) \(status.rawValue)" } }
        // A new or changed source known to fail is counted as what it is to the tables, which
        // read in a CI log as that many to bake: how many of them fail is said too.
        let failing = listing.count { $0.failure != nil && $0.status != .failed }
        return "\(listing.count) listed" + (parts.isEmpty ? "" : ": " + parts.joined(separator: ", "))
            + (failing == 0 ? "" : "; \(failing) of them known to fail (the lines marked 'fails:')")
    }

    /// `{"version": 1, "sources": [{"family", "key", "status", "failure"?, "skipped"?}]}`, and
    /// `fatal` when the listing's plan stopped where the bake would (`--strict`).
    static func json(_ listing: [BakePlan.Listed], stoppedBy fatal: ImageTableError? = nil) -> String {
        struct Document: Encodable {
            let version = 1
            let sources: [BakePlan.Listed]
            let fatal: ImageTableError?
        }
        return JSONOutput.encode(Document(sources: listing, fatal: fatal))
    }

    /// The listing of a bake that stopped before it could list (an invalid manifest, a table or
    /// sources directory it cannot read): the listing's own shape, `sources` empty, with the
    /// manifest's `diagnostics` and the `fatal` error as a bake's document has them, so that a
    /// job reading `.sources[]` finds an array before it looks at the exit status.
    ///
    /// - Parameters:
    ///   - fatal: what stopped it.
    ///   - diagnostics: the manifest's diagnostics.
    static func json(stoppedBy fatal: ImageTableError, diagnostics: [JSONReport.DiagnosticEntry]) -> String {
        struct Document: Encodable {
            let version = 1
            let sources: [BakePlan.Listed] = []
            let diagnostics: [JSONReport.DiagnosticEntry]
            let fatal: ImageTableError
        }
        return JSONOutput.encode(Document(diagnostics: diagnostics, fatal: fatal))
    }
}
