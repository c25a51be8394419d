import Foundation
import Logging
import PodDevice
import PodProtocol
import SleepSchedule
import SleepStore
import SleepDomain

/// The schedule service of the running hub: works out what each side of the connected pod
/// should hold (manual schedule, else inference over the side's main nights, else the
/// default), and carries out `SchedulePushPolicy`'s decisions by sending real PodProtocol
/// requests through the `PodConnection`, feeding the pod's answers back, recording every
/// push and every alarm event in the store and telling people through the `HubReporter`.
///
/// The daemon calls, in its own words (docs/schedule.md §4):
/// - `podConnected(_:)` from inside the connection's `AfterConnectHook` (every connect and
///   every pod reboot: the pushes land between SET_CLOCK and START_STREAM);
/// - `podDisconnected()` on `LinkEvent.disconnected`;
/// - `podEvent(_:podSerial:at:)` for each EVENT frame (time from the clock anchor);
/// - `sessionsChanged()` after a session was stored;
/// - `run()` in a task of its own for the timed work (retries, DST pre-push, clock re-sync,
///   weekday/weekend alarm switch); it ends when that task is cancelled.
///
/// One operation at a time: the actor holds a lock across each exchange with the pod, so a
/// timer tick never sends while an answer is awaited (actors are re-entrant at `await`).
package actor ScheduleDriver {
    package let store: NightStore
    package let configuration: HubConfiguration
    package let clock: HubClock
    package let reporter: HubReporter
    /// Where alarm events and pushes are published (nil: only stored and reported).
    package let bus: HubBus?
    package let podZone: TimeZone
    let resolver: ScheduleResolver

    private var policy: SchedulePushPolicy
    private var connection: PodConnection?
    /// The pod being served (the last one that connected).
    package private(set) var podSerial: String?
    private var podSides: [BedSide] = BedSide.allCases
    private var bootCounts: [String: UInt32] = [:]
    /// The schedule in force per pod and side, with its why: decided here on this service's
    /// triggers (connect, stored night, manual schedule or alarm switch changed) and read by
    /// the API and MQTT through `decisions(podSerial:)`, smart wake and presence power through
    /// `scheduleInForce(side:)`; nobody else infers.
    private var planned: [String: [BedSide: SideScheduleDecision]] = [:]
    /// The schedule last told on the console per side of the served pod.
    private var reported: [BedSide: PodSchedule] = [:]
    /// The decisions for the pod being served.
    private var servedDecisions: [BedSide: SideScheduleDecision] { podSerial.flatMap { planned[$0] } ?? [:] }

    private var wakeAt: Date?
    private var wakeSignal: AsyncStream<Void>.Continuation?

    private var busy = false
    private var lockWaiters: [CheckedContinuation<Void, Never>] = []

    /// Sides whose power or alarm was acknowledged since they were last reported.
    private var touched: Set<BedSide> = []
    private var reportedClockOffset: Int?
    /// What the connected pod announced in HELLO: commands for features it lacks are not sent.
    private var features: FeatureSet = .all
    /// Commands already reported as not sent for a missing feature on this connection.
    private var featureReported: Set<ScheduleCommandKey> = []
    /// Pushes sent to the pod, and acknowledged, since this driver started (for status lines).
    package private(set) var pushesSent = 0
    /// Presence-driven power's keep-on: the pod's off of a side's window in force moved later.
    private var holds: [BedSide: PowerHold] = [:]
    /// Presence-driven power switched these sides off inside their window, until the given end.
    private var switchedOff: [BedSide: Date] = [:]
    package private(set) var pushesAcknowledged = 0

    package init(store: NightStore, configuration: HubConfiguration, clock: HubClock, reporter: HubReporter,
                bus: HubBus? = nil) {
        self.store = store
        self.bus = bus
        self.configuration = configuration
        self.clock = clock
        self.reporter = reporter
        self.podZone = configuration.podTimeZone
        self.resolver = ScheduleResolver(store: store, settings: configuration.schedule, podZone: configuration.podTimeZone)
        self.policy = SchedulePushPolicy(configuration: configuration.schedule.push)
    }

    // MARK: What the daemon calls

    /// The pod finished HELLO and SET_CLOCK (first connect, reconnect, or after a reboot).
    /// Returns when everything due now was sent and answered (or failed).
    package func podConnected(_ connection: PodConnection) async {
        guard let info = await connection.info else {
            reporter.warning("schedule: connected pod has no identity yet; nothing pushed")
            return
        }
        await lock()
        defer { unlock() }
        let serial = info.serial
        if podSerial != serial {
            // Another pod: nothing it acknowledged is known.
            policy = SchedulePushPolicy(configuration: configuration.schedule.push)
            reported = [:]
            reportedClockOffset = nil
        }
        self.connection = connection
        podSerial = serial
        podSides = info.sides >= 2 ? [.left, .right] : [.left]
        let previousBoot = bootCounts[serial]
        bootCounts[serial] = info.bootCount
        let rebooted = previousBoot.map { $0 != info.bootCount } ?? false
        guard configuration.schedule.enabled else { return }

        touched = Set(podSides)
        reportedClockOffset = nil
        // One start-up per handshake: take the policy off the link first, so neither the new
        // desired state nor the reboot sends anything before `connected` sends it all once
        // (after a reboot on the same link the policy still thought it was connected).
        await process(.disconnected)
        if rebooted {
            reporter.event("pod \(serial) restarted (boot \(info.bootCount)): its clock, schedules and alarms were reset; sending them again")
            await process(.podRebooted)
        }
        if let desired = await computeDesired(serial: serial, now: clock.now()) {
            await process(.desiredChanged(desired))
        }
        features = info.features
        featureReported = []
        // The handshake already set the clock (PodConnection sends SET_CLOCK after HELLO).
        if let anchor = await connection.anchor {
            let sync = ClockSync(timeZoneIdentifier: podZone.identifier, utcOffsetMinutes: Int(anchor.utcOffsetMinutes))
            reportedClockOffset = sync.utcOffsetMinutes
            await recordHandshakeClock(sync, serial: serial, at: Date(timeIntervalSince1970: Double(anchor.unixMillis) / 1000))
            await process(.connectedWithClock(sync))
        } else {
            await process(.connected)
        }
        await reportAcknowledgedSides()
    }

    /// The link to the pod went away; nothing is sent until it connects again.
    package func podDisconnected() async {
        await lock()
        defer { unlock() }
        connection = nil
        await process(.disconnected)
    }

    /// An EVENT from the pod. Alarm and power events are recorded; a failed alarm is
    /// reported, and one that failed for an invalid clock makes the clock be sent again.
    package func podEvent(_ event: PodEvent, podSerial serial: String, at exactTime: Date) async {
        // The pod fires on whole minutes; its tick maps to within milliseconds of them, either side.
        let time = Date(timeIntervalSince1970: exactTime.timeIntervalSince1970.rounded())
        let side = event.side
        let sideText = side.map { " (\($0))" } ?? ""
        let local = LocalDateTime(time, in: podZone).timeOfDay
        let kind: String
        var text: String
        var problem = false
        switch event.kind {
        case .alarmStarted:
            kind = "alarm_started"
            text = "alarm fired on the pod\(sideText) at \(local), intensity \(event.argument)%"
        case .alarmStopped:
            kind = "alarm_stopped"
            let why = ["after its duration", "by the button", "cleared by the hub"]
            text = "alarm on the pod\(sideText) stopped at \(local) "
                + (Int(event.argument) < why.count ? why[Int(event.argument)] : "(reason \(event.argument))")
        case .alarmSnoozed:
            kind = "alarm_snoozed"
            text = "alarm on the pod\(sideText) snoozed at \(local) for \(event.argument) s"
        case .alarmFailed:
            kind = "alarm_failed"
            problem = true
            let why = event.argument == 1 ? "motor fault"
                : event.argument == 2 ? "the pod's clock was not valid; sending the clock again" : "reason \(event.argument)"
            text = "alarm on the pod\(sideText) FAILED at \(local): \(why)"
        case .powerOn:
            kind = "power_on"
            text = "power on\(sideText) at \(local), level \(event.argument)%"
        case .powerOff:
            kind = "power_off"
            text = "power off\(sideText) at \(local)"
        case .boot, .button, .other:
            return
        }
        let alarmKind: AlarmNotice.Kind? = switch event.kind {
        case .alarmStarted: .fired
        case .alarmSnoozed: .snoozed
        case .alarmStopped: .stopped
        case .alarmFailed: .failed
        default: nil
        }
        if let alarmKind {
            bus?.publish(.alarm(AlarmNotice(serial: serial, side: event.side, kind: alarmKind, at: time,
                                            argument: Int(event.argument), text: text)))
        }
        do {
            try await store.recordPodEvent(PodEventRecord(
                podSerial: serial, at: Int64(time.timeIntervalSince1970.rounded(.down)), kind: kind,
                side: side, argument: Int(event.argument), description: text))
        } catch {
            reporter.warning("could not record pod event '\(text)': \(error)")
        }
        switch event.kind {
        case .powerOn, .powerOff: reporter.logger.info("\(text)")
        default: if problem { reporter.warning(text) } else { reporter.event(text) }
        }
        if event.kind == .alarmFailed, event.argument == 2, serial == podSerial {
            await lock()
            defer { unlock() }
            await process(.podClockInvalid)
        }
    }

    /// The pod's status said its clock is not valid though it did not reset: the clock is sent
    /// again at once, before an alarm falls due and fails (ALARM_FAILED 2 said so only then).
    package func podClockLost(podSerial serial: String) async {
        guard configuration.schedule.enabled, serial == podSerial else { return }
        await lock()
        defer { unlock() }
        await process(.podClockInvalid)
    }

    /// The hub stopped the side's alarm with CLEAR_ALARM, which clears it on the pod as well:
    /// the alarm in force is armed again, after its firing if that is still ahead today.
    package func alarmCleared(podSerial serial: String, side: BedSide) async {
        guard configuration.schedule.enabled, serial == podSerial else { return }
        await lock()
        defer { unlock() }
        let now = clock.now()
        var rearmAt: Date?
        if let desired = policy.desired,
           case .setAlarm(_, let entry?)? = desired.commands(at: now, alarmHoldover: policy.configuration.alarmHoldoverSeconds,
                                                             transitionLead: policy.configuration.preTransitionLeadSeconds)
               .first(where: { $0.key == .alarm(side) }) {
            rearmAt = LocalTimeResolver.rearmInstant(of: entry, clearedAt: now, in: podZone)
        }
        reporter.event("\(side): alarm cleared on the pod by a stop; armed again "
                       + (rearmAt.map { "at \(LocalDateTime($0, in: podZone).timeOfDay), after today's" } ?? "now"))
        await process(.alarmCleared(side, rearmAt: rearmAt))
    }

    /// A session was stored (or re-analysed): infer again, push only what changed.
    package func sessionsChanged() async {
        guard configuration.schedule.enabled else { return }
        await lock()
        defer { unlock() }
        guard let serial = podSerial else { return }
        await replanLocked(serial: serial)
    }

    /// Works the schedule of `serial` out again now (its manual schedule or alarm switch
    /// changed): stored and pushed (if something changed) when it is the pod served. Returns
    /// the decisions in force afterwards.
    package func replan(podSerial serial: String) async -> [BedSide: SideScheduleDecision] {
        guard configuration.schedule.enabled else { return [:] }
        await lock()
        defer { unlock() }
        await replanLocked(serial: serial)
        return planned[serial] ?? [:]
    }

    /// The schedule in force per side of `serial`, with its why. Decided here first if this
    /// service has not yet decided for that pod since it started (a pod known from the store,
    /// not connected yet, or one whose connect is being served): without waiting for pushes
    /// in progress, and only held until this service's own trigger decides again.
    package func decisions(podSerial serial: String) async -> [BedSide: SideScheduleDecision] {
        guard configuration.schedule.enabled else { return [:] }
        if let known = planned[serial], !known.isEmpty { return known }
        await plan(serial: serial, sides: BedSide.allCases, now: clock.now(), onlyMissing: true)
        return planned[serial] ?? [:]
    }

    private func replanLocked(serial: String) async {
        guard serial == podSerial else {
            await plan(serial: serial, sides: BedSide.allCases, now: clock.now())
            return
        }
        guard let desired = await computeDesired(serial: serial, now: clock.now()) else { return }
        await process(.desiredChanged(desired))
        await reportAcknowledgedSides()
    }

    /// Timed work: delivers the policy's ticks at the instants it asked for, on the hub's
    /// clock (which may run faster than real time). Returns when the task is cancelled.
    package func run() async {
        while !Task.isCancelled {
            let (signal, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            wakeSignal = continuation
            if let at = wakeAt {
                let remaining = at.timeIntervalSince(clock.now())
                if remaining <= 0 {
                    wakeAt = nil
                    continuation.finish()
                    await lock()
                    await process(.tick)
                    await reportAcknowledgedSides()
                    unlock()
                    continue
                }
                let real = max(clock.realDuration(of: remaining), .milliseconds(1))
                await Self.firstOf(sleeping: real, orSignal: signal)
            } else {
                await Self.firstOf(sleeping: nil, orSignal: signal)
            }
            continuation.finish()
        }
        wakeSignal = nil
    }

    /// The schedule worked out for a side of the connected pod (smart wake takes its alarms).
    package func scheduleInForce(side: BedSide) -> PodSchedule? { servedDecisions[side]?.schedule }

    /// Whether every desired command is acknowledged by the connected pod.
    package var isInSync: Bool {
        guard policy.isConnected, let desired = policy.desired, policy.inFlight == nil else { return false }
        return desired.commands(at: clock.now(), alarmHoldover: configuration.schedule.push.alarmHoldoverSeconds,
                                transitionLead: configuration.schedule.push.preTransitionLeadSeconds)
            .allSatisfy { policy.acknowledged[$0.key] == $0 }
    }

    /// The schedule commands (`podbridge schedule`'s) on this driver's store, settings and clock,
    /// for the control side (manual schedule set through the API).
    package func console() -> ScheduleConsole {
        ScheduleConsole(store: store, settings: configuration.schedule, zone: nil, configuredZone: configuration.podTimeZone,
                        now: clock.now())
    }

    // MARK: Desired state

    private func computeDesired(serial: String, now: Date) async -> DesiredPodState? {
        await plan(serial: serial, sides: podSides, now: now)
        return desiredState(now: now)
    }

    /// Decides each side of `serial` (the one call of the inference in the running hub) and
    /// keeps the decision in force here. For the pod served (the last one connected) it is
    /// also stored and told on the console; another pod's (one the API or MQTT asked about)
    /// is only held, and stored when that pod connects.
    /// `onlyMissing`: a look on request, held only where nothing is yet (a trigger's decision
    /// made meanwhile wins), neither stored nor told.
    private func plan(serial: String, sides: [BedSide], now: Date, onlyMissing: Bool = false) async {
        let nowUnix = Int64(now.timeIntervalSince1970.rounded(.down))
        let served = serial == podSerial
        for side in sides {
            do {
                let decision = try await resolver.decide(podSerial: serial, side: side, now: now)
                if onlyMissing {
                    if planned[serial]?[side] == nil { planned[serial, default: [:]][side] = decision }
                    continue
                }
                let changed = served ? try await store.setPodSchedule(decision.state(at: nowUnix)) : false
                if served, changed || reported[side] != decision.schedule {
                    reporter.event("schedule \(side) (\(decision.origin)): \(decision.schedule.summary) — \(decision.reason)")
                    reported[side] = decision.schedule
                }
                planned[serial, default: [:]][side] = decision
            } catch {
                if !onlyMissing { reporter.warning("schedule \(side): could not be worked out (\(error)); keeping the previous one") }
            }
        }
    }

    /// The schedules in force, with presence-driven power's holds applied (a hold that is over,
    /// or no longer fits the schedule, is dropped).
    private func desiredState(now: Date) -> DesiredPodState? {
        let schedules = podSides.compactMap { side -> PodSchedule? in
            guard let schedule = servedDecisions[side]?.schedule else { return nil }
            guard let hold = holds[side] else { return schedule }
            guard let held = hold.applied(to: schedule, now: now) else {
                holds[side] = nil
                return schedule
            }
            return held
        }
        switchedOff = switchedOff.filter { $0.value > now }
        return schedules.isEmpty ? nil : DesiredPodState(timeZone: podZone, schedules: schedules,
                                                          switchedOff: Set(switchedOff.keys))
    }

    // MARK: Presence-driven power

    /// Keep-on (`PresencePowerService`): the pod switches `side` off at `until` instead of its
    /// window's off, for the window in force; nil puts the schedule's own off back. Pushed now
    /// when a pod is connected, through the same policy as every schedule (only if it changed).
    package func holdPowerOff(side: BedSide, until: Date?) async {
        guard configuration.schedule.enabled else { return }
        await lock()
        defer { unlock() }
        holds[side] = until.map { PowerHold(side: side, until: $0) }
        guard podSerial != nil, let desired = desiredState(now: clock.now()) else { return }
        await process(.desiredChanged(desired))
        await reportAcknowledgedSides()
    }

    /// Presence-driven power switched `side` off (SET_POWER) inside its window, which ends at
    /// `until`; nil: it switched it on again. Until then no push of this driver switches the
    /// side on (a replan or a clock re-sync inside the window would otherwise send power-on).
    package func powerSwitchedOff(side: BedSide, until: Date?) async {
        guard configuration.schedule.enabled else { return }
        await lock()
        defer { unlock() }
        switchedOff[side] = until
        guard podSerial != nil, let desired = desiredState(now: clock.now()) else { return }
        await process(.desiredChanged(desired))
    }

    // MARK: Carrying out the policy

    /// Feeds one event and every answer it leads to, sending as the policy says.
    private func process(_ first: PushEvent) async {
        var queue = [first]
        while !queue.isEmpty {
            let event = queue.removeFirst()
            let actions = policy.handle(event, now: clock.now())
            var wake: Date?
            for action in actions {
                switch action {
                case .send(let command, let attempt):
                    queue.append(await send(command, attempt: attempt))
                case .wakeUp(let at):
                    wake = at
                case .failed(let command, let reason, let attempts):
                    reporter.warning("pod \(podSerial ?? "?") did not take \(command.key) [\(command.humanDescription)]: "
                        + "\(reason) after \(attempts) attempt\(attempts == 1 ? "" : "s"); "
                        + "tried again on the next reconnect, schedule change or DST change")
                case .inSync:
                    break
                }
            }
            setWake(wake)
        }
    }

    /// Sends one command (one or more requests) and returns the pod's answer as a policy
    /// event; records the push.
    private func send(_ command: ScheduleCommand, attempt: Int) async -> PushEvent {
        guard let connection, let serial = podSerial else { return .disconnected }
        let sentAt = clock.now()
        var answer: PushEvent = .acknowledged(command.key)
        var outcome = PushOutcome.ack
        var status: String?
        var detail: String?
        // A pod without the feature (HELLO bits) gets nothing for it and no warning at every
        // connect: said once per connection, counted as done.
        if let missing = missingFeature(command) {
            if !featureReported.contains(command.key) {
                featureReported.insert(command.key)
                reporter.logger.info("pod \(serial) has no \(missing): \(command.key) not sent")
            }
            return .acknowledged(command.key)
        }
        pushesSent += 1
        for message in wireMessages(command) {
            do {
                // Not re-sent by the link after a lost session: this driver holds its lock here, and
                // the start-up's hook (`podConnected`) needs it to send everything again anyway.
                let response = try await connection.send(message, resendsAfterLostSession: false)
                if response.status != .ok {
                    answer = .rejected(command.key, status: Int(response.status.rawValue))
                    outcome = .nack
                    status = response.status.description
                    break
                }
            } catch {
                switch error {
                case .nack(_, let s):
                    answer = .rejected(command.key, status: Int(s.rawValue))
                    outcome = .nack
                    status = s.description
                case .timeout:
                    answer = .timedOut(command.key)
                    outcome = .timeout
                case .disconnected, .notConnected:
                    answer = .disconnected
                    outcome = .linkLost
                    self.connection = nil
                case .unexpectedResponse, .wrongPod, .protocolVersionMismatch, .unsupportedByPod, .invalidRequest:
                    // Not an answer to this request: count it as none and let the policy retry.
                    answer = .timedOut(command.key)
                    outcome = .timeout
                }
                detail = error.description
                break
            }
        }
        do {
            try await store.recordSchedulePush(SchedulePushRecord(
                podSerial: serial, sentAt: Int64(sentAt.timeIntervalSince1970.rounded(.down)),
                command: command.key.description, description: command.humanDescription, attempt: attempt,
                outcome: outcome, status: status, detail: detail))
        } catch {
            reporter.warning("could not record push of \(command.key): \(error)")
        }
        bus?.publish(.schedulePushed(SchedulePushNotice(
            serial: serial, command: command.key.description, detail: command.humanDescription, attempt: attempt,
            outcome: SchedulePushNotice.Outcome(outcome), status: status, at: sentAt)))
        switch outcome {
        case .ack:
            pushesAcknowledged += 1
            switch command {
            case .setClock(let sync):
                if reportedClockOffset != sync.utcOffsetMinutes {
                    if reportedClockOffset != nil {
                        reporter.event("pod clock: \(command.humanDescription) — pod acknowledged")
                    }
                    reportedClockOffset = sync.utcOffsetMinutes
                }
            case .setPowerSchedule(let side, _), .setAlarm(let side, _):
                touched.insert(side)
            case .setPowerOn:
                break
            }
        case .nack:
            reporter.warning("pod refused \(command.key) [\(command.humanDescription)], attempt \(attempt): \(status ?? "nack")")
        case .timeout:
            reporter.warning("no answer from the pod to \(command.key), attempt \(attempt): \(detail ?? "timeout")")
        case .linkLost:
            reporter.logger.info("link lost while sending \(command.key)")
        }
        return answer
    }

    /// The push log shows the clock the handshake set, as if the driver had sent it (it is the
    /// same SET_CLOCK; the pod gets it once).
    private func recordHandshakeClock(_ sync: ClockSync, serial: String, at time: Date) async {
        pushesSent += 1
        pushesAcknowledged += 1
        let command = ScheduleCommand.setClock(sync)
        do {
            try await store.recordSchedulePush(SchedulePushRecord(
                podSerial: serial, sentAt: Int64(time.timeIntervalSince1970.rounded(.down)),
                command: command.key.description, description: command.humanDescription, attempt: 1,
                outcome: .ack, status: nil, detail: "sent by the handshake"))
        } catch {
            reporter.warning("could not record push of \(command.key): \(error)")
        }
    }

    /// The HELLO feature `command` needs and the pod lacks, if any.
    private func missingFeature(_ command: ScheduleCommand) -> String? {
        switch command {
        case .setClock: nil
        case .setPowerSchedule, .setPowerOn: features.contains(.powerSchedule) ? nil : "power schedule"
        case .setAlarm: features.contains(.vibrationAlarm) ? nil : "vibration alarm"
        }
    }

    /// The PodProtocol requests that carry `command`.
    private func wireMessages(_ command: ScheduleCommand) -> [Message] {
        switch command {
        case .setClock(let sync):
            return [.setClock(clock.clockSetting(utcOffsetMinutes: sync.utcOffsetMinutes))]
        case .setPowerSchedule(let side, let windows):
            let clear = Message.setPowerSchedule(PowerSchedule(
                side: side, days: [], on: TimeOfDay(wrapping: 0), off: TimeOfDay(wrapping: 0), level: 0))
            // The pod keeps one entry per weekday: windows covering the week replace all of
            // them; otherwise the days left out are cleared first.
            let covered = windows.reduce(WeekdayMask()) { $0.union($1.days) }
            let sets = windows.map { Message.setPowerSchedule($0.wire(side: side)) }
            return covered == .everyDay ? sets : [clear] + sets
        case .setPowerOn(let side, let level):
            return [.setPower(PowerCommand(side: side, on: true, level: UInt8(clamping: level)))]
        case .setAlarm(let side, let entry):
            guard let entry else { return [.clearAlarm(side: side)] }
            return [.setAlarm(entry.wire(side: side))]
        }
    }

    /// One line per side whose power and alarm in force are both acknowledged now.
    private func reportAcknowledgedSides() async {
        guard let serial = podSerial else { return }
        for side in touched.sorted() {
            guard case .setPowerSchedule(_, let windows)? = policy.acknowledged[.powerSchedule(side)],
                  case .setAlarm(_, let alarm)? = policy.acknowledged[.alarm(side)] else { continue }
            touched.remove(side)
            let origin = servedDecisions[side].map { " (\($0.origin))" } ?? ""
            let power = windows.isEmpty ? "power off" : "power " + windows.map(\.shortDescription).joined(separator: ", ")
            let alarmText = alarm.map { "alarm \($0.shortDescription)" } ?? "no alarm"
            reporter.event("schedule \(side)\(origin): \(power), \(alarmText) — pod acknowledged")
            do {
                try await store.markPodScheduleAcknowledged(podSerial: serial, side: side,
                                                      at: Int64(clock.now().timeIntervalSince1970.rounded(.down)))
                bus?.publish(.scheduleAcknowledged(serial: serial, side: side))
            } catch {
                reporter.warning("could not record the acknowledgement of schedule \(side): \(error)")
            }
        }
    }

    // MARK: Timer and lock

    private func setWake(_ at: Date?) {
        wakeAt = at
        wakeSignal?.yield(())
    }

    private static func firstOf(sleeping duration: Duration?, orSignal signal: AsyncStream<Void>) async {
        await withTaskGroup(of: Void.self) { group in
            if let duration {
                group.addTask { try? await Task.sleep(for: duration) }
            }
            group.addTask {
                for await _ in signal { return }
            }
            await group.next()
            group.cancelAll()
        }
    }

    private func lock() async {
        if busy {
            await withCheckedContinuation { lockWaiters.append($0) }
        } else {
            busy = true
        }
    }

    private func unlock() {
        if lockWaiters.isEmpty { busy = false } else { lockWaiters.removeFirst().resume() }
    }
}

extension SchedulePushNotice.Outcome {
    init(_ outcome: PushOutcome) {
        switch outcome {
        case .ack: self = .ack
        case .nack: self = .nack
        case .timeout: self = .timeout
        case .linkLost: self = .linkLost
        }
    }
}
