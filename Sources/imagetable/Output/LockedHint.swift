import ImageTableCore

extension ImageTableError {
    /// A `locked` error as the command line says it: the core, which the runtime cache shares,
    /// ends it "allow a longer lock timeout"; here that is the option that does it.
    ///
    /// - Returns: the error, its advice naming `--lock-timeout` when it is a lock's; any other
    ///   error as it is.
    func namingLockTimeoutOption() -> ImageTableError {
        let advice = "allow a longer lock timeout"
        guard code == .locked, message.hasSuffix(advice) else { return self }
        return ImageTableError(code, message.dropLast(advice.count) + "raise --lock-timeout", path: path, key: key, cause: cause, errno: errno)
    }
}
