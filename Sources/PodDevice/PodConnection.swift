// One pod across its whole life on this hub: open → HELLO → SET_CLOCK → the daemon's
// after-connect hook (schedules, alarms) → START_STREAM; on a BOOT event, or a boot count
// that changed under a silent link (BOOT lost), the start-up is re-run on the same link; a
// silent link is probed with GET_STATUS; on a disconnect it reconnects with capped
// exponential backoff and jitter, to the same serial only, and starts again; a final nack
// is retried after a long interval, not in a loop. Counters survive reconnects.
import Foundation
import PodProtocol
import Synchronization
import SleepDomain

/// What the daemon wants in force on the pod after every (re)connect or pod reboot, sent
/// between SET_CLOCK and START_STREAM: schedules and alarms. Errors it throws are
/// reported but do not stop the stream (the pod keeps its previous state on a nack).
package typealias AfterConnectHook = @Sendable (PodConnection) async throws -> Void

package actor PodConnection {
    /// Events in order. One consumer. Empty (ended at once) when a `sink` takes them instead.
    package nonisolated let events: AsyncStream<LinkEvent>
    /// Hands on one event: to `events`, or to the sink.
    private let emit: @Sendable (LinkEvent) -> Void
    private let finishEvents: @Sendable () -> Void
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
    private var probes: UInt64 = 0
    private var unannouncedReboots: UInt64 = 0
    /// `.connected` was reported and its `.disconnected` not yet.
    private var announced = false
    /// START_STREAM was acknowledged on the live session (STOP_STREAM is sent on the way out).
    private var isStreaming = false
    /// When to ask again for a stream the pod refused with a final status.
    private var streamRetryAt: ContinuousClock.Instant?
    /// When the pod was last asked GET_STATUS (a probe, or the periodic clock check).
    private var lastStatusAt = ContinuousClock.now
    /// `.clockInvalid` was reported and no SET_CLOCK acknowledged since.
    private var clockLossReported = false
    /// The pod's serial once known: a reconnect must find the same one, unless `pinsSerial`
    /// is off (then it is the pod the opener found, which may be another).
    package private(set) var serial: String?
    private let pinsSerial: Bool
    package private(set) var info: PodInfo?
    package private(set) var anchor: ClockAnchor?
    package private(set) var hookError: String?
    /// A start-up or a session recovery is running: another waits for it rather than run its own.
    private var restarting = false
    private var restartWaiters: [CheckedContinuation<Void, Never>] = []
    /// How the last start-up or recovery ended (false: it threw, the link is going down).
    private var restartSucceeded = true
    /// BOOTs the last start-up's HELLO covered.
    private var bootsAtLastHello = 0
    /// True inside the start-up's after-connect hook: a request it makes that is answered
    /// NO_SESSION fails that start-up (§7.2) instead of waiting for a recovery (for itself).
    @TaskLocal static var insideStartUp = false

    /// - Parameters:
    ///   - expectedSerial: only accept this pod (otherwise the first one that answers, then that one).
    ///   - pinsSerial: false when the opener chooses the pod (the hub without `pod.serial`: a pod
    ///     swapped for another is served, not refused as the wrong pod); `expectedSerial` always pins.
    ///   - clock: the hub's time and the pod zone's current UTC offset, for SET_CLOCK.
    ///   - random: uniform in 0...1, for backoff jitter (injectable for tests).
    ///   - sink: takes each event, in order, instead of `events`: a consumer that merges them with
    ///     its own inputs (the daemon's follower) saves a task and a thread hand-off per frame.
    package init(opener: any PodOpener, expectedSerial: String? = nil, pinsSerial: Bool = true, timing: LinkTiming = LinkTiming(),
                streams: StreamMask = .all, recorder: CaptureRecorder? = nil,
                clock: @escaping @Sendable () -> ClockSetting = ClockSetting.systemNow,
                random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) },
                afterConnect: AfterConnectHook? = nil, sink: (@Sendable (LinkEvent) -> Void)? = nil) {
        self.opener = opener
        self.serial = expectedSerial
        self.pinsSerial = pinsSerial || expectedSerial != nil
        self.timing = timing
        self.streams = streams
        self.recorder = recorder
        self.clock = clock
        self.random = random
        self.afterConnect = afterConnect
        let (stream, continuation) = AsyncStream<LinkEvent>.makeStream()
        events = stream
        if let sink {
            continuation.finish()
            emit = sink
            finishEvents = {}
        } else {
            emit = { continuation.yield($0) }
            finishEvents = { continuation.finish() }
        }
    }

    /// Runs until the task is cancelled (returns normally, after `.stopped(nil)`) or the
    /// pod speaks no common protocol version (throws, after `.stopped(error)`).
    package func run() async throws(PodLinkError) {
        var attempt = 0
        var everConnected = false
        defer { finishEvents() }
        while !Task.isCancelled {
            var reason = LinkFailure.transport(.closed)
            var delay: Duration?
            do {
                let transport = try await opener.open()
                emit(.connecting(endpoint: transport.endpoint))
                let emit = self.emit
                let session = PodSession(transport: transport, timing: timing, recorder: recorder) { frame, micros in
                    emit(.frame(frame, receivedMicros: micros))
                }
                self.session = session
                await session.start()
                let ended = try await drive(session, onConnected: {
                    // Only a good handshake counts as a reconnect, and resets the backoff.
                    if everConnected { reconnects &+= 1 }
                    attempt = 0
                    everConnected = true
                })
                reason = .transport(ended)
            } catch let error as PodLinkError {
                if case .protocolVersionMismatch = error {
                    await closeSession()
                    emit(.stopped(error))
                    throw error
                }
                reason = .link(error)
                if Self.isFinalRefusal(error) {
                    // §7.6: a final answer is reported and asked again much later, not in a loop.
                    delay = timing.refusedRetryDelay
                    emit(.refused(error, retryIn: timing.refusedRetryDelay))
                }
            } catch {
                reason = LinkFailure(error)
            }
            if Task.isCancelled { await stopStreaming() }
            await closeSession()
            if Task.isCancelled { break }
            // A link lost after HELLO but before the start-up finished (in the after-connect
            // hook, at START_STREAM, or re-running it after a reboot) ends here, not at
            // `.ended`: say so, or the daemon would go on taking the pod for connected. The
            // pod was connected all the same: its next good start-up is a reconnect.
            if announced { everConnected = true }
            announceDisconnected(reason.asTransportError)
            let wait = delay ?? timing.reconnectDelay(attempt: attempt, random: random())
            attempt += 1
            emit(.retrying(attempt: attempt, delay: wait, reason: reason))
            do { try await Task.sleep(for: wait) } catch { break }
        }
        await closeSession()
        emit(.stopped(nil))
    }

    /// A nack of a start-up request other than BUSY (retried already) and the statuses that
    /// only mean "no session yet", or an answer the hub cannot read: asking again at once
    /// would get the same answer.
    static func isFinalRefusal(_ error: PodLinkError) -> Bool {
        switch error {
        case .nack(_, let status): ![.busy, .notReady, .noSession].contains(status)
        case .unexpectedResponse: true
        default: false
        }
    }

    /// Start-up, then follow the session until it ends: re-run the start-up after a pod
    /// reboot (BOOT, or a lost session found by a probe or a request), probe a silent link,
    /// ask again for a refused stream at a long interval. Returns why the link ended.
    private func drive(_ session: PodSession, onConnected: () -> Void) async throws(PodLinkError) -> TransportError {
        // BOOTs that arrived before HELLO was answered are covered by that HELLO; a reset
        // after it makes the remaining start-up requests fail (the pod answers NO_SESSION
        // until HELLO), which the probe below or a reconnect recovers from.
        try await exclusively { () async throws(PodLinkError) in _ = try await self.startUp(session) }
        onConnected()
        let timing = self.timing
        let metronome = Task {
            // §7.7: wake when the silence reaches the timeout, not at a later beat; tick the
            // link only when the silence did, or a status check or a stream retry is due.
            while !Task.isCancelled {
                let next = timing.nextLivenessCheck(lastFrame: await session.lastFrameAt, now: .now,
                                                    due: self.checksDue())
                guard (try? await Task.sleep(until: next, clock: .continuous)) != nil else { return }
                let now = ContinuousClock.now
                let silent = now - (await session.lastFrameAt) >= timing.livenessTimeout
                let due = self.checksDue()
                if silent || due.map({ now >= $0 }) ?? false { await session.tick() }
            }
        }
        defer { metronome.cancel() }
        for await signal in session.signals {
            switch signal {
            case .podRebooted(let boots):
                try await exclusively { () async throws(PodLinkError) in
                    guard boots > self.bootsAtLastHello else { return }  // covered by a HELLO since
                    try await self.restart(session, .bootEvent)
                }
            case .tick:
                let asked = ContinuousClock.now - lastStatusAt >= timing.statusInterval
                let silent = ContinuousClock.now - (await session.lastFrameAt) >= timing.livenessTimeout
                if asked || silent {
                    try await probe(session, liveness: silent)
                } else if let due = streamRetryAt, ContinuousClock.now >= due {
                    try await startStreaming(session)
                }
            case .ended(let reason):
                announceDisconnected(reason)
                return reason
            }
        }
        return .closed
    }

    /// When the liveness clock must tick for something other than silence: the periodic
    /// status check, or asking again for a refused stream.
    private func checksDue() -> ContinuousClock.Instant? {
        let status = lastStatusAt + timing.statusInterval
        return streamRetryAt.map { min($0, status) } ?? status
    }

    /// Runs `body` as the only start-up or recovery; one already running is waited for
    /// instead (its outcome stands for this one's), so a BOOT, a probe and a request answered
    /// NO_SESSION at the same moment re-run the start-up once.
    private func exclusively(_ body: () async throws(PodLinkError) -> Void) async throws(PodLinkError) {
        if restarting {
            await withCheckedContinuation { restartWaiters.append($0) }
            return
        }
        restarting = true
        defer {
            restarting = false
            let waiters = restartWaiters
            restartWaiters = []
            for w in waiters { w.resume() }
        }
        do {
            try await body()
            restartSucceeded = true
        } catch {
            restartSucceeded = false
            throw error
        }
    }

    /// The pod reset (found by `evidence`): forget the sequence baseline, say so, run the
    /// start-up again on the same link. Call inside `exclusively`.
    private func restart(_ session: PodSession, _ evidence: RebootEvidence) async throws(PodLinkError) {
        if evidence != .bootEvent {
            unannouncedReboots &+= 1
            await session.resetSequence()
        }
        emit(.podRebooted(evidence))
        _ = try await startUp(session)
    }

    /// §7.7: GET_STATUS on a silent link, or as the periodic status check (`liveness: false`,
    /// not counted as a probe). A pod that says it has no session, or another boot count,
    /// reset without the hub seeing BOOT: the start-up is run again. No answer at all ends
    /// the link (reconnect). The status also tells a clock lost without a reset
    /// (`.clockInvalid`, once per loss) and a stream the pod dropped.
    private func probe(_ session: PodSession, liveness: Bool) async throws(PodLinkError) {
        try await exclusively { () async throws(PodLinkError) in
            guard let evidence = try await self.ask(session, liveness: liveness) else { return }
            try await self.restart(session, evidence)
        }
    }

    /// One GET_STATUS: how it shows the session lost, or nil when it is intact (then the
    /// status is passed on and acted on).
    private func ask(_ session: PodSession, liveness: Bool) async throws(PodLinkError) -> RebootEvidence? {
        if liveness { probes &+= 1 }
        lastStatusAt = .now
        let status: PodStatus
        do {
            let response = try await session.request(.getStatus)
            guard case .status(let s) = response.body else { return nil }
            status = s
        } catch .nack(_, let s) where s == .noSession || s == .notReady {
            return .noSession(s)
        }  // a timeout is thrown on: no answer at all ends this link (reconnect)
        if let known = info?.bootCount, status.bootCount != known {
            return .bootCount(from: known, to: status.bootCount)
        }
        if !status.clockValid, anchor != nil, !clockLossReported {
            clockLossReported = true
            emit(.clockInvalid)
        }
        emit(.status(status))
        if streamRetryAt == nil, !streams.isEmpty, status.streaming.isEmpty {
            // The pod is alive but stopped streaming (a v1 pod's reset of its stream state).
            try await startStreaming(session)
        }
        return nil
    }

    /// §7.2: a request sent while the session count was `before` was answered `status`.
    /// NO_SESSION (or a v1.0 NOT_READY to GET_STATUS or PING) proves the session lost: the
    /// start-up runs again. A v1.0 NOT_READY to anything else is probed first: an intact
    /// session makes it the request's final answer. Returns whether a start-up ran since the
    /// request was sent (so it may be sent once more).
    private func recover(_ session: PodSession, sentIn before: Int, type: MessageType, status: Status) async -> Bool {
        do {
            try await exclusively { () async throws(PodLinkError) in
                guard await session.sessions == before else { return }  // restarted since
                if status == .noSession || type == .getStatus || type == .ping {
                    try await self.restart(session, .noSession(status))
                } else if let evidence = try await self.ask(session, liveness: true) {
                    try await self.restart(session, evidence)
                }
            }
        } catch {
            return false
        }
        let sessions = await session.sessions
        return restartSucceeded && sessions > before
    }

    /// Runs the start-up of spec §7.1; returns how many BOOTs the session had seen when
    /// HELLO was answered.
    private func startUp(_ session: PodSession) async throws(PodLinkError) -> Int {
        try await session.sendDelimiter()
        let hub = Wire.version...Wire.version
        let hello: Response
        do {
            hello = try await session.request(.hello(HelloRequest(minVersion: hub.lowerBound, maxVersion: hub.upperBound,
                                                                  maxMinor: Wire.minorVersion)))
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
        bootsAtLastHello = bootsAtHello
        if pinsSerial, let serial, serial != podInfo.serial { throw .wrongPod(expected: serial, found: podInfo.serial) }
        serial = podInfo.serial
        info = podInfo
        await session.announce(sides: podInfo.sides, channelsPerSide: podInfo.piezoChannelsPerSide)
        emit(.connected(podInfo, endpoint: session.endpoint))
        announced = true

        let clockResponse = try await session.request(.setClock(clock()))
        if case .clock(let a) = clockResponse.body {
            anchor = a
            clockLossReported = false
            emit(.clockSet(a))
        }
        hookError = nil
        if let afterConnect {
            do { try await Self.$insideStartUp.withValue(true) { try await afterConnect(self) } } catch { hookError = "\(error)" }
        }
        streamRetryAt = nil
        try await startStreaming(session)
        // The first status at the next tick, not a whole interval on: a hub that restarted
        // learns what the pod is doing (its power, switched by its own schedule) at once.
        lastStatusAt = ContinuousClock.now - timing.statusInterval
        return bootsAtHello
    }

    /// START_STREAM; a final nack keeps the link (clock, schedules and alarms work without a
    /// stream), is reported, and is asked again after `refusedRetryDelay`.
    private func startStreaming(_ session: PodSession) async throws(PodLinkError) {
        do {
            _ = try await session.request(.startStream(streams))
            streamRetryAt = nil
            isStreaming = true
            emit(.streaming(streams))
        } catch let error where Self.isFinalRefusal(error) {
            isStreaming = false
            streamRetryAt = .now + timing.refusedRetryDelay
            emit(.refused(error, retryIn: timing.refusedRetryDelay))
        }
    }

    /// Best effort on the way out (task cancelled): STOP_STREAM, one attempt, so the pod does
    /// not keep streaming into a closed tty and the next session starts clean.
    private func stopStreaming() async {
        guard let session, isStreaming else { return }
        isStreaming = false
        // An unstructured task: the caller is cancelled, the request must still wait for its answer.
        let stop = Task { _ = try? await session.request(.stopStream, retries: 0) }
        await stop.value
    }

    /// `.disconnected`, once per `.connected`.
    private func announceDisconnected(_ reason: TransportError) {
        guard announced else { return }
        announced = false
        emit(.disconnected(reason: reason))
    }

    private func closeSession() async {
        guard let session else { return }
        await session.close()
        settled.add(await session.counters())
        self.session = nil
        isStreaming = false
        streamRetryAt = nil
    }

    /// Sends a request on the current link (schedules, alarms, power, status...). A nack
    /// throws `.nack` with the pod's status code; no link throws `.notConnected`; a request
    /// for a feature the pod did not announce in HELLO throws `.unsupportedByPod` unsent.
    /// A request answered NO_SESSION (the pod reset unseen) is sent once more after the
    /// start-up ran again (spec §7.2); the caller gets that answer. A caller whose after-connect
    /// hook re-sends its state anyway, and that holds a lock the hook needs (the schedule
    /// service), passes `resendsAfterLostSession: false`: the start-up is set going and the
    /// NO_SESSION returned at once, so the hook can run.
    package func send(_ message: Message, resendsAfterLostSession: Bool = true) async throws(PodLinkError) -> Response {
        guard let session else { throw .notConnected }
        if let info, let (request, feature, name) = Self.feature(needed: message) {
            guard info.features.contains(feature) else { throw .unsupportedByPod(request: request, feature: name) }
            // §5: a message type of a minor revision only on a link that agreed that minor.
            guard info.minor >= Self.minorIntroducing(request) else {
                throw .unsupportedByPod(request: request, feature: "\(name) on a v1.\(info.minor) link")
            }
        }
        let before = await session.sessions
        let response: Response
        do {
            response = try await session.request(message)
        } catch .nack(let type, let status) where Self.mayLoseSession(status) && !Self.insideStartUp {
            guard resendsAfterLostSession else {
                Task { _ = await self.recover(session, sentIn: before, type: type, status: status) }
                throw .nack(request: type, status: status)
            }
            guard await recover(session, sentIn: before, type: type, status: status), let again = self.session else {
                throw .nack(request: type, status: status)
            }
            response = try await again.request(message)  // once, with a new id
        }
        // Every acknowledged SET_CLOCK re-anchors the pod's ticks (DST, re-sync, a clock the
        // pod lost), not only the start-up one: the event carries it to whoever times data.
        if case .clock(let a) = response.body {
            anchor = a
            clockLossReported = false
            emit(.clockSet(a))
        }
        return response
    }

    /// TRIGGER_ALARM (v1.1): fire `trigger.side`'s alarm now; the pod disarms that side's
    /// alarm's next occurrence within 3 hours. Needs the pod's alarm-trigger feature bit and a
    /// link that agreed minor 1 (§5).
    package func triggerAlarm(_ trigger: AlarmTrigger) async throws(PodLinkError) {
        _ = try await send(.triggerAlarm(trigger))
    }

    /// Statuses that may mean the pod lost its session: v1.1 NO_SESSION, v1.0 NOT_READY (§7.2).
    static func mayLoseSession(_ status: Status) -> Bool { status == .noSession || status == .notReady }

    /// The minor revision that added a request type (0: v1.0).
    static func minorIntroducing(_ type: MessageType) -> UInt8 { type == .triggerAlarm ? 1 : 0 }

    /// The HELLO feature bit a request needs, if any, with the request's type and the feature's name.
    static func feature(needed message: Message) -> (MessageType, FeatureSet, String)? {
        switch message {
        case .setAlarm: (.setAlarm, .vibrationAlarm, "vibration alarm")
        case .clearAlarm: (.clearAlarm, .vibrationAlarm, "vibration alarm")
        case .snooze: (.snooze, .snooze, "snooze")
        case .setPowerSchedule: (.setPowerSchedule, .powerSchedule, "power schedule")
        case .triggerAlarm: (.triggerAlarm, .alarmTrigger, "alarm trigger")
        default: nil
        }
    }

    /// Counters over every session so far, including the live one.
    package func counters() async -> LinkCounters {
        var c = settled
        if let session { c.add(await session.counters()) }
        c.reconnects = reconnects
        c.livenessProbes = probes
        c.unannouncedReboots = unannouncedReboots
        return c
    }
}

extension ClockSetting {
    /// The hub's clock now and the system zone's current UTC offset.
    @Sendable package static func systemNow() -> ClockSetting {
        let now = SystemClock().now()
        return ClockSetting(unixMillis: Int64((now.timeIntervalSince1970 * 1000).rounded(.down)),
                            utcOffsetMinutes: Int16(clamping: TimeZone.current.secondsFromGMT(for: now) / 60))
    }
}
