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
package final class HubBus: Sendable {
    private struct Subscriber {
        let name: String
        let continuation: AsyncStream<HubSubscription.Delivery>.Continuation
        let counters: SubscriptionCounters
    }

    private struct Inner {
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 0
        var state = HubState()
    }

    private let inner = Mutex(Inner())
    private let logger: Logger?

    /// - Parameter logger: where subscriber overflows are reported (nil: not logged).
    package init(logger: Logger? = nil) {
        self.logger = logger
    }

    /// Applies `event` to the state and hands it to every subscriber. Never blocks on a subscriber.
    package func publish(_ event: HubEvent) {
        let targets = inner.withLock { inner -> [Subscriber] in
            inner.state.apply(event)
            return Array(inner.subscribers.values)
        }
        for target in targets {
            switch target.continuation.yield(.event(event)) {
            case .dropped:
                let dropped = target.counters.countDrop()
                if dropped == 1 || dropped == 10 || dropped == 100 || dropped % 1000 == 0 {
                    logger?.warning("event subscriber '\(target.name)' is falling behind: \(dropped) events dropped")
                }
            case .enqueued:
                target.counters.countDelivered()
            case .terminated:
                break
            @unknown default:
                break
            }
        }
    }

    /// A new subscriber that receives every event published from now on, up to
    /// `bufferSize` of them waiting unread. Ends when the subscription is finished or dropped
    /// (leaving its `for await` loop releases it).
    package func subscribe(name: String, bufferSize: Int = 1024) -> HubSubscription {
        let (stream, continuation) = AsyncStream<HubSubscription.Delivery>.makeStream(
            bufferingPolicy: .bufferingNewest(max(1, bufferSize)))
        let counters = SubscriptionCounters()
        let id = inner.withLock { inner -> Int in
            let id = inner.nextID
            inner.nextID += 1
            inner.subscribers[id] = Subscriber(name: name, continuation: continuation, counters: counters)
            return id
        }
        continuation.onTermination = { [weak self] _ in
            self?.inner.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return HubSubscription(name: name, events: stream, counters: counters, continuation: continuation)
    }

    /// What the hub knows now (pods, links, clocks, the newest live second per side).
    package var state: HubState { inner.withLock { $0.state } }

    /// Per subscriber: name, events delivered, events dropped.
    package func subscriberStats() -> [SubscriberStats] {
        inner.withLock { inner in
            inner.subscribers.values.map { SubscriberStats(name: $0.name, delivered: $0.counters.delivered, dropped: $0.counters.dropped) }
        }.sorted { $0.name < $1.name }
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
        case event(HubEvent)
        /// Put in by the subscriber itself (`beat()`), never by the bus.
        case beat
    }

    package let name: String
    /// The events and the subscriber's own beats, in order.
    package let deliveries: AsyncStream<Delivery>
    private let counters: SubscriptionCounters
    private let continuation: AsyncStream<Delivery>.Continuation

    init(name: String, events: AsyncStream<Delivery>, counters: SubscriptionCounters,
         continuation: AsyncStream<Delivery>.Continuation) {
        self.name = name
        self.deliveries = events
        self.counters = counters
        self.continuation = continuation
    }

    /// The events alone (beats are skipped).
    package struct AsyncIterator: AsyncIteratorProtocol {
        var deliveries: AsyncStream<Delivery>.Iterator
        package mutating func next() async -> HubEvent? {
            while let delivery = await deliveries.next() {
                if case .event(let event) = delivery { return event }
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
    var delivered: Int { deliveredCount.load(ordering: .relaxed) }
    var dropped: Int { droppedCount.load(ordering: .relaxed) }
    func countDelivered() { deliveredCount.add(1, ordering: .relaxed) }
    /// Returns the new drop count.
    func countDrop() -> Int { droppedCount.add(1, ordering: .relaxed).newValue }
}
