import Foundation
import SleepDomain

/// What a local `HH:mm` on a given date is in real time, in a zone that may change its offset.
package enum LocalTimeResolution: Hashable, Sendable {
    /// The time exists once.
    case exact(Date)
    /// The time falls in a gap (spring forward) and does not exist that day. It fires at the
    /// first valid minute after the gap, which is the transition instant itself (02:30 in New
    /// York on a spring-forward day fires at 03:00 EDT).
    case skipped(firesAt: Date)
    /// The time occurs twice (fall back). It fires ONCE, at the first occurrence.
    case repeated(first: Date, second: Date)

    /// The one instant the pod acts on.
    package var fireInstant: Date {
        switch self {
        case .exact(let d): return d
        case .skipped(let d): return d
        case .repeated(let first, _): return first
        }
    }
}

/// Resolves local wall-clock times of the pod's zone to instants. The virtual pod, the alarm
/// tests and the push policy all use these so they agree on DST days.
package enum LocalTimeResolver {
    /// `time` on local `date` in `zone`: exact, skipped (gap) or repeated (overlap).
    package static func resolve(_ time: TimeOfDay, on date: CalendarDay, in zone: TimeZone) -> LocalTimeResolution {
        // Wall seconds: the local date-time counted as if it were UTC.
        let wall = Double(date.daysSinceEpoch) * 86_400 + Double(time.minuteOfDay) * 60
        // Offsets a day either side bracket any single transition near this time.
        let before = zone.secondsFromGMT(for: Date(timeIntervalSince1970: wall - 86_400 * 1.5))
        let after = zone.secondsFromGMT(for: Date(timeIntervalSince1970: wall + 86_400 * 1.5))
        var valid: [Date] = []
        for offset in Set([before, after]) {
            let candidate = Date(timeIntervalSince1970: wall - Double(offset))
            if zone.secondsFromGMT(for: candidate) == offset { valid.append(candidate) }
        }
        valid.sort()
        if valid.count >= 2 { return .repeated(first: valid[0], second: valid[valid.count - 1]) }
        if let only = valid.first { return .exact(only) }
        // In a gap: the transition T satisfies T + before ≤ wall < T + after, so it lies in
        // (wall − after, wall − before]. Binary-search the first second at the new offset.
        var lo = wall - Double(max(before, after)) - 1, hi = wall - Double(min(before, after))
        let oldOffset = zone.secondsFromGMT(for: Date(timeIntervalSince1970: lo))
        while hi - lo > 1 {
            let mid = ((lo + hi) / 2).rounded(.down)
            if zone.secondsFromGMT(for: Date(timeIntervalSince1970: mid)) == oldOffset { lo = mid } else { hi = mid }
        }
        return .skipped(firesAt: Date(timeIntervalSince1970: hi))
    }

    /// The first instant strictly after `instant` at which `time` fires on a day in `days`
    /// (a repeated time fires only at its first occurrence, so the second is never returned).
    /// Nil for an empty mask.
    package static func nextFiring(of time: TimeOfDay, days: WeekdayMask, after instant: Date, in zone: TimeZone) -> Date? {
        guard !days.isEmpty else { return nil }
        let today = LocalDateTime(instant, in: zone).date
        for offset in -1...8 {
            let date = today.adding(days: offset)
            guard days.contains(date.weekday) else { continue }
            let fire = resolve(time, on: date, in: zone).fireInstant
            if fire > instant { return fire }
        }
        return nil
    }

    /// When an alarm cleared at `instant` (CLEAR_ALARM, to stop it ringing) may be armed again
    /// without ringing a second time that day: just after its firing later the same local day
    /// (a stop before the alarm skips today's, and brings back none a smart wake disarmed), or
    /// at once (nil) when it fires next on a later day.
    package static func rearmInstant(of alarm: AlarmEntry, clearedAt instant: Date, in zone: TimeZone) -> Date? {
        guard let fire = nextFiring(of: alarm.time, days: alarm.days, after: instant, in: zone),
              LocalDateTime(fire, in: zone).date == LocalDateTime(instant, in: zone).date else { return nil }
        return fire.addingTimeInterval(60)
    }

    /// The real interval of a power window that switches on on local `date`; nil when `date`'s
    /// weekday is not in the window's mask. The off time is resolved on the same date when it is
    /// later than the on time, else on the next date (crossing midnight).
    package static func interval(of window: PowerWindow, startingOn date: CalendarDay, in zone: TimeZone) -> DateInterval? {
        guard window.days.contains(date.weekday) else { return nil }
        let on = resolve(window.on, on: date, in: zone).fireInstant
        let off = resolve(window.off, on: window.crossesMidnight ? date.adding(days: 1) : date, in: zone).fireInstant
        guard off > on else { return nil }
        return DateInterval(start: on, end: off)
    }

    /// The next instant after `instant` at which `zone` changes its UTC offset for daylight
    /// saving, or nil if it has none ahead.
    package static func nextTransition(after instant: Date, in zone: TimeZone) -> Date? {
        zone.nextDaylightSavingTimeTransition(after: instant)
    }
}
