import ArgumentParser
import Foundation
import ImageManifest
import ImageTableCore

/// The `imagetable` command: bakes images into image tables and checks manifests and tables.
///
/// Each subcommand lives in its own file. This executable does not link libvips: pixel work runs
/// in `imagetable-worker` processes, so commands that touch no pixels start without loading it.
///
/// Every help text is wrapped by hand to fit 80 columns, which is where ArgumentParser wraps
/// when standard output is not a terminal: a longer line would be broken again and leave single
/// words on lines of their own (`HelpTextTests` renders each one to check).
@main
struct ImageTableCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imagetable",
        abstract: "Bake images into memory-mappable image tables from a YAML manifest.",
        discussion: """
            Manifests are documented in docs/MANIFEST.md, the table file format in
            docs/FORMAT.md, and every command, option and JSON field in docs/CLI.md.

            EXAMPLES
              imagetable validate --root . manifests/*.yaml
              imagetable bake --root . manifests/demo.yaml
              imagetable export --root . manifests/demo.yaml --to build/tables
              imagetable merge merged out/0 out/1 out/2 out/3
              imagetable inspect tables/*.imagetable --no-entries
              imagetable --generate-completion-script bash > imagetable.bash

            EXIT STATUS
              0   success (validate: every manifest is valid; verify: all tables sound)
              1   failure (validate: a manifest has errors; bake, merge and export: a
                  fatal error; inspect, verify, extract and preview: a table, an entry
                  or an output file failed)
              2   verify: no damage, but interrupted writes or a stale entry count,
                  or --repair cleared entries: the next bake mends it
              3   bake finished but some sources failed; merge finished but left
                  some damaged entries out
              64  bad usage: unknown option, missing or malformed argument
              130, 143  bake or merge stopped by SIGINT (Ctrl-C) or SIGTERM: what a
                  bake baked is kept and reported, a merge leaves OUT as it was;
                  then it ends by the signal
            """,
        version: ToolVersion.current,
        subcommands: [ValidateCommand.self, BakeCommand.self, MergeCommand.self, ExportCommand.self, InspectCommand.self,
                      VerifyCommand.self, ExtractCommand.self, PreviewCommand.self, VersionCommand.self]
    )

    /// Parses and runs the command, as ArgumentParser's own `main()` does, after refusing an
    /// argument that is not UTF-8: Swift decodes the command line with U+FFFD for such bytes,
    /// so `-o $'a\xff.png'` wrote another file than the one named, with exit 0, and an input
    /// that exists was reported missing. Such paths are bad usage (64), named with `\x..`.
    static func main() async {
        // A file size limit (`ulimit -f`) must surface as the EFBIG error of the write that met
        // it, named and reported (a `no-space` error), not as SIGXFSZ, which killed `export`
        // and `merge` with status 153 and no word, and left their staging behind.
        signal(SIGXFSZ, SIG_IGN)
        // A closed pipe on standard error drops the diagnostic and the status stands
        // (SystemIO.writeStandardError); one on standard output still ends the command by
        // SIGPIPE once it flushes (StandardOutputFlush), as `cat` ends. Workers are spawned with
        // SIGPIPE at its default.
        signal(SIGPIPE, SIG_IGN)
        // `merge` holds two descriptors per input table (the table and its lock): 500 shard
        // tables failed "Too many open files" under the usual soft limit of 1024, where the hard
        // limit allowed 20 times as many. Raised to the hard limit, as build tools do; workers
        // inherit it.
        #if os(Linux)
        let files = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let files = RLIMIT_NOFILE
        #endif
        var limit = rlimit()
        if getrlimit(files, &limit) == 0, limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(files, &limit)
        }
        for index in 1..<Int(CommandLine.argc) {
            guard let raw = CommandLine.unsafeArgv[index], String(validatingCString: raw) == nil else { continue }
            let bytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: strlen(raw)))
            let shown = DirectoryListing.printable(bytes)
            StandardError.print("imagetable: error: argument \(index) is not valid UTF-8: '\(PrintableText.escaped(shown))'; "
                                + "imagetable takes paths and keys in UTF-8")
            Foundation.exit(64)
        }
        let rawArguments = Array(CommandLine.arguments.dropFirst())
        let arguments = AttachedValues.split(rawArguments)
        // `imagetable bak site.yaml` was "2 unexpected arguments", where a mistyped option gets
        // a suggestion: the tool takes no argument of its own, so a first word that names no
        // command is a mistyped one.
        let commands = configuration.subcommands.map { $0._commandName } + ["help"]
        // `imagetable help bak` printed the tool's own help with exit 0.
        let named = arguments.first == "help" ? arguments.dropFirst().first : arguments.first
        if let first = named, !first.hasPrefix("-"), !commands.contains(first) {
            let hint = Suggestion.nearest(to: first, in: commands).map { "; did you mean '\($0)'?" } ?? ""
            StandardError.print("Error: unknown command '\(first)'\(hint)")
            StandardError.print("Usage: imagetable <command> [<options>] (commands: \(commands.dropLast().joined(separator: ", ")))")
            StandardError.print("  See 'imagetable --help' for more information.")
            Foundation.exit(64)
        }
        // ArgumentParser reads `-this.imagetable` as the short flags -t -h -i …: it printed the
        // help for its `-h`, exit 0 (`imagetable verify -hdamaged.imagetable` passed a table it
        // never read), or failed naming another word. Such a word is an unknown option (64),
        // named, with the `--` that takes it.
        let subcommand = named.flatMap { name in configuration.subcommands.first { $0._commandName == name } }
        // The help lists each option that takes a value with its value's name (`--to <dir>`),
        // each flag without one (`--repair`); made only when a word needs it.
        let takesValue = { (option: String) in helpMessage(for: subcommand ?? Self.self).contains("\(option) <") }
        if let (word, option) = AttachedValues.misplacedPath(in: rawArguments, longTakesValue: takesValue) {
            let shown = PrintableText.escaped(word)
            let command = subcommand?._commandName ?? "<command>"
            // After `--` every word is an argument, options included: the options go before it.
            let afterDashes = "a path or key that begins with '-' goes after '--', the options before it "
                + "(imagetable \(command) [options] -- \(shown))"
            let attached = option.map { "a value that begins with '-' is attached with '=' (\($0)=\(shown))" }
            let hint = attached ?? afterDashes
            Self.printUsageError("Unknown option '\(shown)'; \(hint)", for: subcommand)
            Foundation.exit(64)
        }
        do {
            var command = try parseAsRoot(arguments)
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            let status = exitCode(for: error).rawValue
            if status == 0 {
                // Help, `--version` and completion scripts are printed here, as ArgumentParser
                // prints them, so that text that does not reach standard output (`> /dev/full`)
                // fails the command as every report does: it exited 0.
                let text = fullMessage(for: error)
                if !text.isEmpty { print(text) }
                Foundation.exit(StandardOutputFlush.finish(status: 0))
            }
            // A report cut short by a full disk must not leave as a success.
            let final = StandardOutputFlush.finish(status: status)
            if final != status { Foundation.exit(final) }
            if let (option, command) = Self.unknownOptionBeforeMissingArgument(arguments, error: error) {
                Self.printUsageError("Unknown option '\(PrintableText.escaped(option))'", for: command)
                Foundation.exit(status)
            }
            Self.printEscaped(fullMessage(for: error), error: message(for: error))
            Foundation.exit(status)
        }
        Foundation.exit(StandardOutputFlush.finish(status: 0))
    }

    /// Prints `Error: MESSAGE`, the usage of `command` (the tool's when `nil`) with its further
    /// lines aligned under the first, as ArgumentParser prints them, and where its help is.
    ///
    /// - Parameters:
    ///   - message: the error, already escaped.
    ///   - command: the subcommand it concerns, or `nil` for the tool.
    static func printUsageError(_ message: String, for command: ParsableCommand.Type?) {
        StandardError.print("Error: \(message)")
        for (i, line) in usageString(for: command ?? Self.self).split(separator: "\n").enumerated() {
            StandardError.print((i == 0 ? "Usage: " : "       ") + line)
        }
        StandardError.print("  See 'imagetable \(command.map { $0._commandName + " " } ?? "")--help' for more information.")
    }

    /// The unknown option of a command line that also lacks its argument, and its command:
    /// ArgumentParser says only `Missing expected argument '<table> ...'` of `verify -x`, where
    /// the option is the mistake. `nil` when every option is one the command's help names (the
    /// argument alone is missing).
    ///
    /// - Parameters:
    ///   - arguments: the command line, after the tool's name.
    ///   - error: what parsing it threw.
    static func unknownOptionBeforeMissingArgument(_ arguments: [String], error: any Error) -> (String, ParsableCommand.Type)? {
        guard message(for: error).hasPrefix("Missing expected argument"), let name = arguments.first,
              let command = configuration.subcommands.first(where: { $0._commandName == name }) else { return nil }
        // The options the command's help does not name: a parse with placeholders for the
        // arguments stops at a command's own checks first (`extract -q`).
        let help = helpMessage(for: command)
        for word in arguments.dropFirst().prefix(while: { $0 != "--" }) where word.count > 1 && word.hasPrefix("-") {
            // A short option names its first letter (`-ocat.png`, `-vh`).
            let option = word.hasPrefix("--") ? String(word.prefix { $0 != "=" }) : String(word.prefix(2))
            if ![" ", ",", "\n"].contains(where: { help.contains(" " + option + $0) }) { return (option, command) }
        }
        return nil
    }

    /// Prints an error of ArgumentParser's (or a `ValidationError` quoting a value) on standard
    /// error, escaped as every other line is: its text quotes the arguments and environment
    /// variables as given, so a file name picked up by a glob (`--\e[2J\n::error …`) drove the
    /// terminal and forged a workflow command. The error is one line, its own line breaks
    /// written `\n`; the lines ArgumentParser adds after it (the option's help, the usage) are
    /// printed as lines, each escaped.
    ///
    /// - Parameters:
    ///   - full: ArgumentParser's `fullMessage(for:)`.
    ///   - error: its `message(for:)`, the error alone, which `full` begins with after `Error: `.
    static func printEscaped(_ full: String, error: String) {
        guard !full.isEmpty else { return }
        var head = "Error: " + error
        // By bytes: a quoted value ending in a carriage return makes one Character of it and
        // the line break after it.
        if !full.utf8.starts(with: head.utf8) {
            // Not the usual form: the error runs to the last usage line, ArgumentParser's own.
            let usage = full.range(of: "\nUsage: ", options: .backwards)
            head = usage.map { String(full[..<$0.lowerBound]) } ?? full
        }
        StandardError.print(PrintableText.line(head))
        let rest = String(decoding: full.utf8.dropFirst(head.utf8.count), as: UTF8.self)
        guard rest.utf8.first == UInt8(ascii: "\n") else { return }
        for line in rest.utf8.dropFirst().split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map({ String(decoding: $0, as: UTF8.self) }) {
            StandardError.print(PrintableText.line(line))
        }
    }

    /// Runs when no subcommand is named: a usage error (64, the short usage on standard error),
    /// as for an unknown one, where ArgumentParser's default printed the whole help and exited 0,
    /// so a script that lost its subcommand (`imagetable $CMD …` with `CMD` unset) passed.
    func run() async throws {
        throw ValidationError("no subcommand: name one of validate, bake, merge, export, inspect, verify, extract, "
                              + "preview or version ('imagetable --help' describes each)")
    }
}
