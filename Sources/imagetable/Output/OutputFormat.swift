import ArgumentParser

/// How commands print their results.
enum OutputFormat: String, CaseIterable, ExpressibleByArgument {
    /// Compiler-style diagnostics and aligned tables, for people.
    case text
    /// One JSON document on standard output, for programs (fields in docs/MANIFEST.md).
    case json
    /// GitHub Actions workflow commands (`::error file=…::…`), so problems annotate pull requests.
    case github
}
