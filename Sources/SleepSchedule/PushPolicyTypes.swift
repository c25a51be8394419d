import Foundation
import SleepDomain

/// Which pod setting a command replaces; acks, nacks and timeouts are matched by this key.
package enum ScheduleCommandKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    case clock
    case powerSchedule(BedSide)
    /// The side's power state now (SET_POWER), restored inside a window the pod missed.
    case power(BedSide)
    case alarm(BedSide)

    /// Send order: the clock first (the pod fires local times on it), then power, then alarms.
    var rank: Int {
        switch self {
        case .clock: return 0
        case .powerSchedule(let s): return 1 + s.index
        case .power(let s): return 3 + s.index
        case .alarm(let s): return 5 + s.index
        }
    }

    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }

    package var description: String {
        switch self {
        case .clock: return "set-clock"
        case .powerSchedule(let s): return "set-power-schedule(\(s))"
        case .power(let s): return "set-power(\(s))"
        case .alarm(let s): return "set-alarm(\(s))"
        }
    }
}

/// What set-clock carries besides the current UTC time, which the command client stamps at
/// the moment it sends (so a queued command never carries a stale time). It changes exactly
/// when the pod's zone changes or its UTC offset does (a DST transition).
package struct ClockSync: Hashable, Sendable, Codable {
    /// The pod's zone (for logs and the store; the pod itself only gets the offset).
    package var timeZoneIdentifier: String
    /// Local time = UTC + this, valid now (SET_CLOCK `utc_offset_min`).
    package var utcOffsetMinutes: Int

    package init(timeZoneIdentifier: String, utcOffsetMinutes: Int) {
        self.timeZoneIdentifier = timeZoneIdentifier
        self.utcOffsetMinutes = utcOffsetMinutes
    }

    /// The setting for `zone` at `now`.
    package init(zone: TimeZone, at now: Date) {
        self.init(timeZoneIdentifier: zone.identifier, utcOffsetMinutes: zone.secondsFromGMT(for: now) / 60)
    }
}

/// A command the hub must send to the pod.
package enum ScheduleCommand: Hashable, Sendable {
    case setClock(ClockSync)
    /// The side's whole power schedule: one SET_POWER_SCHEDULE per window (their masks are
    /// disjoint); an empty list is a clear (days = 0).
    case setPowerSchedule(BedSide, [PowerWindow])
    /// SET_POWER on at `level` %: the side is inside one of its windows now. Schedules are
    /// edge-triggered (firmware-protocol.md §7.4): a pod that reset or first got its clock
    /// mid-window stays off until the next `on`, so the hub, which knows the window, says so.
    case setPowerOn(BedSide, level: Int)
    /// The side's one alarm (SET_ALARM), or nil for CLEAR_ALARM.
    case setAlarm(BedSide, AlarmEntry?)

    package var key: ScheduleCommandKey {
        switch self {
        case .setClock: return .clock
        case .setPowerSchedule(let side, _): return .powerSchedule(side)
        case .setPowerOn(let side, _): return .power(side)
        case .setAlarm(let side, _): return .alarm(side)
        }
    }
}

/// What the pod should hold: its zone and one schedule per side (a missing side is left alone).
package struct DesiredPodState: Hashable, Sendable {
    package var timeZone: TimeZone
    package var schedules: [PodSchedule]
    /// Sides presence-driven power switched off inside their window in force: no power-on is
    /// sent for them (a push inside the window would otherwise switch an empty bed on again).
    package var switchedOff: Set<BedSide>

    package init(timeZone: TimeZone, schedules: [PodSchedule], switchedOff: Set<BedSide> = []) {
        self.timeZone = timeZone
        self.schedules = schedules
        self.switchedOff = switchedOff
    }

    /// The commands that express this state at `now`, in send order (clock, power schedules,
    /// power on for a side inside a window now and not switched off by the hub, alarms).
    /// The pod holds one alarm per side: of a side's entries, the one in force is the entry whose
    /// next firing after `now − alarmHoldover` comes first, so an alarm stays in force for
    /// `alarmHoldover` after it fired (vibration and snoozes are not cut short) and is then
    /// replaced by the entry that fires next (Friday's 07:00 by Saturday's 09:30).
    /// Around a DST transition (from `transitionLead` before it until the skipped or repeated
    /// hour is over) the times are sent converted, so the pod never meets a local time the
    /// transition skips or repeats (`DaylightSavingConversion`, firmware-protocol.md §7.4).
    package func commands(at now: Date, alarmHoldover: TimeInterval,
                          transitionLead: TimeInterval = PushPolicyConfiguration().preTransitionLeadSeconds) -> [ScheduleCommand] {
        let sides = schedules.sorted { $0.side < $1.side }
        var list: [ScheduleCommand] = [.setClock(ClockSync(zone: timeZone, at: now))]
        for s in sides {
            list.append(.setPowerSchedule(s.side, s.powerWindows.map {
                DaylightSavingConversion.powerWindow($0, at: now, in: timeZone, lead: transitionLead)
            }))
        }
        for s in sides where !switchedOff.contains(s.side) {
            if let window = s.powerWindows.first(where: { $0.contains(now, in: timeZone) }) {
                list.append(.setPowerOn(s.side, level: window.level))
            }
        }
        for s in sides {
            let entry = alarmInForce(s, at: now, holdover: alarmHoldover)?.entry
            list.append(.setAlarm(s.side, entry.flatMap {
                DaylightSavingConversion.alarm($0, at: now, in: timeZone, lead: transitionLead)
            }))
        }
        return list
    }

    /// The earliest instant after `now` at which some side's alarm in force will change.
    package func nextAlarmSwitch(after now: Date, alarmHoldover: TimeInterval) -> Date? {
        schedules.compactMap { s -> Date? in
            guard s.alarms.count > 1, let chosen = alarmInForce(s, at: now, holdover: alarmHoldover) else { return nil }
            return chosen.firing.addingTimeInterval(alarmHoldover)
        }.filter { $0 > now }.min()
    }

    func alarmInForce(_ s: PodSchedule, at now: Date, holdover: TimeInterval) -> (entry: AlarmEntry, firing: Date)? {
        let from = now.addingTimeInterval(-holdover)
        var best: (entry: AlarmEntry, firing: Date)?
        for entry in s.alarms {
            guard let f = LocalTimeResolver.nextFiring(of: entry.time, days: entry.days, after: from, in: timeZone) else { continue }
            if best == nil || f < best!.firing { best = (entry, f) }
        }
        if best == nil, let first = s.alarms.first { return (first, from) }
        return best
    }
}

