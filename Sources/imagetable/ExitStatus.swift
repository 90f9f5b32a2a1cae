import ArgumentParser

/// The exit statuses of every subcommand, documented in `--help` and the README.
///
/// Bad usage is ArgumentParser's own `ExitCode.validationFailure`, which is `EX_USAGE` (64) from
/// `sysexits.h`: parse errors and `ValidationError`s already exit with it.
enum ExitStatus {
    /// Everything checked out.
    static let success = ExitCode.success
    /// The command ran but found a problem (an invalid manifest, a failed bake).
    static let failure = ExitCode(1)
    /// The command line itself was wrong.
    static let usage = ExitCode.validationFailure
}
