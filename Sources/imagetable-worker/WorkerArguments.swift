import Foundation

/// The worker's internal command line: `imagetable-worker COMMAND --flag value …`.
///
/// People never type it; `imagetable` builds it after its own parsing and validation, so this
/// reader is strict and terse: anything unexpected is a usage error (exit 64) naming the flag.
struct WorkerArguments {
    private var rest: ArraySlice<String>

    init(_ arguments: [String]) {
        rest = arguments[...]
    }

    /// The next argument, or `nil` at the end.
    mutating func next() -> String? { rest.popFirst() }

    /// The value following `flag`.
    mutating func value(of flag: String) -> String {
        guard let value = rest.popFirst() else { usageError("\(flag) needs a value") }
        return value
    }

    /// The integer following `flag`, at least `minimum`.
    mutating func integer(of flag: String, minimum: Int = 1) -> Int {
        guard let value = Int(value(of: flag)), value >= minimum else { usageError("\(flag) needs a number of at least \(minimum)") }
        return value
    }
}

/// Reports a malformed internal command line and exits with 64 (`EX_USAGE`).
func usageError(_ message: String) -> Never {
    FileHandle.standardError.write(Data("imagetable-worker: \(message)\n".utf8))
    exit(64)
}

/// Writes one line to standard error.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
