import Foundation
import ImageTableCore

extension ImageCache {
    /// The miss path: waits for the shared fetch of the entity's source and returns the format's
    /// handle from it.
    ///
    /// A waiter that joined after the fetch had chosen its formats (only possible when the policy
    /// renders just the requested ones), or whose entry other writes evicted at once, finds no
    /// handle; it then tries again with a new fetch, three times at most.
    func load(_ entity: CacheEntity, _ table: FormatTable) async throws(ImageTableError) -> CachedImage {
        guard entity.key.utf8.count <= TableLimits.maxKeyBytes else {
            throw ImageTableError(.invalidRequest, "the key is \(entity.key.utf8.count) UTF-8 bytes; tables allow \(TableLimits.maxKeyBytes)",
                                  key: entity.key)
        }
        guard !closed.load(ordering: .acquiring) else {
            throw ImageTableError(.notWritable, "the cache is closed", key: entity.key)
        }
        let key = FlightKey(family: table.format.family, entityUUID: entity.entityUUID, sourceID: entity.sourceID)
        // Joining the fetch that this task is itself running (a provider asking the cache for
        // another format of the entity it is fetching) would wait for itself for ever.
        if Self.fetching == key {
            throw ImageTableError(.invalidRequest, "the source provider asked the cache for format '\(table.id)' of the entity it "
                                  + "is fetching the source of; it would wait for itself", key: entity.key)
        }
        var counted = false
        for _ in 0..<3 {
            guard !Task.isCancelled else { throw .cancelled(key: entity.key, format: table.id) }
            // Closed while this request waited (its handle then reads nothing): no new fetch.
            guard !closed.load(ordering: .acquiring) else { throw ImageTableError(.notWritable, "the cache is closed", key: entity.key) }
            let ticket = flights.join(key, format: table.id) { id in startFlight(id, key: key, entity: entity, format: table) }
            if ticket.joined {
                fetchLimiter.raise(flight: ticket.flight, to: Task.currentPriority)
                pool.raise(flight: ticket.flight, to: Task.currentPriority)
                // A request, not each of its tries, counts once as joined; counted once its
                // raises are made, so that what waits for the count finds them.
                if !counted { counters.joined.add(1, ordering: .relaxed) }
                counted = true
            }
            // A provider waiting here lends its fetch place meanwhile: held, it could be the one
            // the fetch it waits for needs.
            switch await fetchLimiter.lendingPlace({ await flights.wait(ticket) }) {
            case .success(let images):
                // A handle whose entry other writes evicted already reads nothing: try again.
                if let image = images[table.id].flatMap({ $0.isCurrent ? $0 : nil }) ?? table.hit(entity) { return image }
            case .failure(let error):
                // With the request's key where the failure has none (a provider's own error, a close).
                throw error.code == .cancelled ? .cancelled(key: entity.key, format: table.id) : error.at(error.path, key: error.key ?? entity.key)
            }
        }
        // Two causes: more entities at once than the format holds, or other versions (source
        // IDs) of this key asked for at once, each of which replaces the others' entry.
        throw ImageTableError(.notStored, "other writes replaced the entry three times before it could be returned: other "
                              + "versions of this key requested at once, or more entries at once than maximumCount "
                              + "\(table.format.capacity) of format '\(table.id)' holds", key: entity.key)
    }

    /// The fetch task: detached, so it belongs to no waiter and is cancelled only through the
    /// registry, when its last waiter leaves.
    private func startFlight(_ id: UInt64, key: FlightKey, entity: CacheEntity, format: FormatTable) -> Task<Void, Never> {
        Task.detached(priority: Task.currentPriority) { [self] in
            let outcome = await Self.$fetching.withValue(key) { await fly(id, key: key, entity: entity, format: format) }
            flights.finish(key, flight: id, outcome: outcome)
        }
    }

    /// The fetch the current task runs (and the tasks it starts), for ``load(_:_:)`` to refuse
    /// a request that would join it.
    @TaskLocal static var fetching: FlightKey?

