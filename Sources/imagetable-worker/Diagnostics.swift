import Foundation
import ImageTableCore

/// Writes one line to standard error, which the worker shares with its command: the extract and
/// preview reports are the command's own. Escaped for the terminal, as the command escapes its
/// own lines: table paths, output paths and keys are chosen by whoever made them.
func printError(_ line: String) {
    SystemIO.writeStandardError(PrintableText.line(line) + "\n")
}

/// Writes one report line to standard output, escaped for the terminal like ``printError(_:)``.
func printLine(_ line: String) {
    print(PrintableText.line(line))
}