/// Inputs to the push policy. Every event comes with the current time (`handle(_:now:)`).
package enum PushEvent: Hashable, Sendable {
    /// The pod is connected and its handshake done (first connect or any reconnect).
    case connected
    /// As `connected`, and the handshake itself set the pod's clock to this (the link layer
    /// sends SET_CLOCK right after HELLO): the clock is acknowledged, not sent a second time.
    case connectedWithClock(ClockSync)
    case disconnected
    /// The pod said it booted (HELLO with a boot flag, or a reset reported): it lost its clock
    /// and may have lost its schedule.
    case podRebooted
    /// The pod reported its clock (status or handshake); far from `now` means it was reset.
    case podClockReported(Date)
    /// The pod said its clock is not valid (status `clock_valid = 0`, ALARM_FAILED reason 2).
    case podClockInvalid
    /// The hub's own clock was stepped (NTP jump, manual set).
    case hubClockChanged
    /// The schedule service computed a new desired state (or the pod's zone changed).
    case desiredChanged(DesiredPodState)
    /// Answers to the command in flight with this key.
    case acknowledged(ScheduleCommandKey)
    case rejected(ScheduleCommandKey, status: Int)
    case timedOut(ScheduleCommandKey)
    /// The hub sent CLEAR_ALARM to stop the side's alarm (API, MQTT), which also clears the
    /// alarm on the pod: the side's alarm is sent again, not before `rearmAt` when given.
    case alarmCleared(BedSide, rearmAt: Date?)
    /// Time passed (the driver calls this at the instants `wakeUp(at:)` asked for).
    case tick
}

/// Why a command was given up on.
package enum PushFailureReason: Hashable, Sendable, CustomStringConvertible {
    case rejected(status: Int)
    case timedOut

    package var description: String {
        switch self {
        case .rejected(let status): return "rejected with status \(status)"
        case .timedOut: return "no answer"
        }
    }
}

/// Outputs of the push policy, to be carried out by the daemon in order.
package enum PushAction: Hashable, Sendable {
    /// Send this command now (attempt 1 is the first try). Wait for its answer before the next.
    case send(ScheduleCommand, attempt: Int)
    /// Deliver a `.tick` at this instant (retry backoff, answer timeout, DST pre-push or re-sync).
    /// Each action list carries at most one; it replaces any earlier request.
    case wakeUp(at: Date)
    /// Retries exhausted: record and report. Not retried until the desired value changes, the pod
    /// reconnects or reboots, the zone or clock changes, or a DST pre-push comes round.
    case failed(ScheduleCommand, reason: PushFailureReason, attempts: Int)
    /// Everything desired is acknowledged (reported once per convergence).
    case inSync
}

/// Timing and retry limits of the push policy.
package struct PushPolicyConfiguration: Hashable, Sendable, Codable {
    /// Retries after the first attempt before reporting failure.
    package var maxRetries: Int = 3
    /// First retry after this many seconds, doubling on each further retry.
    package var retryDelaySeconds: Double = 5
    /// An unanswered command counts as timed out after this long.
    package var answerTimeoutSeconds: Double = 10
    /// Power schedules and alarms are pushed again this long before each DST transition.
    package var preTransitionLeadSeconds: Double = 15 * 60
    /// The clock is re-sent this long after it was last acknowledged (firmware-protocol.md §7.3:
    /// every 6 hours), besides every event that invalidates it.
    package var clockResyncIntervalSeconds: Double = 6 * 3600
    /// How long an alarm stays in force after it fired before the side's next entry replaces it.
    package var alarmHoldoverSeconds: Double = 2 * 3600
    /// Nack statuses worth retrying: BUSY (4), NOT_READY (5) and v1.1's CLOCK_NOT_SET (10). Any
    /// other nack is final and reported at once (the pod said the value is wrong; repeating it
    /// cannot help).
    package var retryableStatuses: Set<Int> = [4, 5, 10]
    /// The statuses that say the pod's clock is not valid, so the clock is re-sent before the
    /// retry: v1's NOT_READY (5) and v1.1's CLOCK_NOT_SET (10), which a v1.1 pod answers instead.
    package var clockNotValidStatuses: Set<Int> = [5, 10]
    /// A reported pod clock further than this from the hub's counts as reset.
    package var clockToleranceSeconds: Double = 120

    package init() {}
}
