import Foundation

/// The writer's in-memory view of the index: which slot holds which entity, which slots are
/// free, and the LRU order. Every operation is O(1) (eviction amortised), whatever the capacity.
///
/// The LRU order is an intrusive doubly linked list over slot numbers, most recent at the head.
/// Other processes may stamp a newer `recency` into the file when they read; eviction gives such
/// a slot a second chance instead of trusting the list blindly.
struct SlotDirectory {
    private(set) var slotByEntity: [UUID: Int32] = [:]
    private var entityBySlot: [UUID?]
    private var prev: [Int32]
    private var next: [Int32]
    /// The recency this directory last saw per slot; compared with the file's at eviction.
    private var knownRecency: [UInt64]
    private var head: Int32 = -1
    private var tail: Int32 = -1
    /// Slots below `highWater` that are empty, lowest last so that `popLast` keeps the file compact.
    private var holes: [Int32] = []
    /// Slots at or above this index have never been used.
    private(set) var highWater: Int = 0
    let capacity: Int

    /// An empty directory for `capacity` slots.
    init(capacity: Int) {
        self.capacity = capacity
        prev = Array(repeating: -1, count: capacity)
        next = Array(repeating: -1, count: capacity)
        knownRecency = Array(repeating: 0, count: capacity)
        entityBySlot = Array(repeating: nil, count: capacity)
    }

    var count: Int { slotByEntity.count }

    func slot(of entity: UUID) -> Int? { slotByEntity[entity].map(Int.init) }

    func entity(in slot: Int) -> UUID? { entityBySlot[slot] }

    /// Rebuilds the directory from committed slots, ordering the LRU list by recency.
    mutating func load(committed: [(slot: Int, entity: UUID, recency: UInt64)]) {
        for item in committed.sorted(by: { $0.recency < $1.recency }) {
            insert(entity: item.entity, slot: item.slot, recency: item.recency)
        }
        highWater = (committed.map(\.slot).max() ?? -1) + 1
        let used = Set(committed.map(\.slot))
        holes = (0..<highWater).reversed().filter { !used.contains($0) }.map(Int32.init)
    }

    /// Whether a slot can be had without evicting an entry.
    var hasFreeSlot: Bool { !holes.isEmpty || highWater < capacity }

    /// Takes a slot for a new entity: a free one if any, else the least recently used entry's.
    ///
    /// - Parameter fileRecency: reads the recency stamped in the file for a slot.
    /// - Returns: the slot and, when an entry was evicted, its entity UUID; `nil` when every slot
    ///   is reserved by writes in progress.
    mutating func takeSlot(fileRecency: (Int) -> UInt64) -> (slot: Int, evicted: UUID?)? {
        if let hole = holes.popLast() { return (Int(hole), nil) }
        if highWater < capacity {
            highWater += 1
            return (highWater - 1, nil)
        }
        var chances = count
        while tail >= 0 {
            let victim = Int(tail)
            let stamped = fileRecency(victim)
            if stamped > knownRecency[victim] && chances > 0 {
                // Another process used it since we last looked: a second chance.
                chances -= 1
                touch(victim, recency: stamped)
                continue
            }
            guard let entity = entityBySlot[victim] else { return nil }
            remove(entity: entity)
            return (victim, entity)
        }
        return nil
    }

    /// Records a committed entity in a slot, as the most recent use.
    mutating func insert(entity: UUID, slot: Int, recency: UInt64) {
        slotByEntity[entity] = Int32(slot)
        entityBySlot[slot] = entity
        knownRecency[slot] = recency
        pushFront(Int32(slot))
    }

    /// Moves a slot to the head of the LRU list.
    mutating func touch(_ slot: Int, recency: UInt64) {
        knownRecency[slot] = recency
        unlink(Int32(slot))
        pushFront(Int32(slot))
    }

    /// Forgets an entity; its slot is neither free nor in the LRU list until ``release(slot:)``
    /// or ``insert(entity:slot:recency:)``.
    mutating func remove(entity: UUID) {
        guard let slot = slotByEntity.removeValue(forKey: entity) else { return }
        entityBySlot[Int(slot)] = nil
        unlink(slot)
    }

    /// Returns an unused slot to the free pool.
    mutating func release(slot: Int) { holes.append(Int32(slot)) }

    private mutating func pushFront(_ s: Int32) {
        prev[Int(s)] = -1
        next[Int(s)] = head
        if head >= 0 { prev[Int(head)] = s }
        head = s
        if tail < 0 { tail = s }
    }

    private mutating func unlink(_ s: Int32) {
        let p = prev[Int(s)], n = next[Int(s)]
        if p >= 0 { next[Int(p)] = n } else if head == s { head = n }
        if n >= 0 { prev[Int(n)] = p } else if tail == s { tail = p }
        prev[Int(s)] = -1
        next[Int(s)] = -1
    }
}
