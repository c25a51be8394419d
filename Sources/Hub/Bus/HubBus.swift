import Foundation
import Logging
import Synchronization

/// The hub's one event bus: each part publishes what happened once; the console, the
/// API's live streams and MQTT each subscribe.
///
/// Publishing never waits: every subscriber has its own bounded buffer, and when a slow
/// subscriber's buffer is full its *oldest* event is dropped and counted (the newest state
/// matters more to a live view than a stale one). Drops are logged as warnings at 1, 10,
/// 100, … per subscriber, and readable through `subscriberStats()`.
///
/// The bus also keeps the `HubState` snapshot: every event is applied to it before it is
/// fanned out, so a reader of `state` never sees less than a subscriber has been sent.
///
/// Every event gets a sequence number, increasing for the life of the process and starting at
/// its start time in microseconds, so numbers from an earlier run of the hub are all below this
/// run's. The newest `replayCapacity` events are kept, so a client that lost its connection can
/// subscribe again `after:` the last number it saw and miss nothing (SSE's Last-Event-ID).
package final class HubBus: Sendable {
    fileprivate struct Subscriber {
        let name: String
        let continuation: AsyncStream<HubSubscription.Delivery>.Continuation
        let counters: SubscriptionCounters
        /// The events it is sent (nil: all): one that ignores the live seconds is not woken twice a second for them.
        let accepts: (@Sendable (HubEvent) -> Bool)?
    }

    fileprivate struct Inner {
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 0
        var state = HubState()
        /// The number the next event gets.
        var nextSequence: UInt64
        /// The newest events, oldest first, at most `replayCapacity`.
        var recent: [(sequence: UInt64, event: HubEvent)] = []
        var recentStart = 0
    }

    private let inner: Mutex<Inner>
    private let logger: Logger?
    /// The first sequence number of this run.
    package let firstSequence: UInt64
    /// How many of the newest events a subscriber can catch up on.
    package let replayCapacity: Int

    /// - Parameters:
    ///   - logger: where subscriber overflows are reported (nil: not logged).
    ///   - replayCapacity: the newest events kept for `subscribe(after:)` (1024 is minutes of
    ///     live readings of both sides, long enough for a phone to reconnect).
    package init(logger: Logger? = nil, replayCapacity: Int = 1024,
                 firstSequence: UInt64 = UInt64(max(1, Date().timeIntervalSince1970 * 1_000_000))) {
        self.logger = logger
        self.replayCapacity = max(0, replayCapacity)
        self.firstSequence = firstSequence
        inner = Mutex(Inner(nextSequence: firstSequence))
    }

    /// Applies `event` to the state and hands it to every subscriber. Never blocks on a subscriber.
    ///
    /// A subscriber whose stream ended is forgotten here when its queue refuses the event
    /// (`.terminated`), so publishing costs no scan of every subscriber for ended ones; that
    /// scan (`forgetEnded`) is left to `subscriberStats`, which must not list one that ended
    /// since the last event. The stream's end itself only marks it (see `subscribe`).
    package func publish(_ event: HubEvent) {
        // Numbered and queued under the lock, so every subscriber gets the events in their
        // numbers' order, and one that subscribes `after:` a number gets each once.
        let warnings = inner.withLock { inner -> [(String, Int)] in
            inner.state.apply(event)
            let sequence = inner.nextSequence
            inner.nextSequence += 1
            inner.remember(sequence, event, capacity: replayCapacity)
            var warnings: [(String, Int)] = []
            var ended: [Int] = []
            for (id, target) in inner.subscribers {
                if let accepts = target.accepts, !accepts(event) { continue }
                switch target.continuation.yield(.event(event, sequence: sequence)) {
                case .dropped:
                    let dropped = target.counters.countDrop()
                    if dropped == 1 || dropped == 10 || dropped == 100 || dropped % 1000 == 0 { warnings.append((target.name, dropped)) }
                case .enqueued:
                    target.counters.countDelivered()
                case .terminated:
                    ended.append(id)
                @unknown default:
                    break
                }
            }
            for id in ended { inner.subscribers.removeValue(forKey: id) }
            return warnings
        }
        for (name, dropped) in warnings {
            logger?.warning("event subscriber '\(name)' is falling behind: \(dropped) events dropped")
        }
    }

    /// A new subscriber that receives every event published from now on, up to
    /// `bufferSize` of them waiting unread. Ends when the subscription is finished or dropped
    /// (leaving its `for await` loop releases it).
    ///
    /// With `after`, the kept events numbered above it come first (as many as `bufferSize`
    /// holds), and `resumed` says whether that covered everything since.
    ///
    /// With `accepts`, only the events it returns true for are queued (it runs under the bus's
    /// lock, on the publisher's thread: a pattern match, nothing that waits or locks).
    package func subscribe(name: String, bufferSize: Int = 1024, after: UInt64? = nil,
                           accepts: (@Sendable (HubEvent) -> Bool)? = nil) -> HubSubscription {
        let (stream, continuation) = AsyncStream<HubSubscription.Delivery>.makeStream(
            bufferingPolicy: .bufferingNewest(max(1, bufferSize)))
        let counters = SubscriptionCounters()
        let (_, resumed) = inner.withLock { inner -> (Int, HubSubscription.Resumption?) in
            let id = inner.nextID
            inner.nextID += 1
            inner.subscribers[id] = Subscriber(name: name, continuation: continuation, counters: counters, accepts: accepts)
            guard let after else { return (id, nil) }
            // A number of another run tells nothing of what this one published since.
            guard after >= firstSequence - 1, after < inner.nextSequence else { return (id, .unknown) }
            let kept = inner.kept
            let oldest = kept.first?.sequence ?? inner.nextSequence
            for (sequence, event) in kept where sequence > after && accepts?(event) ?? true {
                if case .dropped = continuation.yield(.event(event, sequence: sequence)) { _ = counters.countDrop() }
            }
            return (id, after + 1 >= oldest ? .complete : .lost(Int(oldest - after - 1)))
        }
        // Never the bus's lock here: events are queued under it, and queuing one can wait for
        // the reading task's own lock, which its cancellation holds while it runs this (a
        // deadlock CI met). The bus forgets the subscriber at its next publish (the event is
        // refused as `.terminated`) or look (`subscriberStats`).
        continuation.onTermination = { _ in counters.markEnded() }
        return HubSubscription(name: name, events: stream, counters: counters, continuation: continuation, resumed: resumed)
    }

    /// What the hub knows now (pods, links, clocks, the newest live second per side).
    package var state: HubState { inner.withLock { $0.state } }

    /// Per subscriber: name, events delivered, events dropped.
    package func subscriberStats() -> [SubscriberStats] {
        inner.withLock { inner in
            inner.forgetEnded()
            return inner.subscribers.values.map {
                SubscriberStats(name: $0.name, delivered: $0.counters.delivered, dropped: $0.counters.dropped)
            }
        }.sorted { $0.name < $1.name }
    }
}

