import Foundation
import SleepDomain

/// Presence-driven power for one side (docs/schedule.md §5): from the side's settings, the
/// pod's schedule in force, presence and session ends, and the hub's clock, it decides when
/// the hub switches the side off or on, or moves the pod's own off later, each with a reason.
///
/// Safe by construction:
/// - it acts only inside a power window of the pod's own schedule (or a hold it asked for),
///   so if the hub stops, the pod's schedule still ends the power: an off is undone by the
///   pod's next `on`, and keep-on moves the pod's off edge a step at a time (`holdStepMinutes`)
///   instead of switching on past it;
/// - never off while the side reads occupied, and only after it has been empty for a whole
///   hysteresis (a turn-over or a bathroom trip toggles nothing);
/// - at most `maxCommandsPerHour` commands per hour, an off only with room left for the on
///   that may follow;
/// - presence unknown (no data) decides nothing.
///
/// Pure: no I/O, no clock; the caller passes the time with every event.
package struct PresencePower: Sendable {
    package let side: BedSide
    package private(set) var settings: PresencePowerSettings
    package let rules: PresencePowerRules
    /// The schedule the driver keeps on the pod, without any hold of ours.
    package private(set) var schedule: PodSchedule?
    /// Nights in a row (power windows that ended) with nobody in the side.
    package private(set) var emptyNights: Int

    /// The window in force and what the hub did in it.
    private struct Night: Sendable {
        var start: Date
        var scheduledEnd: Date
        var hold: Date?
        var slept: Bool
        var switchedOff = false
        /// Why the hub switched the side off, while it is off.
        var offReason: PresencePowerReason?
    }

    private var night: Night?
    private var sleptSeed: Bool
    private var occupied: Bool?
    private var changedAt = Date.distantPast
    private var lastSeenOccupied: Date?
    private var lastSessionEnd: Date?
    private var sent: [Date] = []

    /// - Parameters:
    ///   - emptyNights: nights in a row nobody slept in the side, from the store (a restarted hub).
    ///   - sleptThisWindow: someone already slept in the side in the window in force (a hub
    ///     restarted in the middle of a night, from its open stay).
    package init(side: BedSide, settings: PresencePowerSettings = PresencePowerSettings(),
                 rules: PresencePowerRules = PresencePowerRules(), schedule: PodSchedule?,
                 emptyNights: Int = 0, sleptThisWindow: Bool = false) {
        self.side = side
        self.settings = settings
        self.rules = rules
        self.schedule = schedule
        self.emptyNights = emptyNights
        self.sleptSeed = sleptThisWindow
    }

    // MARK: Events

    /// The side's presence (nil: unknown, e.g. no data from the pod). Call on every change or
    /// every second; only changes count.
    package mutating func presence(_ isOccupied: Bool?, at now: Date) -> [PresencePowerCommand] {
        if isOccupied != occupied {
            if occupied == true || isOccupied == true { lastSeenOccupied = now }
            occupied = isOccupied
            changedAt = now
        }
        return evaluate(now)
    }

    /// A session of the side ended (the hub's session tracker: the sleeper's final
    /// out-of-bed at `end`, decided at `now`).
    package mutating func sessionEnded(at end: Date, now: Date) -> [PresencePowerCommand] {
        lastSessionEnd = end
        if let n = night, end >= n.start { night?.slept = true }
        return evaluate(now)
    }

    /// The clock moved on.
    package mutating func tick(_ now: Date) -> [PresencePowerCommand] { evaluate(now) }

    /// The driver's schedule in force changed (or the side has none: nil).
    package mutating func update(schedule: PodSchedule?, now: Date) -> [PresencePowerCommand] {
        self.schedule = schedule
        return evaluate(now)
    }

    /// The owner changed the side's settings. A side off for "away" is switched on again when
    /// the change ends away (the owner is back: the bed warms up as scheduled).
    package mutating func update(settings: PresencePowerSettings, now: Date) -> [PresencePowerCommand] {
        self.settings = settings
        if let n = night, n.switchedOff, case .away? = n.offReason, !isAway, window(containing: now) != nil {
            return switchOn(now, .awayCleared)
        }
        return evaluate(now)
    }

    /// The owner says the side is no longer away (set by them, or counted from empty nights):
    /// the count starts again, and a side off for away is switched on again.
    package mutating func clearAway(now: Date) -> [PresencePowerCommand] {
        emptyNights = 0
        var cleared = settings
        cleared.away = false
        return update(settings: cleared, now: now)
    }

    /// The owner switched presence-driven power off for the side: a side the hub had switched
    /// off inside the window in force is switched on again, and the policy is done (the caller
    /// drops it, and ends a hold it asked for).
    package mutating func turnOff(now: Date) -> [PresencePowerCommand] {
        guard let n = night, n.switchedOff, window(containing: now) != nil else { return [] }
        return switchOn(now, .turnedOff)
    }

    /// An on the owner's change asks for: always allowed (the off before it left room for it).
    private mutating func switchOn(_ now: Date, _ reason: PresencePowerReason) -> [PresencePowerCommand] {
        night?.switchedOff = false
        night?.offReason = nil
        sent.append(now)
        return [PresencePowerCommand(side: side, action: .on, at: now, reason: reason,
                                     timeZoneIdentifier: schedule?.timeZoneIdentifier ?? "GMT")]
    }

    // MARK: State, for the API

    /// Away in force: set by the user, or nights with nobody in the side.
    package var isAway: Bool {
        settings.away || (settings.awayAfterNights > 0 && emptyNights >= settings.awayAfterNights)
    }

    /// The side is off because the hub switched it off in the window in force.
    package var isSwitchedOff: Bool { night?.switchedOff ?? false }

    /// While the hub has the side off: the end of the window in force (or of its hold).
    package var switchedOffUntil: Date? {
        guard let n = night, n.switchedOff else { return nil }
        return max(n.scheduledEnd, n.hold ?? n.scheduledEnd)
    }

    /// The pod's off moved to this minute by keep-on, if it was.
    package var heldUntil: Date? { night?.hold }

    // MARK: The rules

    private var zone: TimeZone {
        schedule.flatMap { TimeZone(identifier: $0.timeZoneIdentifier) } ?? .gmt
    }

    /// The pod's power window that contains `now`.
    private func window(containing now: Date) -> DateInterval? {
        guard let schedule else { return nil }
        let zone = self.zone
        let today = LocalDateTime(now, in: zone).date
        for day in [today.adding(days: -1), today] {
            for w in schedule.powerWindows where w.level > 0 {
                if let i = LocalTimeResolver.interval(of: w, startingOn: day, in: zone), i.start <= now, now < i.end {
                    return i
                }
            }
        }
        return nil
    }

    private mutating func closeNight() {
        guard let n = night else { return }
        emptyNights = n.slept ? 0 : emptyNights + 1
        night = nil
    }

    private mutating func evaluate(_ now: Date) -> [PresencePowerCommand] {
        // The night: the pod's window in force, or a hold of ours past its scheduled off.
        if let w = window(containing: now) {
            if let n = night, n.start == w.start {
                night?.scheduledEnd = w.end
            } else {
                closeNight()
                night = Night(start: w.start, scheduledEnd: w.end, slept: sleptSeed)
                sleptSeed = false
            }
        } else if let n = night, now >= n.scheduledEnd, let hold = n.hold, now < hold {
            // Held on past the scheduled off.
        } else {
            closeNight()
            sleptSeed = false
            return []
        }
        sent.removeAll { now.timeIntervalSince($0) >= 3600 }
        guard var n = night, let occupied else { return [] }
        defer { night = n }

        let presentFor = occupied ? now.timeIntervalSince(changedAt) : 0
        let lying = occupied && presentFor >= rules.arrivalSeconds
        if lying { n.slept = true }
        var emptySince = changedAt
        if lastSeenOccupied == nil, let end = lastSessionEnd, end < emptySince { emptySince = end }
        let emptyFor = occupied ? 0 : now.timeIntervalSince(emptySince)
        let emptyMinutes = Int((emptyFor / 60).rounded(.down))
        let free = rules.maxCommandsPerHour - sent.count
        let pastOff = now >= n.scheduledEnd

        func command(_ action: PresencePowerAction, _ reason: PresencePowerReason) -> [PresencePowerCommand] {
            sent.append(now)
            return [PresencePowerCommand(side: side, action: action, at: now, reason: reason,
                                         timeZoneIdentifier: schedule?.timeZoneIdentifier ?? "GMT")]
        }

        // On: someone lay down in a side the hub switched off. Always allowed: the off before
        // it left room for it.
        if n.switchedOff {
            guard lying, free >= 1 else { return [] }
            n.switchedOff = false
            n.offReason = nil
            return command(.on, .backInBed)
        }

        // Off: only empty, only with room for the on that may follow.
        if !occupied, free >= 2 {
            var reason: PresencePowerReason?
            if pastOff {
                if emptyFor >= Double(settings.keepOnAfterLeavingMinutes) * 60 { reason = .leftAfterKeepOn(emptyMinutes: emptyMinutes) }
            } else if isAway && !n.slept {
                reason = .away(nights: settings.away ? nil : emptyNights)
            } else if settings.offWhenLeft && n.slept && emptyFor >= Double(settings.offWhenLeftMinutes) * 60 {
                reason = .bedLeft(emptyMinutes: emptyMinutes)
            } else if settings.offWhenLeft && !n.slept && settings.noShowMinutes > 0,
                      emptyFor >= Double(settings.noShowMinutes) * 60, now.timeIntervalSince(n.start) >= Double(settings.noShowMinutes) * 60 {
                reason = .noShow(minutesSincePowerOn: Int((now.timeIntervalSince(n.start) / 60).rounded(.down)))
            }
            if let reason {
                n.switchedOff = true
                n.offReason = reason
                return command(.off, reason)
            }
        }

        // Keep on: in bed (or only just out of it) as the pod's off comes near: move it a step later.
        if settings.keepOnWhileOccupied, n.slept, occupied || emptyFor < Double(settings.keepOnAfterLeavingMinutes) * 60 {
            let effective = max(n.scheduledEnd, n.hold ?? n.scheduledEnd)
            let limit = n.scheduledEnd.addingTimeInterval(Double(settings.keepOnLimitMinutes) * 60)
            if now >= effective.addingTimeInterval(-Double(rules.holdLeadMinutes) * 60), effective < limit, free >= 2 {
                let step = max(effective, now).addingTimeInterval(Double(rules.holdStepMinutes) * 60)
                let until = Date(timeIntervalSince1970: (min(step, limit).timeIntervalSince1970 / 60).rounded(.up) * 60)
                n.hold = until
                return command(.holdUntil(until), .stillInBed(scheduledOff: n.scheduledEnd))
            }
        }
        return []
    }
}
