import Foundation
import PodDevice
import PodProtocol
import ServiceLifecycle
import SleepAnalysis
import SleepDomain
import SleepSchedule
import SleepStore
import SmartWake
import Synchronization

/// What smart wake tells the bus: a window opened, the decision (early trigger or the pod's
/// own alarm at the end), the alarm firing, a repeat, a snooze, the side emptying. `record`
/// is the wake's record as stored after the change.
package struct WakeNotice: Sendable, Hashable {
    package enum Kind: String, Sendable, Hashable, CaseIterable {
        case windowOpened = "window_opened"
        case decided
        case triggerFailed = "trigger_failed"
        case fired
        case snoozed
        case repeated
        case outOfBed = "out_of_bed"
        /// Seen out of bed, then back before the side stayed empty past the session's gap.
        case backInBed = "back_in_bed"
    }
    package var kind: Kind
    package var serial: String
    package var side: BedSide
    package var at: Date
    package var record: WakeRecord
    /// The console's sentence.
    package var text: String

    package init(kind: Kind, serial: String, side: BedSide, at: Date, record: WakeRecord, text: String) {
        self.kind = kind
        self.serial = serial
        self.side = side
        self.at = at
        self.record = record
        self.text = text
    }
}

/// The hub's live smart wake (docs/smart-wake.md). For each side of the connected pod with a
/// wake window (or "until out of bed") it:
///
/// - takes the window from the schedule in force (the alarm the `ScheduleDriver` pushed is the
///   window's end, so the pod fires there on its own clock if the hub dies or the link drops);
/// - inside the window, at every live epoch the pipeline offers (`wants`/`offer`), re-stages
///   the night so far forward-filtered (as the preliminary stages) and feeds the epochs to
///   `SmartWakeDecider`; on an early decision it sends TRIGGER_ALARM with the alarm's
///   intensity, pattern and duration (the pod then disarms that day's alarm itself, §6.2);
/// - follows the pod's alarm events on the bus: when it fired, snoozes, and, with "until out
///   of bed", rings again (TRIGGER_ALARM) `repeatAfterMinutes` after it stopped while the
///   side is still occupied, up to `maxRepeats`; the side empty for a minute past the alarm is
///   out of bed, and the wake ends once it stays empty past the session's gap (a sleeper back
///   from the bathroom before that is back in bed, and "until out of bed" goes on);
/// - records all of it in `wake_records` and publishes `.wake` events.
package actor SmartWakeService: Service {
    private let store: NightStore
    private let settings: HubConfiguration.ScheduleSettings
    private let clock: HubClock
    private let reporter: HubReporter
    private let bus: HubBus
    private let control: HubControl
    private let schedule: ScheduleDriver
    private let rule: SmartWakeRule
    private let podZone: TimeZone
    private let calendar: LocalCalendar
    private let analyzer: SleepAnalyzer
    /// The session's gap (`sessions.maxGapMinutes`), in seconds: a side empty for longer has
    /// left for the night, the rule that ends the stored night as well.
    private let maxGap: Double

    /// Read by the pipeline without waiting on the actor.
    private let feed = Mutex(Feed())
    /// Wakes the loop when the pipeline offers an epoch (a new stream per wait: a cancelled
    /// wait finishes its stream).
    private let signal = Mutex<AsyncStream<Void>.Continuation?>(nil)

    private struct Feed {
        /// Per side: the window being watched (data time), for `wants`.
        var windows: [BedSide: DateInterval] = [:]
        var serial: String?
        /// The newest snapshot per side not yet analysed.
        var pending: [BedSide: Offer] = [:]
        /// Live seconds: newest data second, last present second, start of the current empty run.
        var lastData: [BedSide: Double] = [:]
        var lastPresent: [BedSide: Double] = [:]
        var absentSince: [BedSide: Double] = [:]
        /// Start of the current present run.
        var presentSince: [BedSide: Double] = [:]
        /// Sides followed after their alarm: a live second that starts or ends a stay, or
        /// reaches `dataDue`, wakes the service (nothing else of the live seconds does).
        var following: Set<BedSide> = []
        /// The data time (end of a live second) the service waits for, per followed side.
        var dataDue: [BedSide: Double] = [:]
        /// Something asked for a look since the last one began (kept when no wait was under way).
        var lookAsked = false
    }

    /// The night so far as the pipeline offered it.
    private struct Offer {
        var night: SessionTracker.Night
        /// The epoch end it is complete up to (data time).
        var upTo: Double
        /// Set when the side was empty at the newest second the pipeline had (a night's
        /// seconds end at its last one in bed): a sleeper who got up inside the epoch just
        /// staged, in bed for most of what it holds, is out of bed by now.
        var bedEmpty: Bool
    }

    /// One side's window under watch.
    private struct Watch {
        var serial: String
        var side: BedSide
        var settings: EffectiveWakeSettings
        var window: DateInterval
        var alarm: AlarmEntry
        var decider: SmartWakeDecider
        var record: WakeRecord
        var opened = false
        /// Epoch end (data time) of the last observation fed.
        var lastObserved: Double = 0
        var lastObservation: WakeObservation?
        /// The alarm rang and has not yet been followed to the end.
        var ringing = false
        /// When to look whether the side is still occupied (after the alarm stopped).
        var checkAt: Date?
        var finished = false
    }

    private var watches: [BedSide: Watch] = [:]
    /// When each side's next window is planned again (hub time): a window not yet open follows
    /// the schedule in force and the wake settings. Sooner on `.schedulePushed`,
    /// `.scheduleAcknowledged` and `.wakeSettings` (`planAll`).
    private var replanAt: [BedSide: Date] = [:]
    private var planAll = true
    /// Hub seconds between plans when nothing said the schedule or the settings changed.
    private static let planRefreshSeconds: TimeInterval = 600

    package init(store: NightStore, configuration: HubConfiguration, clock: HubClock, reporter: HubReporter, bus: HubBus,
                control: HubControl, schedule: ScheduleDriver, rule: SmartWakeRule = SmartWakeRule()) {
        self.store = store
        self.settings = configuration.schedule
        self.clock = clock
        self.reporter = reporter
        self.bus = bus
        self.control = control
        self.schedule = schedule
        self.rule = rule
        self.podZone = configuration.podTimeZone
        self.maxGap = configuration.sessions.maxGapMinutes * 60
        self.calendar = LocalCalendar(timeZone: configuration.hubTimeZone)
        self.analyzer = SleepAnalyzer(rules: SessionRules(maxGap: .infinity, minDuration: 0), timeZone: configuration.hubTimeZone)
    }

    // MARK: The pipeline's side (no waiting)

    /// The smart-wake window planned or under way for `side` (nil: none, or a fixed alarm).
    package nonisolated func window(side: BedSide) -> DateInterval? {
        feed.withLock { $0.windows[side] }
    }

    /// Whether the pipeline should offer `side`'s night at the epoch ending `epochEnd` (data time).
    nonisolated func wants(serial: String, side: BedSide, epochEnd: Double) -> Bool {
        feed.withLock { f in
            guard f.serial == serial, let w = f.windows[side] else { return false }
            let t = Date(timeIntervalSince1970: epochEnd)
            return t > w.start && t <= w.end.addingTimeInterval(epochLength)
        }
    }

    /// The night so far of `side`, complete up to `upTo` (an epoch end, data time); `dataEnd`
    /// is the end of the newest second the pipeline has for the side, in bed or not.
    nonisolated func offer(serial: String, side: BedSide, night: SessionTracker.Night, upTo: Double, dataEnd: Double) {
        feed.withLock { f in
            guard f.serial == serial else { return }
            f.pending[side] = Offer(night: night, upTo: upTo, bedEmpty: night.end < dataEnd)
        }
        askForLook()
    }

    /// Wakes the loop, or has its next wait end at once when it is busy now.
    nonisolated private func askForLook() {
        feed.withLock { $0.lookAsked = true }
        _ = signal.withLock { $0?.yield(()) }
    }

    /// Notes a live second; wakes the service only when a followed side's stay starts or ends,
    /// or the data reaches the time it waits for.
    nonisolated private func noteLive(_ side: BedSide, _ second: LiveSecond) {
        let wake = feed.withLock { f -> Bool in
            f.lastData[side] = second.time + 1
            let turned: Bool
            if second.present {
                turned = f.absentSince[side] != nil || f.presentSince[side] == nil
                if turned { f.presentSince[side] = second.time }
                f.lastPresent[side] = second.time + 1
                f.absentSince[side] = nil
            } else {
                turned = f.absentSince[side] == nil
                if turned { f.absentSince[side] = second.time }
            }
            guard f.following.contains(side) else { return false }
            if let due = f.dataDue[side], second.time + 1 >= due {
                f.dataDue[side] = nil
                return true
            }
            return turned
        }
        if wake { askForLook() }
    }

    // MARK: Running

    package func run() async throws {
        let subscription = bus.subscribe(name: "smart-wake", bufferSize: 1 << 16)
        await cancelWhenGracefulShutdown { [self] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask { [self] in
                    for await event in subscription {
                        switch event {
                        case .live(let serial, let side, let second):
                            if self.feed.withLock({ $0.serial == serial }) { self.noteLive(side, second) }
                        case .alarm(let notice):
                            await self.alarmEvent(notice)
                            self.askForLook()
                        case .schedulePushed, .scheduleAcknowledged, .wakeSettings, .podConnected:
                            await self.replanSoon()
                        default:
                            break
                        }
                    }
                }
                group.addTask { [self] in await self.loop() }
                await group.next()
                group.cancelAll()
                subscription.finish()
            }
        }
    }

    /// The schedule or the settings may have changed: plan every side at the next look, now.
    private func replanSoon() {
        planAll = true
        askForLook()
    }

    /// Driven by events and the windows' own times: a look when the pipeline offers an epoch
    /// inside a window, an alarm event comes, a followed side's stay starts or ends, the
    /// schedule or the settings change, and at the next moment a watch is due (a window's
    /// start or end, a repeat's check, the end of following, the next plan); never on a
    /// fixed period.
    private func loop() async {
        while !Task.isCancelled {
            let started = ContinuousClock.now
            await step()
            // Re-staging the night takes tens of milliseconds; an epoch comes every 30 s, or
            // every 17 ms at the demo's 1800×, where looks back to back would take a core from
            // the pipeline until the pod's queue overflowed (frames, and an alarm's start, lost).
            // So a look is followed by twice its time of rest: a third of a core at most. The
            // offers that come meanwhile are one newest snapshot, and the next look observes
            // every epoch up to it, so no epoch goes unseen; at real speed this never waits.
            let spent = ContinuousClock.now - started
            if spent > .milliseconds(1) { try? await Task.sleep(for: spent * 2) }
            let now = clock.now()
            let real = max(clock.realDuration(of: max(0, nextLook(now: now).timeIntervalSince(now))), .milliseconds(5))
            let (signals, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            signal.withLock { $0 = continuation }
            if feed.withLock({ $0.lookAsked || !$0.pending.isEmpty }) { continuation.yield(()) }
            await Self.firstOf(sleeping: real, orSignal: signals)
            signal.withLock { $0 = nil }
            continuation.finish()
        }
    }

    /// The next moment (hub time) a look has something to do without an event.
    private func nextLook(now: Date) -> Date {
        var due = now.addingTimeInterval(Self.planRefreshSeconds)
        for side in BedSide.allCases { if let at = replanAt[side] { due = min(due, at) } }
        for w in watches.values where !w.finished {
            if !w.opened { due = min(due, w.window.start) }
            if w.opened, w.decider.decision == nil, w.settings.windowMinutes > 0 { due = min(due, w.window.end) }
            // A repeat's check, and five minutes later the judgement without data.
            if let check = w.checkAt { due = min(due, now < check ? check : check.addingTimeInterval(300)) }
            due = min(due, w.window.end.addingTimeInterval(w.settings.untilOutOfBed ? 4 * 3600 : 2 * 3600))
        }
        return max(due, now)
    }

    /// One round: plan windows, analyse offered epochs, close windows, look for repeats.
    func step() async {
        let now = clock.now()
        feed.withLock { $0.lookAsked = false }
        guard let serial = await schedule.podSerial else { return }
        if feed.withLock({ f in
            guard f.serial != serial else { return false }
            f = Feed()
            f.serial = serial
            return true
        }) { planAll = true }
        let planEvery = planAll
        planAll = false
        for side in BedSide.allCases {
            if planEvery || replanAt[side].map({ now >= $0 }) ?? true {
                await plan(serial: serial, side: side, now: now)
                replanAt[side] = now.addingTimeInterval(Self.planRefreshSeconds)
            }
            guard watches[side] != nil else { continue }
            await analysePending(side)
            await closeIfEnded(side, now: now)
            await followUp(side, now: now)
        }
        // What the live seconds must wake the loop for.
        let followed = watches.filter { $0.value.opened && !$0.value.finished && $0.value.record.firedAt != nil }
        feed.withLock { f in
            f.following = Set(followed.keys)
            f.dataDue = [:]
            for (side, w) in followed {
                var due: [Double] = []
                if let check = w.checkAt, !w.ringing { due.append(check.timeIntervalSince1970) }
                if let absent = f.absentSince[side], let fired = w.record.firedAt {
                    due.append(w.record.outOfBedAt != nil ? absent + maxGap + 1 : max(absent, Double(fired)) + 60)
                }
                if let first = due.min() { f.dataDue[side] = first }
            }
        }
    }

    /// Starts watching the side's next window (once the previous one is followed to its end).
    /// A window that has not opened yet follows the schedule in force: an inferred schedule
    /// that moves the alarm after the night before moves the window with it.
    private func plan(serial: String, side: BedSide, now: Date) async {
        if let w = watches[side], !w.finished, w.opened || now >= w.window.start { return }
        if let w = watches[side], w.finished, now < w.window.end.addingTimeInterval(60) { return }
        let wake = await EffectiveWakeSettings.resolve(store: store, settings: settings, podSerial: serial, side: side)
        guard wake.isActive, let podSchedule = await schedule.scheduleInForce(side: side) else {
            watches[side] = nil
            feed.withLock { _ = $0.windows.removeValue(forKey: side) }
            return
        }
        var best: (DateInterval, AlarmEntry)?
        for entry in podSchedule.alarms {
            let interval: DateInterval?
            if wake.windowMinutes > 0, let window = WakeWindow(end: entry.time, minutes: wake.windowMinutes) {
                interval = window.nextInterval(days: entry.days, after: now, in: podZone)
            } else {
                interval = LocalTimeResolver.nextFiring(of: entry.time, days: entry.days, after: now, in: podZone)
                    .map { DateInterval(start: $0, end: $0) }
            }
            if let interval, best.map({ interval.end < $0.0.end }) ?? true { best = (interval, entry) }
        }
        guard let (window, alarm) = best else { return }
        if let w = watches[side], w.window == window, w.settings == wake { return }
        // The same window again (a restart, a settings change before it opened): keep what is known.
        let wakeDate = calendar.wakeDate(sessionEnd: window.end.timeIntervalSince1970)
        var record = WakeRecord(podSerial: serial, side: side, wakeDate: wakeDate,
                                windowStart: Int64(window.start.timeIntervalSince1970.rounded(.down)),
                                windowEnd: Int64(window.end.timeIntervalSince1970.rounded(.down)),
                                windowMinutes: wake.windowMinutes)
        if let stored = try? await store.wakeRecords(wakeDate: wakeDate, side: side)
            .first(where: { $0.podSerial == serial && $0.windowEnd == record.windowEnd }) {
            record = stored
        }
        var decider = SmartWakeDecider(window: window, rule: rule)
        if record.decidedAt != nil { _ = decider.windowEnded() }  // decided by an earlier run: nothing more to decide
        watches[side] = Watch(serial: serial, side: side, settings: wake, window: window, alarm: alarm,
                              decider: decider, record: record, opened: record.id != nil)
        feed.withLock { $0.windows[side] = wake.windowMinutes > 0 ? window : nil }
    }

    private func analysePending(_ side: BedSide) async {
        guard var w = watches[side] else { return }
        let now = clock.now()
        if !w.opened, now >= w.window.start {
            w.opened = true
            watches[side] = w
            if w.settings.windowMinutes > 0 {
                await save(side, .windowOpened, at: w.window.start,
                           text: "\(side): wake window open \(local(w.window.start))–\(local(w.window.end)) (\(w.record.windowLength)), smart wake watching")
            } else {
                await save(side, nil, at: now, text: "")
            }
            w = watches[side]!
        }
        guard let pending = feed.withLock({ $0.pending.removeValue(forKey: side) }) else { return }
        guard w.decider.decision == nil, w.settings.windowMinutes > 0 else { return }
        let sessions = analyzer.analyze(pending.night.input, isFinal: false)
        var decision: WakeDecision?
        for session in sessions {
            for epoch in session.epochs {
                let end = epoch.start + epochLength
                guard end > w.lastObserved, end <= pending.upTo + 0.5, decision == nil else { continue }
                // Never a wake for an empty bed: it would ring for nobody, and TRIGGER_ALARM
                // disarms the pod's own alarm for the day, so a sleeper back in bed would
                // sleep through it. The window goes on; the sleeper's return can still decide.
                var o = WakeObservation(epoch: epoch)
                if pending.bedEmpty { o = o.withBedEmpty }
                w.lastObserved = end
                w.lastObservation = o
                decision = w.decider.observe(o)
            }
        }
        watches[side] = w
        if let decision { await decided(side, decision) }
    }

    /// The window ended without an early decision: the pod's own alarm at the end.
    private func closeIfEnded(_ side: BedSide, now: Date) async {
        guard var w = watches[side], w.opened, w.decider.decision == nil, w.settings.windowMinutes > 0,
              now >= w.window.end else { return }
        let decision = w.decider.windowEnded(last: w.lastObservation)
        watches[side] = w
        await decided(side, decision)
    }

    private func decided(_ side: BedSide, _ d: WakeDecision) async {
        guard var w = watches[side] else { return }
        w.record.decidedAt = Int64(d.time.timeIntervalSince1970.rounded(.down))
        w.record.reason = d.reason.rawValue
        w.record.stage = d.stage
        w.record.stageProbability = d.stageProbability
        w.record.movement = d.movement
        w.record.heartRateRise = d.heartRateRise
        w.record.minutesBeforeEnd = d.minutesBeforeEnd
        watches[side] = w
        guard d.reason != .windowEnd else {
            await save(side, .decided, at: d.time, text: "\(side): smart wake: \(d.summary(in: podZone)) — the pod's own alarm")
            return
        }
        // Decided on data that arrived after the window's end (a slow hub): the pod has rung by itself.
        guard clock.now() < w.window.end else {
            watches[side]?.record.triggerError = "decided after the window's end; the pod's own alarm rang"
            await save(side, .decided, at: d.time, text: "\(side): smart wake: \(d.summary(in: podZone)) — too late, the pod's own alarm")
            return
        }
        // Recorded and told before the request goes out, so the decision always comes before
        // the pod's ALARM_STARTED; a trigger the pod does not take is told right after.
        watches[side]?.record.triggered = true
        await save(side, .decided, at: d.time, text: "\(side): smart wake: \(d.summary(in: podZone)) — alarm triggered")
        if let error = await trigger(side, alarm: w.alarm, serial: w.serial) {
            watches[side]?.record.triggered = false
            watches[side]?.record.triggerError = error
            await save(side, .triggerFailed, at: d.time,
                       text: "\(side): smart wake chose \(d.summary(in: podZone)) but the pod did not take TRIGGER_ALARM (\(error)); it fires at \(local(w.window.end)) by itself")
        }
    }

    /// TRIGGER_ALARM with the alarm's own intensity, pattern and duration; nil when acknowledged.
    private func trigger(_ side: BedSide, alarm: AlarmEntry, serial: String) async -> String? {
        guard let connection = control.connection(serial: serial) else { return "the pod is not connected" }
        guard let features = await connection.info?.features, features.contains(.alarmTrigger) else {
            return "the pod has no alarm trigger (protocol v1.1 feature bit 7)"
        }
        let wire = alarm.wire(side: side)
        do {
            try await connection.triggerAlarm(AlarmTrigger(side: side, intensity: wire.intensity, pattern: wire.pattern,
                                                           durationSeconds: wire.durationSeconds))
            return nil
        } catch {
            return error.description
        }
    }

    // MARK: The alarm and "until out of bed"

    private func alarmEvent(_ notice: AlarmNotice) async {
        guard let side = notice.side, var w = watches[side], notice.serial == w.serial, !w.finished else { return }
        // Only alarms of this wake: from the window's start to a few hours after its end.
        guard notice.at >= w.window.start.addingTimeInterval(-60), notice.at <= w.window.end.addingTimeInterval(4 * 3600) else { return }
        // The alarm can be heard before the loop's next look opened a window of no minutes.
        w.opened = true
        switch notice.kind {
        case .fired:
            w.ringing = true
            w.checkAt = nil
            let first = w.record.firedAt == nil
            if first { w.record.firedAt = Int64(notice.at.timeIntervalSince1970.rounded(.down)) }
            watches[side] = w
            if first {
                let early = w.window.end.timeIntervalSince(notice.at) / 60
                await save(side, .fired, at: notice.at,
                           text: "\(side): alarm rang at \(local(notice.at))" + (early >= 0.5 ? ", \(Int(early.rounded())) min before the window's end" : ""))
            }
        case .snoozed:
            w.record.snoozes += 1
            watches[side] = w
            await save(side, .snoozed, at: notice.at, text: "\(side): alarm snoozed (\(w.record.snoozes))")
        case .stopped:
            w.ringing = false
            if w.settings.untilOutOfBed { w.checkAt = notice.at.addingTimeInterval(w.settings.repeatAfterMinutes * 60) }
            // ALARM_STARTED was lost (events are not acknowledged: a link that fell behind
            // drops frames, §6.4); a stop after its duration (argument 0) says when it began.
            let startLost = w.record.firedAt == nil
            let began = notice.argument == 0 ? notice.at.addingTimeInterval(-Double(w.alarm.durationSeconds)) : notice.at
            if startLost { w.record.firedAt = Int64(began.timeIntervalSince1970.rounded(.down)) }
            watches[side] = w
            if startLost {
                await save(side, .fired, at: began,
                           text: "\(side): alarm rang at \(local(began)) (its start was lost on the link; known from its stop)")
            }
        case .failed:
            break
        }
    }

    /// After the alarm: the side emptying ends the wake; still occupied at the check rings again.
    private func followUp(_ side: BedSide, now: Date) async {
        guard var w = watches[side], w.opened, !w.finished else { return }
        // Followed for at most four hours after the window's end (a wake that never rang, a
        // sleeper back in bed between two looks): then the next window is planned.
        if now > w.window.end.addingTimeInterval(4 * 3600) {
            watches[side]?.finished = true
            return
        }
        guard let firedAt = w.record.firedAt else { return }
        let (lastData, lastPresent, absentSince, presentSince) = feed.withLock {
            ($0.lastData[side], $0.lastPresent[side], $0.absentSince[side], $0.presentSince[side])
        }
        let fired = Double(firedAt)
        if let out = w.record.outOfBedAt {
            // Seen up. Back before the side stayed empty past the session's gap (the bathroom,
            // then back to sleep): the wake is not over, and "until out of bed" looks again.
            if absentSince == nil, let presentSince, presentSince > Double(out) {
                let minutes = (presentSince - Double(out)) / 60
                w.record.outOfBedAt = nil
                w.record.returnsToBed += 1
                if w.settings.untilOutOfBed, !w.ringing {
                    w.checkAt = Date(timeIntervalSince1970: presentSince).addingTimeInterval(w.settings.repeatAfterMinutes * 60)
                }
                watches[side] = w
                await save(side, .backInBed, at: Date(timeIntervalSince1970: presentSince),
                           text: "\(side): back in bed at \(local(Date(timeIntervalSince1970: presentSince))) after "
                            + "\(String(format: "%.1f", minutes)) min out"
                            + (w.checkAt.map { ": alarm again at \(local($0)) if still there" } ?? ""))
            } else if let absentSince, let lastData, lastData - absentSince > maxGap {
                // Gone for the night: the stored night ends at the same exit.
                watches[side]?.finished = true
            }
            return
        }
        // Never seen in bed since the hub started (a side nobody slept in, or a hub restarted
        // after the sleeper got up): when they got up is not known, and the first empty second
        // the hub saw is no out-of-bed time (it was recorded as one, with its event).
        if lastPresent == nil, let absentSince, let lastData, lastData - max(absentSince, fired) >= 60 {
            watches[side]?.finished = true
            reporter.logger.info("\(side): nobody seen in bed since the hub started; the wake has no out-of-bed time")
            return
        }
        // Empty for a whole minute after the alarm, by data that reached it: out of bed, from
        // the empty run's start (before the alarm when the side was already empty as it rang).
        if let absentSince, let lastData, lastData - max(absentSince, fired) >= 60 {
            w.record.outOfBedAt = Int64(absentSince.rounded(.down))
            w.checkAt = nil
            watches[side] = w
            let minutes = (absentSince - fired) / 60
            await save(side, .outOfBed, at: Date(timeIntervalSince1970: absentSince),
                       text: "\(side): out of bed at \(local(Date(timeIntervalSince1970: absentSince))), "
                        + (minutes >= 0 ? "\(String(format: "%.1f", minutes)) min after the alarm" : "already empty when the alarm rang")
                        + (w.record.repeats > 0 ? " (\(w.record.repeats) repeat\(w.record.repeats == 1 ? "" : "s"))" : ""))
            return
        }
        if !w.settings.untilOutOfBed {
            // Nothing to repeat: follow the side only to record when it empties.
            if now > w.window.end.addingTimeInterval(2 * 3600) { watches[side]?.finished = true }
            return
        }
        guard let checkAt = w.checkAt, !w.ringing else { return }
        // Judge by the data: wait until the live seconds reach the check moment (or give up
        // five minutes of hub time later: no data, no judgement, no repeat).
        let dataReached = (lastData ?? 0) >= checkAt.timeIntervalSince1970
        guard dataReached || now >= checkAt.addingTimeInterval(300) else { return }
        w.checkAt = nil
        guard dataReached else {
            w.finished = true
            watches[side] = w
            await save(side, nil, at: now, text: "\(side): no live data after the alarm: no repeat")
            return
        }
        guard (lastPresent ?? 0) >= checkAt.timeIntervalSince1970 - 60 else {
            // Empty at the check: out of bed (the empty run is recorded when it reaches a minute).
            watches[side] = w
            return
        }
        guard w.record.repeats < w.settings.maxRepeats else {
            w.finished = true
            watches[side] = w
            await save(side, nil, at: now, text: "\(side): still in bed after \(w.record.repeats) repeats; no more")
            return
        }
        w.record.repeats += 1
        w.ringing = true
        watches[side] = w
        await save(side, .repeated, at: now, text: "\(side): still in bed \(local(checkAt)): alarm again (repeat \(w.record.repeats) of at most \(w.settings.maxRepeats))")
        if let error = await trigger(side, alarm: w.alarm, serial: w.serial) {
            watches[side]?.ringing = false
            watches[side]?.finished = true
            await save(side, .triggerFailed, at: now, text: "\(side): the repeat did not reach the pod (\(error))")
        }
    }

    // MARK: Record, bus, console

    private func save(_ side: BedSide, _ kind: WakeNotice.Kind?, at: Date, text: String) async {
        guard var w = watches[side] else { return }
        do {
            w.record.id = try await store.saveWakeRecord(w.record)
            watches[side]?.record.id = w.record.id
        } catch {
            reporter.warning("\(side): could not record the wake: \(error)")
        }
        guard let kind else {
            if !text.isEmpty { reporter.event(text) }
            return
        }
        reporter.event(text)
        bus.publish(.wake(WakeNotice(kind: kind, serial: w.serial, side: side, at: at, record: w.record, text: text)))
    }

    private func local(_ date: Date) -> String {
        let l = LocalDateTime(date, in: podZone)
        let s = Int(date.timeIntervalSince1970.rounded(.down)) % 60
        return "\(l.timeOfDay):\(s < 10 ? "0" : "")\(s)"
    }

    private static func firstOf(sleeping duration: Duration, orSignal signal: AsyncStream<Void>) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: duration) }
            group.addTask { for await _ in signal { return } }
            await group.next()
            group.cancelAll()
        }
    }
}
