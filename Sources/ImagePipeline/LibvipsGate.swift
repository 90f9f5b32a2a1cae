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
/// its release; a thread's outermost scope makes a *visit*, which is *wordy* when words went
/// through the shared buffer during it (a libvips failure, text a call left there, the JPEG
/// loader's "read gave N warnings"). A sound render writes no words there, so two visits mix
/// words when both are wordy; a wordy render asks ``mixed(_:)``, which waits for the visits that
/// overlapped it to end (holding no one else back) and says whether one of them was wordy too,
/// and only then is it drawn again in ``alone(_:)``, which waits until nobody is inside and lets
/// nobody else in, so that its words are its own. But a sound render beside it can still wipe
/// them (libvips' internals stop or clear the buffer for the whole process now and then: a
/// corrupt PNG failed with no words beside two sound PNGs, in about one run of the test in
/// three), so a failure left with no words, beside anyone, is drawn again too. One broken image
/// among sound ones thus delays only its own answer, as a rule, and a process that renders one
/// source at a time (a bake's worker) never waits here.
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

    /// What ``enter()`` hands back for ``leave(_:wordy:deciding:)``.
    struct Entry {
        fileprivate let thread: UInt
    }

    /// A thread's time inside, from its outermost entry to its leaving, on the gate's clock.
    struct Visit {
        fileprivate let entered: UInt64
        fileprivate let left: UInt64
        /// Whether words went through libvips' shared buffer during it.
        let wordy: Bool
        /// Whether another thread was inside at any moment of it.
        let crowded: Bool
    }

    private struct Inside {
        var depth: Int
        let entered: UInt64
        var wordy: Bool
        /// Whether another thread was inside as this one came in. Whether one came or went
        /// later is on the clock: only outermost entries and leavings (and ``alone(_:)``, which
        /// no one is inside beside) move it.
        let crowdedAtEntry: Bool
    }

    private let condition = NSCondition()
    /// Counts entries and leavings: the order of events, to tell which visits overlapped.
    private var clock: UInt64 = 0
    private var inside: [UInt: Inside] = [:]
    /// Wordy visits that a render still deciding, or still inside, may have overlapped.
    private var wordyVisits: [Visit] = []
    /// When the visits of renders waiting in ``mixed(_:)`` began.
    private var deciding: [UInt64] = []
    /// The thread in ``alone(_:)``, if any.
    private var soleThread: UInt?
    /// Threads waiting in ``alone(_:)``.
    private var waitingAlone = 0

    /// Comes in, waiting while a thread is, or waits to be, alone (unless this thread is inside
    /// already).
    ///
    /// - Returns: what ``leave(_:wordy:deciding:)`` needs.
    func enter() -> Entry {
        let me = Self.currentThread
        condition.lock()
        if inside[me] != nil {
            inside[me]!.depth += 1
            condition.unlock()
            return Entry(thread: me)
        }
        while soleThread != nil || waitingAlone > 0 { condition.wait() }
        // Emptied before anyone else comes in, whose words it would wipe. (The libvips lock is
        // taken inside the gate's, never the other way round: no one holds it to enter.)
        if inside.isEmpty { emptyBuffer() }
        clock &+= 1
        inside[me] = Inside(depth: 1, entered: clock, wordy: false, crowdedAtEntry: !inside.isEmpty)
        condition.unlock()
        return Entry(thread: me)
    }

    /// Goes out.
    ///
    /// - Parameters:
    ///   - entry: what ``enter()`` returned on this thread.
    ///   - wordy: whether words went through libvips' shared buffer since `entry`.
    ///   - deciding: whether the caller asks ``mixed(_:)`` about the visit when it is wordy,
    ///     which must then be asked: the visits it may have overlapped are kept until it is.
    /// - Returns: the thread's visit, when this was its outermost entry.
    func leave(_ entry: Entry, wordy: Bool, deciding decides: Bool = false) -> Visit? {
        let me = Self.currentThread
        // An entry left on another thread would stay inside for ever, and every later
        // `alone` wait for it.
        precondition(entry.thread == me, "LibvipsGate left on another thread than it was entered on")
        condition.lock()
        defer { condition.unlock() }
        guard var mine = inside[me] else { return nil }
        mine.depth -= 1
        mine.wordy = mine.wordy || wordy
        guard mine.depth == 0 else {
            inside[me] = mine
            return nil
        }
        inside[me] = nil
        clock &+= 1
        let visit = Visit(entered: mine.entered, left: clock, wordy: mine.wordy, crowded: mine.crowdedAtEntry || clock - mine.entered > 1)
        if mine.wordy { wordyVisits.append(visit) }
        // From now, not between now and the question: a wordy visit it overlapped may end and
        // be forgotten in between.
        if mine.wordy && decides { deciding.append(visit.entered) }
        forgetPastVisits()
        condition.broadcast()
        return visit
    }

    /// Whether another wordy visit overlapped `visit`: waits until every visit that began
    /// before `visit` ended has ended too, without keeping anyone out.
    ///
    /// - Parameter visit: a wordy visit, ended by a ``leave(_:wordy:deciding:)`` that was deciding.
    /// - Returns: whether the render's words may have mixed with another's.
    func mixed(_ visit: Visit) -> Bool {
        precondition(visit.wordy, "LibvipsGate.mixed asked of a visit that was not wordy")
        condition.lock()
        defer { condition.unlock() }
        while inside.values.contains(where: { $0.entered < visit.left }) { condition.wait() }
        deciding.remove(at: deciding.firstIndex(of: visit.entered)!)
        let mixed = wordyVisits.contains { $0.entered != visit.entered && $0.entered < visit.left && visit.entered < $0.left }
        forgetPastVisits()
        return mixed
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
        clock &+= 1
        inside[me] = Inside(depth: 1, entered: clock, wordy: false, crowdedAtEntry: false)
        condition.unlock()
        defer {
            condition.lock()
            soleThread = nil
            inside[me] = nil
            clock &+= 1
            forgetPastVisits()
            condition.broadcast()
            condition.unlock()
        }
        emptyBuffer()
        return body()
    }

    /// Drops what libvips' error buffer holds, when no one is inside to have written it.
    private func emptyBuffer() {
        guard PipelineRuntime.isStarted else { return }
        PipelineRuntime.libvipsLock.withLock { _ in _ = Vips.takeErrorBuffer() }
    }

    /// Drops wordy visits that ended before every visit still inside or deciding began: no
    /// render can ask about them any more. Called with the lock held.
    private func forgetPastVisits() {
        let horizon = (inside.values.map(\.entered) + deciding).min() ?? clock &+ 1
        wordyVisits.removeAll { $0.left < horizon }
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
