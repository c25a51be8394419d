import Foundation
import ServiceLifecycle
import SleepDomain
import SleepSchedule
import SleepStore

/// Presence-driven power in the running hub (docs/schedule.md §5): one `PresencePower` per side
/// of the connected pod, fed from the bus (each live second's presence, the pod's link, finished
/// nights as session ends) and the schedule driver's schedule in force, ticked on the hub's
/// clock. Its offs and ons go to the pod through `HubControl` (SET_POWER, answered by the pod),
/// its holds through the `ScheduleDriver` (the pod's own off moved later, pushed as every
/// schedule is). Each change is stored with its reason (`presence_power_changes`), published
/// as `.presencePower` and said on the console. Runs with the schedule service; each side acts
/// only while its presence-driven power is on (the configuration's, or the owner's at run time:
/// `.presencePowerSettings` on the bus).
package actor PresencePowerService: Service {
    private let store: NightStore
    private let configuration: HubConfiguration.PresencePowerConfiguration
    private let clock: HubClock
    private let reporter: HubReporter
    private let bus: HubBus
    private let control: HubControl
    private let schedule: ScheduleDriver
    /// Hub seconds between looks at the clock (presence changes are handled as they come).
    private let tickSeconds: TimeInterval
    private let podZone: TimeZone

    private var serial: String?
    private var policies: [BedSide: PresencePower] = [:]
    /// Each side's switch, rules and empty nights in force (loaded when the pod connects).
    private var inForce: [BedSide: PresencePowerInForce] = [:]
    private var lastPresence: [BedSide: Bool] = [:]
    /// Holds this service asked the driver for, to put the schedule's own off back after them.
    private var holds: [BedSide: Date] = [:]

    package init(store: NightStore, configuration: HubConfiguration, clock: HubClock, reporter: HubReporter, bus: HubBus,
                 control: HubControl, schedule: ScheduleDriver, tickSeconds: TimeInterval = 10) {
        self.store = store
        self.configuration = configuration.schedule.presencePower
        self.clock = clock
        self.reporter = reporter
        self.bus = bus
        self.control = control
        self.schedule = schedule
        self.tickSeconds = tickSeconds
        self.podZone = configuration.podTimeZone
    }

    package func run() async throws {
        let subscription = bus.subscribe(name: "presence-power", bufferSize: 1 << 16)
        await cancelWhenGracefulShutdown { [self] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask { [self] in
                    for await event in subscription { await self.handle(event) }
                }
                group.addTask { [self] in
                    while !Task.isCancelled {
                        try? await Task.sleep(for: await self.tickInterval())
                        await self.tick()
                    }
                }
                await group.next()
                group.cancelAll()
                subscription.finish()
            }
        }
    }

    /// Every `tickSeconds` of hub time while a side is on; a minute (real) while none is, so a
    /// hub with the feature off costs next to nothing (presence changes still reach it at once).
    private func tickInterval() -> Duration {
        inForce.values.contains(where: \.enabled) || serial == nil && configuration.enabled
            ? max(clock.realDuration(of: tickSeconds), .milliseconds(5)) : .seconds(60)
    }

    // MARK: Events

    func handle(_ event: HubEvent) async {
        switch event {
        case .podConnected(let pod, _, _):
            if serial != pod.serial {
                serial = pod.serial
                policies = [:]
                lastPresence = [:]
                for side in BedSide.allCases {
                    inForce[side] = await PresencePowerInForce.resolve(store: store, configuration: configuration,
                                                                       podSerial: pod.serial, side: side)
                }
                await restoreHolds(serial: pod.serial)
            }
        case .podDisconnected(let s, _, _):
            guard s == serial else { return }
            // Presence unknown: the policy decides nothing until readings come back.
            lastPresence = [:]
            for side in Array(policies.keys) { await apply(side) { $0.presence(nil, at: $1) } }
        case .live(let s, let side, let second):
            guard s == serial, lastPresence[side] != second.present else { return }
            lastPresence[side] = second.present
            await apply(side) { $0.presence(second.present, at: $1) }
        case .nightFinished(let night):
            guard night.serial == serial else { return }
            await apply(night.side) { $0.sessionEnded(at: night.end, now: $1) }
        case .presencePowerSettings(let s, let side, let next):
            guard s == serial else { return }
            await change(side, to: next)
        default:
            break
        }
    }

    /// The clock moved on: follow the schedule in force, tick every side, end holds that are over.
    func tick() async {
        guard serial != nil else { return }
        let now = clock.now()
        for side in BedSide.allCases {
            await apply(side) { $0.tick($1) }
            if let until = holds[side], now >= until, policies[side]?.heldUntil == nil {
                holds[side] = nil
                await schedule.holdPowerOff(side: side, until: nil)
            }
        }
    }

    /// The owner changed the side's presence-driven power: switched off, the side gets back
    /// what the hub took from it (power inside the window, the schedule's own off); else the
    /// policy follows the new rules, and "away" cleared switches an away side on again.
    private func change(_ side: BedSide, to next: PresencePowerInForce) async {
        let previous = inForce[side]
        inForce[side] = next
        guard let serial else { return }
        guard var policy = policies[side] else {
            // Switched on now: its policy starts from the presence last seen, not from the next change.
            if next.enabled, let present = lastPresence[side] { await apply(side) { $0.presence(present, at: $1) } }
            return
        }
        let now = clock.now()
        var commands: [PresencePowerCommand] = []
        if !next.enabled {
            commands = policy.turnOff(now: now)
            policies[side] = nil
            if holds.removeValue(forKey: side) != nil { await schedule.holdPowerOff(side: side, until: nil) }
        } else {
            if next.emptyNights < policy.emptyNights || (previous?.settings.away == true && !next.settings.away) {
                commands += policy.clearAway(now: now)
            }
            commands += policy.update(settings: next.settings, now: now)
            policies[side] = policy
        }
        let level = await schedule.scheduleInForce(side: side)?.powerWindows.first?.level ?? 100
        for command in commands { await carryOut(command, serial: serial, level: level, policy: policy) }
    }

    /// A hub restarted while a hold was in force: the driver's start-up pushed the schedule
    /// without it, and a pod past the schedule's own off would keep the side on until its next
    /// off. So a stored hold that is not over is pushed again (the pod then ends the power at it).
    private func restoreHolds(serial: String) async {
        let now = clock.now()
        guard let changes = try? await store.presencePowerChanges(podSerial: serial,
                                                                 since: Int64(now.timeIntervalSince1970) - 86_400, limit: 10_000) else { return }
        for side in BedSide.allCases {
            guard let last = changes.last(where: { $0.side == side }), last.action == "hold", let until = last.until,
                  Double(until) > now.timeIntervalSince1970 else { continue }
            let date = Date(timeIntervalSince1970: Double(until))
            holds[side] = date
            await schedule.holdPowerOff(side: side, until: date)
            reporter.event("\(side) power kept on until \(LocalDateTime(date, in: podZone).timeOfDay) again: the hold stored before the hub restarted")
        }
    }

    /// Runs one event through the side's policy (made on first use, following the schedule in
    /// force) and carries out what it decides.
    private func apply(_ side: BedSide, _ body: (inout PresencePower, Date) -> [PresencePowerCommand]) async {
        guard let serial, let chosen = inForce[side], chosen.enabled else { return }
        let podSchedule = await schedule.scheduleInForce(side: side)
        let now = clock.now()
        var policy = policies[side] ?? PresencePower(side: side, settings: chosen.settings, rules: configuration.rules,
                                                      schedule: podSchedule, emptyNights: chosen.emptyNights)
        var commands: [PresencePowerCommand] = []
        if policy.schedule != podSchedule { commands += policy.update(schedule: podSchedule, now: now) }
        commands += body(&policy, now)
        policies[side] = policy
        if policy.emptyNights != chosen.emptyNights {
            // Away counts nights across restarts.
            inForce[side]?.emptyNights = policy.emptyNights
            do {
                try await store.savePresencePowerEmptyNights(podSerial: serial, side: side, count: policy.emptyNights,
                                                             at: Int64(now.timeIntervalSince1970))
            } catch {
                reporter.warning("presence power: could not store \(side)'s empty nights: \(error)")
            }
        }
        for command in commands {
            await carryOut(command, serial: serial, level: podSchedule?.powerWindows.first?.level ?? 100, policy: policy)
        }
    }

    private func carryOut(_ command: PresencePowerCommand, serial: String, level: Int, policy: PresencePower?) async {
        let outcome: String
        switch command.action {
        case .off, .on:
            let on = command.action == .on
            // The driver must not switch the side on again with a push inside the window.
            await schedule.powerSwitchedOff(side: command.side, until: on ? nil : policy?.switchedOffUntil ?? command.at.addingTimeInterval(43_200))
            do {
                switch try await control.send(.power(side: command.side, on: on, level: on ? max(1, level) : 0), toPod: serial) {
                case .ack: outcome = "ack"
                case .nack(let status, _): outcome = "nack \(status)"
                }
            } catch {
                outcome = "failed: \(error)"
            }
        case .holdUntil(let until):
            holds[command.side] = until
            // The driver pushes it as every schedule, and records the pod's answer in `schedule_pushes`.
            await schedule.holdPowerOff(side: command.side, until: until)
            outcome = "pushed"
        }
        let notice = PresencePowerNotice(serial: serial, command: command, outcome: outcome)
        do { try await store.recordPresencePowerChange(notice.change) } catch {
            reporter.warning("presence power: could not store '\(notice.text)': \(error)")
        }
        bus.publish(.presencePower(notice))
    }
}
