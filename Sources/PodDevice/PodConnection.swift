// One pod across its whole life on this hub: open → HELLO → SET_CLOCK → the daemon's
// after-connect hook (schedules, alarms) → START_STREAM; on a BOOT event the start-up is
// re-run on the same link; on a disconnect it reconnects with capped exponential backoff
// and jitter, to the same serial only, and starts again. Counters survive reconnects.
import PodProtocol
import Synchronization

/// What the daemon wants in force on the pod after every (re)connect or pod reboot, sent
/// between SET_CLOCK and START_STREAM: schedules and alarms. Errors it throws are
/// reported but do not stop the stream (the pod keeps its previous state on a nack).
public typealias AfterConnectHook = @Sendable (PodConnection) async throws -> Void

public actor PodConnection {
    /// Events in order. One consumer.
    public nonisolated let events: AsyncStream<LinkEvent>
    private let continuation: AsyncStream<LinkEvent>.Continuation
    private let opener: any PodOpener
    private let timing: LinkTiming
    private let streams: StreamMask
    private let clock: @Sendable () -> ClockSetting
    private let afterConnect: AfterConnectHook?
    private let recorder: CaptureRecorder?
    private let random: @Sendable () -> Double

    private var session: PodSession?
    private var settled = LinkCounters()  // counters of ended sessions
    private var reconnects: UInt64 = 0
    /// The pod's serial once known: a reconnect must find the same one.
    public private(set) var serial: String?
    public private(set) var info: PodInfo?
    public private(set) var anchor: ClockAnchor?
    public private(set) var hookError: String?

    /// - Parameters:
    ///   - expectedSerial: only accept this pod (otherwise the first one that answers, then that one).
    ///   - clock: the hub's time and the pod zone's current UTC offset, for SET_CLOCK.
    ///   - random: uniform in 0...1, for backoff jitter (injectable for tests).
    public init(opener: any PodOpener, expectedSerial: String? = nil, timing: LinkTiming = LinkTiming(),
                streams: StreamMask = .all, recorder: CaptureRecorder? = nil,
                clock: @escaping @Sendable () -> ClockSetting = ClockSetting.systemNow,
                random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) },
                afterConnect: AfterConnectHook? = nil) {
        self.opener = opener
        self.serial = expectedSerial
        self.timing = timing
        self.streams = streams
        self.recorder = recorder
        self.clock = clock
        self.random = random
        self.afterConnect = afterConnect
        (events, continuation) = AsyncStream<LinkEvent>.makeStream()
    }

    /// Runs until the task is cancelled (returns normally, after `.stopped(nil)`) or the
    /// pod speaks no common protocol version (throws, after `.stopped(error)`).
    public func run() async throws(PodLinkError) {
        var attempt = 0
        var everConnected = false
        defer { continuation.finish() }
        while !Task.isCancelled {
            var reason = "not connected"
            do {
                let transport = try await opener.open()
                continuation.yield(.connecting(endpoint: transport.endpoint))
                let continuation = self.continuation
                let session = PodSession(transport: transport, timing: timing, recorder: recorder) { frame, micros in
                    continuation.yield(.frame(frame, receivedMicros: micros))
                }
                self.session = session
                await session.start()
                reason = try await drive(session, onConnected: {
                    // Only a good handshake counts as a reconnect, and resets the backoff.
                    if everConnected { reconnects &+= 1 }
                    attempt = 0
                    everConnected = true
                })
            } catch let error as PodLinkError {
                if case .protocolVersionMismatch = error {
                    await closeSession()
                    continuation.yield(.stopped(error))
                    throw error
                }
                reason = error.description
            } catch {
                reason = "\(error)"
            }
            await closeSession()
            if Task.isCancelled { break }
            let delay = timing.reconnectDelay(attempt: attempt, random: random())
            attempt += 1
            continuation.yield(.retrying(attempt: attempt, delay: delay, reason: reason))
            do { try await Task.sleep(for: delay) } catch { break }
        }
        await closeSession()
        continuation.yield(.stopped(nil))
    }

    /// Start-up, then follow the session until it ends; re-run start-up after a pod reboot.
    /// Returns the reason the link ended. Throws start-up failures.
    private func drive(_ session: PodSession, onConnected: () -> Void) async throws(PodLinkError) -> String {
        // BOOTs that arrived before HELLO was answered are covered by that HELLO; a reset
        // after it makes the remaining start-up requests fail (the pod answers NOT_READY
        // until HELLO), which ends this link and reconnects.
        var bootsHandled = try await startUp(session)
        onConnected()
        for await signal in session.signals {
            switch signal {
            case .podRebooted(let boots):
                guard boots > bootsHandled else { continue }  // a BOOT seen during start-up
                bootsHandled = boots
                continuation.yield(.podRebooted)
                bootsHandled = max(bootsHandled, try await startUp(session))
            case .ended(let reason):
                continuation.yield(.disconnected(reason: reason))
                return reason
            }
        }
        return "link ended"
    }

    /// Runs the start-up of spec §7.1; returns how many BOOTs the session had seen when
    /// HELLO was answered.
    private func startUp(_ session: PodSession) async throws(PodLinkError) -> Int {
        try await session.sendDelimiter()
        let hub = Wire.version...Wire.version
        let hello: Response
        do {
            hello = try await session.request(.hello(HelloRequest(minVersion: hub.lowerBound, maxVersion: hub.upperBound)))
        } catch .nack(_, .unsupportedVersion) {
            throw .protocolVersionMismatch(hub: hub, pod: "has no version in that range (nack UNSUPPORTED_VERSION)")
        }
        guard case .hello(let podInfo) = hello.body else {
            throw .unexpectedResponse(request: .hello, detail: "no pod info")
        }
        guard hub.contains(podInfo.protocolVersion) else {
            throw .protocolVersionMismatch(hub: hub, pod: "chose v\(podInfo.protocolVersion)")
        }
        let bootsAtHello = await session.boots
        if let serial, serial != podInfo.serial { throw .wrongPod(expected: serial, found: podInfo.serial) }
        serial = podInfo.serial
        info = podInfo
        continuation.yield(.connected(podInfo, endpoint: session.endpoint))

        let clockResponse = try await session.request(.setClock(clock()))
        if case .clock(let a) = clockResponse.body {
            anchor = a
            continuation.yield(.clockSet(a))
        }
        hookError = nil
        if let afterConnect {
            do { try await afterConnect(self) } catch { hookError = "\(error)" }
        }
        _ = try await session.request(.startStream(streams))
        continuation.yield(.streaming(streams))
        return bootsAtHello
    }

    private func closeSession() async {
        guard let session else { return }
        await session.close()
        settled = combined(settled, await session.counters())
        self.session = nil
    }

    private func combined(_ a: LinkCounters, _ b: LinkCounters) -> LinkCounters {
        var c = a
        c.frames &+= b.frames; c.droppedFrames &+= b.droppedFrames; c.sequenceGaps &+= b.sequenceGaps
        c.crcErrors &+= b.crcErrors; c.malformed &+= b.malformed; c.unknownTypes &+= b.unknownTypes
        c.outOfOrder &+= b.outOfOrder; c.bytes &+= b.bytes; c.retransmits &+= b.retransmits
        c.timeouts &+= b.timeouts; c.nacks &+= b.nacks; c.lateResponses &+= b.lateResponses
        c.podReboots &+= b.podReboots
        return c
    }

    /// Sends a request on the current link (schedules, alarms, power, status...). A nack
    /// throws `.nack` with the pod's status code; no link throws `.notConnected`.
    public func send(_ message: Message) async throws(PodLinkError) -> Response {
        guard let session else { throw .notConnected }
        let response = try await session.request(message)
        // Every acknowledged SET_CLOCK re-anchors the pod's ticks (DST, re-sync, a clock the
        // pod lost), not only the start-up one: the event carries it to whoever times data.
        if case .clock(let a) = response.body {
            anchor = a
            continuation.yield(.clockSet(a))
        }
        return response
    }

    /// Counters over every session so far, including the live one.
    public func counters() async -> LinkCounters {
        var c = settled
        if let session { c = combined(c, await session.counters()) }
        c.reconnects = reconnects
        return c
    }
}

extension ClockSetting {
    /// The hub's clock now and the system zone's current UTC offset.
    @Sendable public static func systemNow() -> ClockSetting {
        let micros = Wallclock.nowMicros()
        return ClockSetting(unixMillis: Int64(micros / 1000), utcOffsetMinutes: Wallclock.utcOffsetMinutes())
    }
}
