import Foundation
import SleepDomain

/// A side's nights replayed through `PresencePower` and the pod's own power rule (power on at
/// each window's `on`, off at its `off` or the hold's minute, SET_POWER switching in between;
/// firmware-protocol.md §7.4), on a fixed step of the hub's clock. What the unit tests and
/// `make bench` judge presence-driven power by: when the side had power, against when it was
/// occupied. Pure: the nights are given, nothing is read or played.
package struct PresencePowerReplay: Sendable {
    /// What happened over the replay.
    package struct Outcome: Sendable {
        package var commands: [PresencePowerCommand]
        /// When the side had power, in time order, disjoint.
        package var powered: [DateInterval]
        /// When the side was switched off by a command of the hub (not by the pod's schedule).
        package var switchedOffByHub: [DateInterval]

        /// Seconds of `intervals` inside `of`.
        package static func overlap(_ a: [DateInterval], _ b: [DateInterval]) -> TimeInterval {
            var total: TimeInterval = 0
            for x in a { for y in b { if let i = x.intersection(with: y) { total += i.duration } } }
            return total
        }
    }

    package var schedule: PodSchedule
    package var settings: PresencePowerSettings
    package var rules: PresencePowerRules
    /// The step of the hub's clock (the hub sees presence every second; 10 s is plenty here).
    package var step: TimeInterval

    package init(schedule: PodSchedule, settings: PresencePowerSettings, rules: PresencePowerRules = PresencePowerRules(),
                 step: TimeInterval = 10) {
        self.schedule = schedule
        self.settings = settings
        self.rules = rules
        self.step = step
    }

    /// Replays `start..<end`.
    /// - Parameters:
    ///   - occupied: when the side was occupied (disjoint, in time order).
    ///   - sessionEnds: the session tracker's ends: the last out-of-bed and when it was decided.
    ///   - restarts: instants the hub restarts at: the policy starts afresh (with the nights and
    ///     the open stay a hub reads back from its store) and the schedule driver's start-up
    ///     switches the side on inside a window.
    ///   - emptyNights: nights in a row with nobody in the side before `start`.
    package func run(from start: Date, to end: Date, occupied: [DateInterval],
                     sessionEnds: [(end: Date, decidedAt: Date)] = [], restarts: [Date] = [],
                     emptyNights: Int = 0) -> Outcome {
        let zone = TimeZone(identifier: schedule.timeZoneIdentifier) ?? .gmt
        // The pod's windows over the replay, by their start.
        var windows: [DateInterval] = []
        var day = LocalDateTime(start, in: zone).date.adding(days: -1)
        let lastDay = LocalDateTime(end, in: zone).date
        while day <= lastDay {
            for w in schedule.powerWindows where w.level > 0 {
                if let i = LocalTimeResolver.interval(of: w, startingOn: day, in: zone) { windows.append(i) }
            }
            day = day.next
        }
        windows.sort { $0.start < $1.start }
        var holds: [Date: Date] = [:]
        func effectiveEnd(_ w: DateInterval) -> Date { max(w.end, holds[w.start] ?? w.end) }

        var policy = PresencePower(side: schedule.side, settings: settings, rules: rules, schedule: schedule,
                                   emptyNights: emptyNights)
        var podOn = windows.contains { $0.start < start && start < $0.end }
        var hubOff = false
        var commands: [PresencePowerCommand] = []
        var powered: [DateInterval] = [], offByHub: [DateInterval] = []
        var poweredSince: Date? = podOn ? start : nil, offSince: Date?
        var sessionIndex = 0, restartIndex = 0, occupiedIndex = 0
        var prev = start, now = start

        func set(_ on: Bool, byHub: Bool) {
            if on, !podOn { poweredSince = now }
            if !on, podOn, let s = poweredSince { powered.append(DateInterval(start: s, end: now)); poweredSince = nil }
            podOn = on
            if byHub && !on && !hubOff { hubOff = true; offSince = now }
            if (on || !byHub), hubOff, let s = offSince { offByHub.append(DateInterval(start: s, end: now)); hubOff = false; offSince = nil }
        }

        while now < end {
            // The pod's own edges since the last step.
            for w in windows {
                if prev < w.start && w.start <= now { set(true, byHub: false) }
                let off = effectiveEnd(w)
                if prev < off && off <= now { set(false, byHub: false) }
            }
            if restartIndex < restarts.count, restarts[restartIndex] <= now {
                restartIndex += 1
                let current = windows.first { $0.start <= now && now < $0.end }
                let slept = current.map { w in occupied.contains { $0.intersects(DateInterval(start: w.start, end: now)) } } ?? false
                policy = PresencePower(side: schedule.side, settings: settings, rules: rules, schedule: schedule,
                                       emptyNights: policy.emptyNights, sleptThisWindow: slept)
                if current != nil { set(true, byHub: false) }
            }
            while occupiedIndex < occupied.count, occupied[occupiedIndex].end <= now { occupiedIndex += 1 }
            let isOccupied = occupiedIndex < occupied.count && occupied[occupiedIndex].start <= now
            var decided = policy.presence(isOccupied, at: now)
            while sessionIndex < sessionEnds.count, sessionEnds[sessionIndex].decidedAt <= now {
                decided += policy.sessionEnded(at: sessionEnds[sessionIndex].end, now: now)
                sessionIndex += 1
            }
            for c in decided {
                commands.append(c)
                switch c.action {
                case .off: set(false, byHub: true)
                case .on: set(true, byHub: true)
                case .holdUntil(let until):
                    if let w = windows.first(where: { $0.start <= now && now < effectiveEnd($0) }) { holds[w.start] = until }
                }
            }
            prev = now
            now = now.addingTimeInterval(step)
        }
        if let s = poweredSince { powered.append(DateInterval(start: s, end: end)) }
        if let s = offSince { offByHub.append(DateInterval(start: s, end: end)) }
        return Outcome(commands: commands, powered: powered, switchedOffByHub: offByHub)
    }
}
