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
