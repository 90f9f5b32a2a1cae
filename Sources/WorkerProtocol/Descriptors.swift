/// The file descriptors a worker finds open when its command starts it.
///
/// Requests and replies travel on descriptors of their own, never on standard output: a stray
/// print in the worker (a library's diagnostic, a debugging line) cannot corrupt the channel.
public enum WorkerDescriptors {
    /// The worker reads requests here.
    public static let requests: Int32 = 3
    /// The worker writes replies here.
    public static let replies: Int32 = 4
    /// The read end of a pipe whose write end only the command holds: it reaches end of file
    /// when the command dies, however it dies, and the worker then exits at once.
    public static let lifeline: Int32 = 5
    /// Shared scratch memory for members whose table had no free slot (bakes only; absent
    /// otherwise).
    public static let scratch: Int32 = 6
}

/// The arguments a command may start a worker with; a worker started with none has no limits
/// of its own.
public enum WorkerArguments {
    private static let memoryPrefix = "--max-memory="

    /// The most memory of its own (heap and private mappings: `RLIMIT_DATA`) the worker may
    /// have, in bytes: `--max-memory=BYTES`. A decode that needs more fails (libvips: "out of
    /// memory") rather than taking the machine's.
    ///
    /// - Parameter bytes: the limit.
    public static func memoryLimit(_ bytes: Int) -> String { memoryPrefix + String(bytes) }

    /// The memory limit among `arguments`, if one is given and is a positive number.
    ///
    /// - Parameter arguments: the worker's arguments after its path.
    public static func memoryLimit(in arguments: [String]) -> Int? {
        arguments.lazy.compactMap { $0.hasPrefix(memoryPrefix) ? Int($0.dropFirst(memoryPrefix.count)) : nil }.first { $0 > 0 }
    }
}
