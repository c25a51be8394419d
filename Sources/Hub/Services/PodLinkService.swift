import Foundation
import PodAnalysis
import PodDevice
import PodProtocol
import ServiceLifecycle
import SleepDomain
import SleepStore

/// The service that owns one pod's link for the daemon's life: it runs the `PodConnection`
/// (which reconnects and re-handshakes on its own), says what the link does, records the
/// pod in the store, publishes connect/disconnect/clock/counter events on the bus, feeds
/// the pod's readings to its `PodPipeline`, its events to the schedule service, and makes
/// the pod reachable through `HubControl` while it is connected. Once a minute of the hub's
/// clock it ends the nights whose pod went away for good (`PodPipeline.expire()`,
/// `AbandonedStays`).
///
/// On graceful shutdown it stops the link and keeps what the open nights hold.
package final class PodLinkService: Service, Sendable {
    package let connection: PodConnection
    private let configuration: HubConfiguration
    private let store: NightStore
    private let clock: HubClock
    private let bus: HubBus
    private let reporter: HubReporter
    private let control: HubControl
    private let schedule: ScheduleDriver?
    private let wake: SmartWakeService?
    private let countersEvery: Duration
    /// The link's events (streamed frames already turned into seconds by `front`) and the hub
    /// clock's ticks, in one stream the follower takes in order.
    private let inputs: AsyncStream<FollowerInput>
    private let feed: AsyncStream<FollowerInput>.Continuation
    /// Decoded frames go through the router and front ends here, on the link's reader.
    private let front: LinkSignalFront

    /// What the follower takes, in order: a link event other than a streamed frame, a side's
    /// completed seconds, or a minute of the hub's clock.
    enum FollowerInput: Sendable { case link(LinkEvent), signal(SideOutput), tick }

    /// - Parameters:
    ///   - opener: how the link (re)opens the pod: a fixed path, or discovery by serial.
    ///   - countersEvery: how often the link counters are published (real time).
    package init(configuration: HubConfiguration, store: NightStore, clock: HubClock, bus: HubBus, reporter: HubReporter,
                control: HubControl, schedule: ScheduleDriver?, opener: any PodOpener, recorder: CaptureRecorder? = nil,
                timing: LinkTiming? = nil, countersEvery: Duration = .seconds(5), wake: SmartWakeService? = nil) {
        self.wake = wake
        self.configuration = configuration
        self.store = store
        self.clock = clock
        self.bus = bus
        self.reporter = reporter
        self.control = control
        self.schedule = schedule
        self.countersEvery = countersEvery
        let podZone = configuration.podTimeZone
        let (inputs, feed) = AsyncStream.makeStream(of: FollowerInput.self)
        (self.inputs, self.feed) = (inputs, feed)
        let front = LinkSignalFront(forward: { feed.yield($0) })
        self.front = front
        connection = PodConnection(
            // Without pod.serial the opener chooses the pod (discovery takes another once the
            // one in use is unplugged), and the link serves whichever it opened.
            opener: opener, expectedSerial: configuration.pod.serial, pinsSerial: false,
            timing: timing ?? LinkTiming(reconnectMaxDelay: .milliseconds(Int64(configuration.pod.reconnectMaxSeconds * 1000))),
            recorder: recorder,
            clock: { clock.clockSetting(podZone: podZone) },
            afterConnect: { connection in
                if let schedule { await schedule.podConnected(connection) }
            },
            sink: { front.take($0) })
    }

    package func run() async throws {
        let connection = self.connection
        let outcome: Result<Void, PodLinkError>? = await cancelWhenGracefulShutdown { [self] in
            await withTaskGroup(of: Result<Void, PodLinkError>?.self) { group in
                let (inputs, feed) = (self.inputs, self.feed)
                group.addTask {
                    // The inputs end when the connection stops (shutdown, or it gave up), after its last event.
                    defer { feed.finish() }
                    do throws(PodLinkError) { try await connection.run(); return .success(()) } catch { return .failure(error) }
                }
                group.addTask { [self] in await publishCountersPeriodically(); return nil }
                group.addTask { [self] in
                    while case .enqueued = feed.yield(.tick) {
                        do { try await Task.sleep(for: tickEvery) } catch { break }
                    }
                    return nil
                }
                var link = LinkFollower(service: self)
                for await input in inputs {
                    switch input {
                    case .link(let event): await link.handle(event)
                    case .signal(let output): await link.handle(output)
                    case .tick: await link.tick()
                    }
                }
                await link.shutdown()
                var result: Result<Void, PodLinkError>?
                group.cancelAll()
                while let next = await group.next() {
                    if let next { result = next }
                }
                return result
            }
        }
        if case .failure(let error)? = outcome { throw error }
    }

    /// How often the follower looks for stays whose data stopped: a minute of the hub's clock
    /// (a fraction of a second of real time on the demo's and the tests' fast clocks).
    private var tickEvery: Duration { max(clock.realDuration(of: 60), .milliseconds(250)) }

    private func publishCountersPeriodically() async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: countersEvery) } catch { return }
            await publishCounters()
        }
    }

    fileprivate func publishCounters() async {
        guard let serial = await connection.serial else { return }
        bus.publish(.linkCounters(serial: serial, LinkStats(await connection.counters())))
    }

    /// Follows the link's events in order; owns the pipeline of the pod on the link.
    private struct LinkFollower {
        let service: PodLinkService
        var pipeline: PodPipeline?
        var lastFailure: LinkFailure?
        /// Ends the stays a stopped hub kept for pods other than the one on the link.
        let abandoned: AbandonedStays
        private var lastSwept: HubClock.Mark?

        init(service: PodLinkService) {
            self.service = service
            abandoned = AbandonedStays(keeper: NightKeeper(store: service.store, configuration: service.configuration,
                                                           bus: service.bus, reporter: service.reporter),
                                       rules: SessionTracker.Rules(service.configuration.sessions), reporter: service.reporter)
        }

        var reporter: HubReporter { service.reporter }
        var serial: String? { pipeline?.serial }

        mutating func handle(_ event: LinkEvent) async {
            switch event {
            case .connecting(let endpoint):
                reporter.logger.debug("opening \(endpoint)")
            case .connected(let info, let endpoint):
                lastFailure = nil
                // A new pipeline for another pod, or the same pod at another sample rate (the
                // front's router starts again for it).
                let newPipeline = pipeline?.serial != info.serial || pipeline?.sampleRate != info.sampleRate
                if newPipeline {
                    await pipeline?.flush()
                    pipeline = PodPipeline(serial: info.serial, sampleRate: info.sampleRate,
                                           configuration: service.configuration, bus: service.bus,
                                           keeper: abandoned.keeper, reporter: reporter, clock: service.clock,
                                           wake: service.wake)
                }
                let now = service.clock.now()
                do {
                    try await service.store.recordPod(serial: info.serial, firmware: info.firmware.description,
                                                seenAt: Int64(now.timeIntervalSince1970))
                } catch {
                    reporter.warning("cannot record pod \(info.serial): \(error)")
                }
                service.control.register(service.connection, serial: info.serial)
                service.bus.publish(.podConnected(PodSummary(info), endpoint: endpoint, at: now))
                // After the pod is on the bus, so the side it says is in bed lands in its state.
                if newPipeline { await pipeline?.resume() }
            case .clockSet(let anchor):
                pipeline?.anchor(anchor)
                if let serial { service.bus.publish(.clockSet(serial: serial, anchor: anchor)) }
            case .streaming:
                reporter.event("streaming from pod \(serial ?? "?")")
            case .frame(let frame, _):
                guard let serial else { return }
                if case .event(let e) = frame.message, let schedule = service.schedule {
                    // The pod's own time of the event, from its tick; the hub's clock if none is set yet.
                    let time = pipeline?.clockAnchor.map { Date(timeIntervalSince1970: $0.unixTime(ofTick: e.tick)) }
                        ?? service.clock.now()
                    await schedule.podEvent(e, podSerial: serial, at: time)
                }
                if case .event(let e) = frame.message, e.kind == .powerOn || e.kind == .powerOff, let side = e.side {
                    service.bus.publish(.powerReported(serial: serial, side: side, on: e.kind == .powerOn))
                }
                // Streamed readings never come here (the front turned them into seconds).
                pipeline?.observe(frame.message)
            case .podRebooted(let evidence):
                // Logged, not printed: the handshake that follows prints the new boot, and the
                // schedule says what it sends again (one reboot, not three console lines). The
                // reason is how the reset was found (spec §7.7): BOOT, NO_SESSION, a boot count.
                reporter.logger.info("pod \(serial ?? "?") rebooted (\(evidence)): handshaking again")
            case .clockInvalid:
                reporter.warning("pod \(serial ?? "?") lost its clock without a reset: sending it again")
                if let serial { await service.schedule?.podClockLost(podSerial: serial) }
            case .status(let status):
                guard let serial, let pod = service.bus.state.pods[serial] else { return }
                for side in BedSide.allCases.prefix(pod.pod.sides) {
                    let on = status.powerMask & (1 << UInt8(side.index)) != 0
                    if pod.power[side] != on { service.bus.publish(.powerReported(serial: serial, side: side, on: on)) }
                }
            case .refused(let error, let retryIn):
                reporter.warning("pod \(serial ?? "?") refused: \(error); asking again in \(retryIn.components.seconds) s")
            case .disconnected(let reason):
                if let serial {
                    service.control.unregister(serial: serial)
                    await service.publishCounters()
                    service.bus.publish(.podDisconnected(serial: serial, reason: reason.description, at: service.clock.now()))
                }
                await service.schedule?.podDisconnected()
            case .retrying(let attempt, let delay, let reason):
                reporter.logger.debug("reconnect attempt \(attempt) in \(delay): \(reason)")
                // Say once per cause what keeps the pod from connecting, and what to do about it;
                // the API and the dashboard show it until it is over.
                if reason != lastFailure {
                    let advice = LinkFailureAdvice.advice(for: reason)
                    if let advice { reporter.warning(advice) }
                    // A device that is not there is no pod (unplugged, or not yet), not one the
                    // hub found and cannot use: the log says to check pod.path, the API does not.
                    let problem = LinkFailureAdvice.podIsThere(reason) ? advice : nil
                    if problem != nil || service.bus.state.linkProblem != nil {
                        service.bus.publish(.linkProblem(detail: problem, at: service.clock.now()))
                    }
                }
                lastFailure = reason
            case .stopped(let error):
                if let error { reporter.warning("link stopped: \(error)") }
            }
        }

        /// A side's seconds completed by the front.
        mutating func handle(_ output: SideOutput) async {
            // In place (optional chaining): the pipeline holds the open nights.
            let ended = await pipeline?.apply(output) ?? 0
            if ended > 0 { await service.schedule?.sessionsChanged() }
        }

        /// A minute of the hub's clock went by: nights whose data stopped more than `maxDataGap`
        /// ago (the pod gone in the night, now or before a restart) end, as the data would have
        /// ended them.
        mutating func tick() async {
            var ended = await pipeline?.expire() ?? 0
            // The store is read once a minute of the hub's clock, however many ticks a busy follower let queue.
            if lastSwept.map({ service.clock.seconds(since: $0) >= 60 }) ?? true {
                lastSwept = service.clock.mark()
                ended += await abandoned.end(now: service.clock.now(), except: serial)
            }
            if ended > 0 { await service.schedule?.sessionsChanged() }
        }

        mutating func shutdown() async {
            if let serial { service.control.unregister(serial: serial) }
            await pipeline?.flush()
        }
    }
}
