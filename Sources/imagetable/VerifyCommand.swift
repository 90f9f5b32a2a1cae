import ArgumentParser
import ImageTableCore

/// `imagetable verify TABLE...`: checks tables end to end, without changing them.
///
/// Pure `ImageTableCore` (its `TableVerifier`); never loads libvips.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check tables' headers, records and pixel checksums.",
        usage: "imagetable verify [<options>] <table> ...",
        discussion: """
            The header must decode and its checksum hold; every index record must be
            sound (state, record checksum, key matching its entity UUID, content
            rectangle inside the slot, one record per entity, slot inside the file);
            and every entry's pixels must match the CRC-32 in its record.

            It is safe while a bake writes the table: each record is read under its
            seqlock, as readers read it, so an entry a writer is replacing is counted
            as being written, never as damage. A write that a killed writer left
            (an odd generation while no process holds the table's lock) is an
            interrupted write: a warning, which the next bake completes. So is a
            stale entry count (the header's count, which inspect shows, disagreeing
            with the records): every bake counts again.

            Nothing is changed unless --repair is given. Then every damaged or
            interrupted entry is cleared, under the table's writer lock (waiting up
            to --lock-timeout for a bake), so that the next bake renders it again;
            the hash index is rebuilt and the entries counted again. A damaged
            header cannot be repaired: the next bake rebuilds the table.

            Each problem is a line on standard error, such as
              a.imagetable: error: slot 3 ('cat.jpg'): record checksum mismatch [...]
            ending with its code (more than five interrupted writes of a table
            are one line), and each table gets a status line on standard
            output. The JSON fields are documented in docs/CLI.md ("verify").

            EXAMPLES
              imagetable verify tables/*.imagetable
              imagetable verify tables/showcase/grid@2x.imagetable --format json
              imagetable verify --repair tables/*.imagetable  # unless it exits 1,
              imagetable bake site.yaml                       # renders what it cleared

            EXIT STATUS
              0   every table is sound (or --repair only rebuilt its index or
                  counted its entries: no entry cleared)
              1   some table is damaged (with --repair: damage that could not be
                  cleared), or is missing, unreadable, not a table or has a bad header
              2   no damage, but some table has interrupted writes or a stale entry
                  count (a killed bake), or --repair cleared entries: the next bake
                  completes it
              64  bad usage
            """
    )

    @Argument(help: ArgumentHelp("The tables to verify.", valueName: "table"))
    var tables: [String]

    @Option(help: "Output: text (problems on standard error, a status line per table) or json (one document).")
    var format: TableOutputFormat = .text

    @Flag(help: "Clear damaged and interrupted entries (under the writer lock) so that the next bake renders them again; rebuild the index and count the entries.")
    var repair = false

    @Option(parsing: .unconditional, help: ArgumentHelp("With --repair, seconds to wait for another process writing a table (default 10).", valueName: "seconds"))
    var lockTimeout: Double?

    func validate() throws {
        try TableArguments.refuseEmpty(tables)
        // Verifying alone never waits (it reads under the table's change counter), so a timeout
        // without --repair would be a silent no-op: most likely --repair was forgotten.
        guard lockTimeout == nil || repair else { throw ValidationError("--lock-timeout applies only with --repair.") }
        guard (lockTimeout ?? 0) >= 0 else { throw ValidationError("--lock-timeout must be a number of seconds, 0 or more.") }
    }

    func run() throws {
        var results: [VerifyReport.TableResult] = []
        for path in TableArguments.withoutLockFiles(tables) {
            do {
                // Opening first gives typed errors (missing, not a table, permissions) that
                // the verifier would fold into one header problem.
                _ = try TableOpener.open(path)
            } catch {
                results.append(VerifyReport.unverified(path: path, error, repairing: repair))
                continue
            }
            let report = TableVerifier.verify(path: path)
            guard repair, report.verdict != .sound, report.header != nil else {
                // With --repair, `cleared` is 0 for a table that needed none (it was absent).
                results.append(VerifyReport.result(path: path, report, cleared: repair ? false : nil))
                continue
            }
            do {
                results.append(VerifyReport.result(path: path, try TableRepair.repair(path: path, lockTimeout: lockTimeout ?? 10), cleared: true))
            } catch {
                results.append(VerifyReport.result(path: path, report, cleared: false, failure: error.at(error.path ?? path).namingLockTimeoutOption()))
            }
        }
        switch format {
        case .json:
            print(VerifyReport.json(results), terminator: "")
        case .text:
            for result in results {
                let (problems, status) = VerifyReport.text(result)
                problems.forEach(StandardError.print)
                StandardOutput.write(status + "\n")
            }
        }
        // The worst table's: 1 (damage, no verdict) over 2 (the next bake completes it) over 0.
        let statuses = Set(results.map(\.exitStatus))
        if let worst = [1, 2].first(where: statuses.contains) { throw ExitCode(worst) }
    }
}
