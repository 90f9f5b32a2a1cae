import CTableSupport

/// A value behind a mutex that spins briefly before it sleeps: the lock of a table that many
/// threads take for a few microseconds each, thousands of times a second (a bake's dispatchers
/// reserving slots and publishing).
///
/// The standard library's `Mutex` on Linux is a priority-inheritance futex: once taken, every
/// thread that finds it held goes into the kernel, and so does its holder to release it, however
/// short the wait would have been. glibc's adaptive mutex first spins in user space a while, which
/// is what such short, frequent critical sections want. The API is `Mutex`'s, without its
/// checks: the value is shared between threads whatever its type (reach it only inside
/// ``withLock(_:)``), and taking the lock again inside `body` deadlocks.
public final class AdaptiveMutex<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutableRawPointer
    private var value: Value

    /// A mutex holding `value`.
    ///
    /// - Parameter value: the initial value.
    public init(_ value: Value) {
        guard let mutex = itc_mutex_create() else { fatalError("could not create a mutex") }
        self.mutex = mutex
        self.value = value
    }

    deinit { itc_mutex_destroy(mutex) }

    /// Runs `body` with the value, holding the lock.
    ///
    /// - Parameter body: what to do with the value; it must not take this lock again.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        itc_mutex_lock(mutex)
        defer { itc_mutex_unlock(mutex) }
        return try body(&value)
    }
}