extension HubBus.Inner {
    /// Drops the subscribers whose stream ended (finished, or its reader went away) since the
    /// last event: a scan of them all, so for a look at the list, not for every publish.
    fileprivate mutating func forgetEnded() {
        for (id, subscriber) in subscribers where subscriber.counters.isEnded { subscribers.removeValue(forKey: id) }
    }

    /// Keeps the newest `capacity` events in a ring.
    fileprivate mutating func remember(_ sequence: UInt64, _ event: HubEvent, capacity: Int) {
        guard capacity > 0 else { return }
        if recent.count < capacity {
            recent.append((sequence, event))
        } else {
            recent[recentStart] = (sequence, event)
            recentStart = (recentStart + 1) % capacity
        }
    }

    /// The kept events, oldest first.
    fileprivate var kept: ArraySlice<(sequence: UInt64, event: HubEvent)> {
        ArraySlice(recent[recentStart...] + recent[..<recentStart])
    }
}

/// One subscriber's view of the bus: an `AsyncSequence` of events, and how many it missed.
///
/// A subscriber that must also act when nothing happens (SSE's keep-alive) puts a `beat` into
/// its own queue and reads `deliveries`: the beats and the events then share one bounded
/// buffer, one drop count and one reader, in the order they came.
package struct HubSubscription: AsyncSequence, Sendable {
    package typealias Element = HubEvent
    /// What a subscriber's queue holds.
    package enum Delivery: Sendable {
        /// An event and its number on the bus.
        case event(HubEvent, sequence: UInt64)
        /// Put in by the subscriber itself (`beat()`), never by the bus.
        case beat
    }

    /// How a subscription `after:` a number caught up.
    package enum Resumption: Sendable, Equatable {
        /// Every event since that number is queued.
        case complete
        /// This many events since it were no longer kept.
        case lost(Int)
        /// The number is not one of this run (the hub restarted since, or it is made up).
        case unknown
    }

    package let name: String
    /// For a subscription `after:` a number: whether the events since are all there.
    package let resumed: Resumption?
    /// The events and the subscriber's own beats, in order.
    package let deliveries: AsyncStream<Delivery>
    private let counters: SubscriptionCounters
    private let continuation: AsyncStream<Delivery>.Continuation

    init(name: String, events: AsyncStream<Delivery>, counters: SubscriptionCounters,
         continuation: AsyncStream<Delivery>.Continuation, resumed: Resumption? = nil) {
        self.name = name
        self.resumed = resumed
        self.deliveries = events
        self.counters = counters
        self.continuation = continuation
    }

    /// The events alone (beats are skipped).
    package struct AsyncIterator: AsyncIteratorProtocol {
        var deliveries: AsyncStream<Delivery>.Iterator
        package mutating func next() async -> HubEvent? {
            while let delivery = await deliveries.next() {
                if case .event(let event, _) = delivery { return event }
            }
            return nil
        }
    }

    package func makeAsyncIterator() -> AsyncIterator { AsyncIterator(deliveries: deliveries.makeAsyncIterator()) }

    /// Queues a beat behind the events waiting; a full queue drops its oldest and counts it.
    package func beat() {
        if case .dropped = continuation.yield(.beat) { _ = counters.countDrop() }
    }

    /// Events this subscriber lost because its buffer was full.
    package var dropped: Int { counters.dropped }

    /// Stops the subscription: the sequence ends once the buffered events are read.
    package func finish() { continuation.finish() }
}

/// Delivered and dropped counts of one subscriber (for logs, `/metrics`, tests).
package struct SubscriberStats: Sendable, Hashable {
    package var name: String
    package var delivered: Int
    package var dropped: Int
}

final class SubscriptionCounters: Sendable {
    private let deliveredCount = Atomic<Int>(0)
    private let droppedCount = Atomic<Int>(0)
    private let ended = Atomic<Bool>(false)
    var delivered: Int { deliveredCount.load(ordering: .relaxed) }
    /// The subscriber's stream ended: the bus may forget it.
    var isEnded: Bool { ended.load(ordering: .acquiring) }
    func markEnded() { ended.store(true, ordering: .releasing) }
    var dropped: Int { droppedCount.load(ordering: .relaxed) }
    func countDelivered() { deliveredCount.add(1, ordering: .relaxed) }
    /// Returns the new drop count.
    func countDrop() -> Int { droppedCount.add(1, ordering: .relaxed).newValue }
}
