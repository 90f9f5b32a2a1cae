import Foundation

/// Writes one line to standard error, which the worker shares with its command: the extract and
/// preview reports are the command's own output.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