    /// Fetches the source, then draws it for the formats the policy wants and that lack a fresh
    /// entry. Cancellation is honoured up to the render; a render that started finishes and is
    /// stored (the work is paid for, and later requests hit).
    private func fly(_ id: UInt64, key: FlightKey, entity: CacheEntity, format: FormatTable) async -> FlightOutcome {
        // In turn with the other fetches (``Configuration/maximumConcurrentFetches``); a fetch
        // abandoned while it waits never calls the provider.
        let provider = provider, timeout = configuration.fetchTimeout
        let flights = flights
        let call = await fetchLimiter.runKeepingPlace(flight: id, raised: { flights.priority(of: key) }) { () async -> Result<SourceImage, any Error> in
            // A fetch started as the cache closed (a request that passed its check just before)
            // never calls the provider: what it fetched could not be stored.
            if closed.load(ordering: .acquiring) { return .failure(ImageTableError(.notWritable, "the cache is closed", key: entity.key)) }
            // Abandoned as it got its place (a prefetch cancelled at once): no call either.
            if Task.isCancelled { return .failure(CancellationError()) }
            counters.fetches.add(1, ordering: .relaxed)
            return await ProviderCall.run(timeout: timeout) { try await provider.source(for: entity, format: format.format) }
        }
        // The fetch's place is kept until its render begins, or the fetch ends without one
        // (``FetchLimiter/runKeepingPlace(flight:raised:_:)``).
        let kept = call?.1
        defer { kept?.release() }
        let fetched = call?.0
        let source: SourceImage
        switch fetched {
        case nil:
            return .failure(.cancelled(key: entity.key, format: format.id))
        case .success(let image)?:
            source = image
        case .failure(let error as ProviderCall.TimedOut)?:
            return .failure(ImageTableError(.timedOut, "the source provider did not answer within \(error.seconds) s "
                                            + "(Configuration.fetchTimeout); its call was cancelled", key: entity.key))
        case .failure(let error)?:
            if Task.isCancelled { return .failure(.cancelled(key: entity.key, format: format.id)) }
            // The provider's own code stands (a provider drawing from another entity of the
            // cache, or one that tells "offline" from "not found" so): it was `source-unavailable`.
            // Its own `cancelled` would read as the caller's: that one is the provider's failure.
            // A waiter adds the request's key where it has none (``load(_:_:)``).
            if let error = error as? ImageTableError, error.code != .cancelled { return .failure(error) }
            return .failure(ImageTableError(.sourceUnavailable, "the source provider failed", key: entity.key,
                                            cause: String(describing: error)))
        }
        guard !Task.isCancelled else { return .failure(.cancelled(key: entity.key, format: format.id)) }
        let family = families[key.family] ?? [format]
        let policy = configuration.shouldProcessAllFormatsInFamily
        return await store(source, entity: entity, flight: id, raised: { flights.priority(of: key) }) {
            // The render begins when a render thread takes it, not when it is queued: until
            // then a fetch whose waiters all leave (a prefetch of cells scrolled past) is
            // abandoned and costs no decode, and does not hold up the renders queued after it.
            kept?.release()
            guard let requested = flights.beginRender(key, flight: id) else { return nil }
            let wanted = policy(key.family, entity) ? family : family.filter { requested.contains($0.id) }
            return wanted.filter { !$0.isFresh(entity) }
        } ?? .failure(.cancelled(key: entity.key, format: format.id))
    }

    /// Renders and publishes on the render pool, queued at the calling task's priority.
    ///
    /// - Parameters:
    ///   - source: the encoded image.
    ///   - entity: the entity drawn.
    ///   - flight: the fetch it renders for, whose joining requests raise its place.
    ///   - raised: the priority of the requests that joined the fetch so far.
    ///   - targets: run on the render thread before the render: the formats to draw, or `nil`
    ///     to draw nothing (the fetch was abandoned while it was queued).
    /// - Returns: the outcome, or `nil` when `targets` gave `nil`.
    func store(_ source: SourceImage, entity: CacheEntity, flight: UInt64? = nil, raised: (@Sendable () -> UInt8?)? = nil,
               targets: @escaping @Sendable () -> [FormatTable]?) async -> FlightOutcome? {
        let renderer = renderer, familyFormats = familyFormats, familyGates = familyGates
        let outcome: FlightOutcome? = await pool.run(flight: flight, raised: raised) {
            guard let targets = targets() else { return nil }
            guard !targets.isEmpty else { return .success([:]) }
            // Drawn as when the whole family is: the formats that are fresh, or not asked for,
            // still shape the decode, so an entry's pixels do not depend on which were missing.
            let name = targets[0].format.family
            let family = familyFormats[name] ?? targets.map(\.format)
            let store = { FamilyStore.store(source, entity: entity, into: targets, family: family, renderer: renderer) }
            return familyGates[name].map { $0.withTurn(store) } ?? store()
        }
        if case .success(let images)? = outcome, !images.isEmpty {
            counters.decodes.add(1, ordering: .relaxed)
            counters.stored.add(images.count, ordering: .relaxed)
        }
        return outcome
    }
}
