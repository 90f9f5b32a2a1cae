import Foundation

/// A writer's bookkeeping of slots: how many entries there are, which slots are free, and, once
/// a full table must evict its least recently used entry, the LRU order. Which entity is in
/// which slot is not here: the file's hash index and records say that (``IndexWriter``), so a
/// writer's memory does not grow with the capacity, and only with the entries once it evicts.
///
/// The LRU order is an intrusive doubly linked list over slot numbers, most recent at the head,
/// built from the records' recency stamps the first time it is needed (a bake evicts the entries
/// its plan names, and never needs it). Other processes may stamp a newer `recency` into the file
/// when they read; eviction gives such a slot a second chance instead of trusting the list blindly.
struct SlotDirectory {
    /// Slots below `highWater` that are empty, lowest last so that `popLast` keeps the file compact.
    private var holes: [Int32] = []
    /// Slots at or above this index have never been used.
    private(set) var highWater: Int = 0
    /// Committed entries.
    private(set) var count = 0
    let capacity: Int
    private var lru: LRUList?

    /// An empty directory for `capacity` slots.
    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Sets what an open scan found: the committed entries, and the highest slot in use.
    mutating func load(count: Int, highWater: Int, holes: [Int]) {
        self.count = count
        self.highWater = highWater
        self.holes = holes.sorted(by: >).map(Int32.init)
    }

    /// Whether a slot can be had without evicting an entry.
    var hasFreeSlot: Bool { !holes.isEmpty || highWater < capacity }

    /// Takes a free slot, lowest first; `nil` when there is none.
    mutating func takeFreeSlot() -> Int? {
        if let hole = holes.popLast() { return Int(hole) }
        guard highWater < capacity else { return nil }
        highWater += 1
        return highWater - 1
    }

    /// The least recently used committed slot, to evict it; `nil` when every slot is reserved
    /// by writes in progress. The list is built on first use from `committed` (every committed
    /// slot with its recency).
    ///
    /// - Parameters:
    ///   - fileRecency: reads the recency stamped in the file for a slot.
    ///   - committed: lists the committed slots and their recency, for building the list.
    mutating func leastRecentlyUsed(fileRecency: (Int) -> UInt64, committed: () -> [(slot: Int, recency: UInt64)]) -> Int? {
        if lru == nil {
            var list = LRUList(capacity: capacity)
            for item in committed().sorted(by: { $0.recency < $1.recency }) { list.pushFront(item.slot, recency: item.recency) }
            lru = list
        }
        return lru!.victim(fileRecency: fileRecency, chances: count)
    }

    /// Records a committed entry in a slot, as the most recent use.
    mutating func insert(slot: Int, recency: UInt64) {
        count += 1
        lru?.pushFront(slot, recency: recency)
    }

    /// Moves a slot to the head of the LRU order.
    mutating func touch(_ slot: Int, recency: UInt64) {
        lru?.touch(slot, recency: recency)
    }

    /// Forgets a committed entry (replaced, evicted or deleted); its slot is neither free nor in
    /// the LRU list until ``release(slot:)`` or ``insert(slot:recency:)``.
    mutating func remove(slot: Int) {
        count -= 1
        lru?.unlink(slot)
    }

    /// Returns an unused slot to the free pool.
    mutating func release(slot: Int) { holes.append(Int32(slot)) }
}

/// The LRU order of committed slots: a doubly linked list in two arrays, grown to the highest
/// slot it has held.
struct LRUList {
    private var prev: [Int32] = []
    private var next: [Int32] = []
    /// The recency this list last saw per slot; compared with the file's at eviction.
    private var knownRecency: [UInt64] = []
    private var head: Int32 = -1
    private var tail: Int32 = -1
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// The tail, after giving slots that another process used since a second chance.
    mutating func victim(fileRecency: (Int) -> UInt64, chances: Int) -> Int? {
        var chances = chances
        while tail >= 0 {
            let slot = Int(tail)
            let stamped = fileRecency(slot)
            if stamped > knownRecency[slot] && chances > 0 {
                chances -= 1
                touch(slot, recency: stamped)
                continue
            }
            unlink(slot)
            return slot
        }
        return nil
    }

    mutating func pushFront(_ slot: Int, recency: UInt64) {
        grow(to: slot)
        let s = Int32(slot)
        knownRecency[slot] = recency
        prev[slot] = -1
        next[slot] = head
        if head >= 0 { prev[Int(head)] = s }
        head = s
        if tail < 0 { tail = s }
    }

    mutating func touch(_ slot: Int, recency: UInt64) {
        guard slot < prev.count, isLinked(slot) else { return }
        unlink(slot)
        pushFront(slot, recency: recency)
    }

    mutating func unlink(_ slot: Int) {
        guard slot < prev.count, isLinked(slot) else { return }
        let p = prev[slot], n = next[slot]
        if p >= 0 { next[Int(p)] = n } else { head = n }
        if n >= 0 { prev[Int(n)] = p } else { tail = p }
        prev[slot] = -1
        next[slot] = -1
    }

    private func isLinked(_ slot: Int) -> Bool { head == Int32(slot) || prev[slot] >= 0 }

    private mutating func grow(to slot: Int) {
        guard slot >= prev.count else { return }
        let size = min(capacity, max(slot + 1, prev.count * 2, 1024))
        prev += Array(repeating: -1, count: size - prev.count)
        next += Array(repeating: -1, count: size - next.count)
        knownRecency += Array(repeating: 0, count: size - knownRecency.count)
    }
}
