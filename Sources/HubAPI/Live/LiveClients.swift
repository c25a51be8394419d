import Hub
import NIOCore
import Synchronization

/// The clients of the live streams (SSE and WebSocket) and what they missed.
///
/// Each client is its own `HubBus` subscriber with a bounded buffer of `queueSize` events
/// (SSE's keep-alive beats join them there): publishing never waits for a client. When a client does not keep up, its queue drops the oldest events
/// and counts them; the client is told (`{"type":"missed"}`) once it reads
/// again, and a client that has made no progress while `maxBehind` events were dropped is
/// disconnected (its connection closed), so a dead or stuck reader costs one bounded
/// buffer and never the pipeline. The socket's send buffer is bounded too (`sendBuffer`):
/// left to the kernel's autotuning it grows to megabytes, and a client that stopped
/// reading would only be noticed after hours of a live stream.
package final class LiveClients: Sendable {
    package enum Kind: String, Sendable { case sse, ws }

    let bus: HubBus
    package let queueSize: Int
    package let maxBehind: Int
    let checkEvery: Duration
    /// Bytes a live client may hold unsent: its socket's SO_SNDBUF (which the kernel doubles)
    /// and its channel's high write-buffer water mark.
    package let sendBuffer: Int

    private let sseCount = Atomic<Int>(0)
    private let wsCount = Atomic<Int>(0)
    private let nextID = Atomic<Int>(0)
    private let missedByEnded = Atomic<Int>(0)
    private let slowDisconnects = Atomic<Int>(0)
    private let messagesSent = Atomic<Int>(0)
    /// The clients attached now, so shutdown can end them all and the watchdog can check
    /// them; nil once closed.
    private let open = Mutex<[Int: Client]?>([:])

    /// How often a stream with a keep-alive (SSE) sends it.
    let keepAliveEvery: Duration
    /// A client came: wakes the watchdog, which sleeps while there is none.
    private let arrivals: AsyncStream<Void>
    private let arrived: AsyncStream<Void>.Continuation

    package init(bus: HubBus, queueSize: Int = 256, maxBehind: Int = 512, checkEvery: Duration = .seconds(1),
                 sendBuffer: Int = 32 * 1024, keepAliveEvery: Duration = .seconds(15)) {
        self.bus = bus
        self.keepAliveEvery = keepAliveEvery
        self.sendBuffer = sendBuffer
        self.queueSize = queueSize
        self.maxBehind = maxBehind
        self.checkEvery = checkEvery
        (arrivals, arrived) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    package var stats: LiveClientStats {
        let live = bus.subscriberStats().filter { $0.name.hasPrefix("api-") }.reduce(0) { $0 + $1.dropped }
        return LiveClientStats(sseClients: sseCount.load(ordering: .relaxed), wsClients: wsCount.load(ordering: .relaxed),
                     missed: missedByEnded.load(ordering: .relaxed) + live,
                     slowDisconnects: slowDisconnects.load(ordering: .relaxed),
                     messagesSent: messagesSent.load(ordering: .relaxed))
    }

    /// Streams the bus to one client until it goes away, is cut off, or the task is cancelled.
    /// `write` sends one JSON message (and throws once the connection is gone); with
    /// `keepsAlive` it is also asked for a `.keepAlive` every `keepAliveEvery` (SSE's comment
    /// line: a stream without events for a minute is otherwise cut by a proxy's read timeout).
    /// With `after` (SSE's Last-Event-ID) the stream starts with the events since that one, as
    /// far as the bus still keeps them, and says what it could not give (`missed`).
    package func serve(_ kind: Kind, channel: any Channel, keepsAlive: Bool = false, after: UInt64? = nil,
                       write: (Output) async throws -> Void) async throws {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let subscription = bus.subscribe(name: "api-\(kind.rawValue)-\(id)", bufferSize: queueSize, after: after)
        let client = Client(subscription: subscription, channel: channel)
        let accepted = open.withLock { open -> Bool in
            guard open != nil else { return false }
            open![id] = client
            return true
        }
        // Shutting down: the stream ends at once (after the hello).
        if accepted { arrived.yield() } else { subscription.finish() }
        count(kind, +1)
        // What the socket and the channel hold for this client count against it like its queue.
        try? await channel.setOption(ChannelOptions.socketOption(.so_sndbuf), value: SocketOptionValue(sendBuffer)).get()
        try? await channel.setOption(ChannelOptions.writeBufferWaterMark,
                                     value: ChannelOptions.Types.WriteBufferWaterMark(low: sendBuffer / 2, high: sendBuffer)).get()
        defer {
            count(kind, -1)
            // Ended (and so left out of the bus's tallies) before its drops join the ended
            // clients': a scrape between the two sees them once or not yet, never twice.
            subscription.finish()
            missedByEnded.add(subscription.dropped, ordering: .relaxed)
            open.withLock { _ = $0?.removeValue(forKey: id) }
        }
        // SSE's keep-alive beats join the client's queue, so they are written in turn.
        let keepAliveEvery = self.keepAliveEvery
        let keepAlive = keepsAlive ? Task {
            while (try? await Task.sleep(for: keepAliveEvery)) != nil { subscription.beat() }
        } : nil
        defer { keepAlive?.cancel() }
        var hello = LiveMessage(type: "hello")
        hello.detail = "podbridge live stream: one message per event (docs/api.md)"
        try await write(.message(hello, id: nil))
        switch subscription.resumed {
        case .lost(let count):
            try await write(.message(LiveMessage(
                missed: count, detail: "the hub no longer keeps the \(count) events since the last one this client saw"), id: nil))
        case .unknown:
            try await write(.message(LiveMessage(
                missed: nil, detail: "the last event this client saw is not one of this run of the hub (it restarted since): "
                    + "re-read the state (/api/v1/pods)"), id: nil))
        case .complete, nil:
            break
        }
        var reported = 0
        for await delivery in subscription.deliveries {
            let droppedSoFar = subscription.dropped
            if droppedSoFar > reported {
                try await write(.message(LiveMessage(missed: droppedSoFar - reported), id: nil))
                reported = droppedSoFar
            }
            switch delivery {
            case .beat:
                try await write(.keepAlive)
            case .event(let event, let sequence):
                guard let message = LiveMessage(event) else { continue }
                try await write(.message(message, id: sequence))
                client.wrote(droppedSoFar: droppedSoFar)
                messagesSent.add(1, ordering: .relaxed)
            }
        }
    }

    /// What a stream writes: a message (an event's with its number on the bus, SSE's `id:`),
    /// or (SSE) the keep-alive.
    package enum Output: Sendable {
        case message(LiveMessage, id: UInt64?)
        case keepAlive
    }

    private func count(_ kind: Kind, _ delta: Int) {
        switch kind {
        case .sse: sseCount.add(delta, ordering: .relaxed)
        case .ws: wsCount.add(delta, ordering: .relaxed)
        }
    }

    /// Watches every client until cancelled: every `checkEvery`, a client whose queue dropped
    /// `maxBehind` events since its last write got through is stuck (or its writes are), and
    /// its connection is reset, which ends a stuck write too. One task for all clients: a timer
    /// each cost every client a wakeup a second, a third of what an idle live client costs.
    /// With no client it waits for one instead (a hub nobody watches live is not woken every
    /// second for nothing).
    package func watch() async {
        var arrivals = self.arrivals.makeAsyncIterator()
        while !Task.isCancelled {
            if open.withLock({ $0?.isEmpty ?? false }) {
                guard await arrivals.next() != nil else { return }  // cancelled
                continue
            }
            guard (try? await Task.sleep(for: checkEvery)) != nil else { return }
            // Closed: nothing left to watch, but it ends with the server's task group (cancelled),
            // not before: the group's first task to end stops the server.
            guard let clients = open.withLock({ $0.map { Array($0.values) } }) else { continue }
            for client in clients where !client.cutOff.load(ordering: .relaxed)
                && client.subscription.dropped - client.droppedAtLastWrite >= maxBehind {
                client.cutOff.store(true, ordering: .relaxed)
                slowDisconnects.add(1, ordering: .relaxed)
                // Reset, not FIN: a FIN would wait behind the unread bytes for as long as the
                // client does not read, and the socket would keep them.
                if let socket = client.channel as? any SocketOptionProvider {
                    try? await socket.setSoLinger(NIOLinger(l_onoff: 1, l_linger: 0)).get()
                }
                client.channel.close(mode: .all, promise: nil)
            }
        }
    }

    /// Ends every stream (each client gets what it has buffered, then the end) and refuses
    /// new ones: the server's graceful shutdown waits for open requests, and a live stream
    /// would otherwise never end.
    package func closeAll() {
        let subscriptions = open.withLock { open -> [HubSubscription] in
            defer { open = nil }
            return open.map { $0.values.map(\.subscription) } ?? []
        }
        for s in subscriptions { s.finish() }
    }

    /// One attached client, as its stream, the watchdog and shutdown see it.
    final class Client: Sendable {
        let subscription: HubSubscription
        let channel: any Channel
        /// Set once the watchdog has reset it, so it is counted and closed once.
        let cutOff = Atomic<Bool>(false)
        /// What its queue had dropped when its last write got through.
        private let droppedAtWrite = Atomic<Int>(0)

        init(subscription: HubSubscription, channel: any Channel) {
            self.subscription = subscription
            self.channel = channel
        }

        var droppedAtLastWrite: Int { droppedAtWrite.load(ordering: .relaxed) }
        func wrote(droppedSoFar: Int) { droppedAtWrite.store(droppedSoFar, ordering: .relaxed) }
    }
}

/// The live streams' clients now and since start (`/metrics`, tests).
package struct LiveClientStats: Sendable, Equatable {
    package var sseClients: Int
    package var wsClients: Int
    /// Events dropped for slow clients, over every client since start.
    package var missed: Int
    /// Clients cut off for being too far behind.
    package var slowDisconnects: Int
    /// Messages written to clients since start.
    package var messagesSent: Int
}
