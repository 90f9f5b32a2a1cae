import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Who is using libvips in this process, so that a render whose words may have mixed with
/// another's can be drawn again with nobody else in.
///
/// libvips 8.14 has one error buffer for the whole process, and a render evaluates its pixels
/// outside the global lock (``PipelineRuntime/libvipsLock``), where a failing decoder writes its
/// complaint into that buffer at any moment. ``VipsScope`` sets aside and puts back what it finds
/// there, but text written while another render's call runs still lands in that call's reading:
/// with four threads rendering PngSuite's damaged files, a corrupt PNG's "libpng read error" went
/// to a sound image as its warning, and the PNG failed with no cause, in dozens of 600 renders
/// (`ErrorCrossTalkTests`).
///
/// Every ``VipsScope`` (and ``PipelineRuntime/withLibvips(_:)``) is *inside* from its creation to
/// its release, and learns on leaving whether anyone else was inside meanwhile. A render that
/// was crowded and whose words went through the shared buffer (a failure, or warnings read from
/// it) is drawn again in ``alone(_:)``, which waits until nobody is inside and lets nobody else
/// in: its words are then its own. Renders that succeed without such words, and every render of
/// a process that renders one source at a time (a bake's worker), never wait here.
///
/// The first to come in when nobody is inside empties the buffer: what is there belongs to
/// renders that are over (libvips' JPEG loader logs the buffer when it is freed but leaves the
/// text in it), and a bake's worker, one render at a time, gave the next source's failure a
/// damaged JPEG's words before it, with its code (`truncated` for a corrupt PNG).
///
/// A thread already inside enters again without waiting (a render's smart crop opens a scope
/// inside the render's own), so nesting cannot deadlock against a waiting ``alone(_:)``; new
/// threads wait while one does, so a stream of renders cannot starve it.
final class LibvipsGate: @unchecked Sendable {
    /// The process's gate.
    static let shared = LibvipsGate()

    /// What ``enter()`` hands back for ``leave(_:)``.
    struct Entry {
        fileprivate let thread: UInt
        fileprivate let crowdingsAtEntry: UInt64
        fileprivate let crowdedAtEntry: Bool
    }

    private let condition = NSCondition()
    /// Threads inside, each with how many entries it has not left.
    private var inside: [UInt: Int] = [:]
    /// The thread in ``alone(_:)``, if any.
    private var soleThread: UInt?
    /// Threads waiting in ``alone(_:)``.
    private var waitingAlone = 0
    /// How many times a thread came in while another was inside.
    private var crowdings: UInt64 = 0

    /// Comes in, waiting while a thread is, or waits to be, alone (unless this thread is inside
    /// already).
    ///
    /// - Returns: what ``leave(_:)`` needs.
    func enter() -> Entry {
        let me = Self.currentThread
        condition.lock()
        if let depth = inside[me] {
            inside[me] = depth + 1
            defer { condition.unlock() }
            return Entry(thread: me, crowdingsAtEntry: crowdings, crowdedAtEntry: inside.count > 1)
        }
        while soleThread != nil || waitingAlone > 0 { condition.wait() }
        let first = inside.isEmpty
        if !first { crowdings &+= 1 }
        inside[me] = 1
        let entry = Entry(thread: me, crowdingsAtEntry: crowdings, crowdedAtEntry: !first)
        condition.unlock()
        // Emptied outside the gate's own lock: one who comes in meanwhile is crowded, and
        // drawn again if this wiped its words.
        if first, PipelineRuntime.isStarted { PipelineRuntime.libvipsLock.withLock { _ in _ = Vips.takeErrorBuffer() } }
        return entry
    }

    /// Goes out.
    ///
    /// - Parameter entry: what ``enter()`` returned on this thread.
    /// - Returns: whether another thread was inside at any moment since `entry`.
    func leave(_ entry: Entry) -> Bool {
        let me = Self.currentThread
        // An entry left on another thread would stay inside for ever, and every later
        // `alone` wait for it.
        precondition(entry.thread == me, "LibvipsGate left on another thread than it was entered on")
        condition.lock()
        defer { condition.unlock() }
        let depth = (inside[me] ?? 1) - 1
        inside[me] = depth > 0 ? depth : nil
        if inside.isEmpty { condition.broadcast() }
        return entry.crowdedAtEntry || crowdings != entry.crowdingsAtEntry
    }

    /// Runs `body` with no other thread inside: waits until those inside have left, and keeps
    /// new ones out until `body` returns. libvips' error buffer is emptied first (what is left
    /// there belongs to renders that are over).
    ///
    /// - Parameter body: the render to draw again; it may enter and leave as it likes.
    /// - Returns: what `body` returns.
    func alone<T>(_ body: () -> T) -> T {
        let me = Self.currentThread
        condition.lock()
        precondition(inside[me] == nil, "LibvipsGate.alone called from inside")
        waitingAlone += 1
        while !inside.isEmpty || soleThread != nil { condition.wait() }
        waitingAlone -= 1
        soleThread = me
        inside[me] = 1
        condition.unlock()
        defer {
            condition.lock()
            soleThread = nil
            inside[me] = nil
            condition.broadcast()
            condition.unlock()
        }
        PipelineRuntime.libvipsLock.withLock { _ in _ = Vips.takeErrorBuffer() }
        return body()
    }

    /// The calling thread, as a number that no other living thread has.
    private static var currentThread: UInt {
        #if canImport(Glibc)
        UInt(pthread_self())
        #else
        UInt(bitPattern: pthread_self())
        #endif
    }
}
