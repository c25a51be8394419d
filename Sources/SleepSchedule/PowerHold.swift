import Foundation
import SleepDomain

/// Keep-on's hold as the pod stores it: the window in force ends at `until` instead of its own
/// off, for the one weekday it started on (the pod keeps one power entry per weekday, so that
/// day is split out of its window's mask). The pod then ends the power there by itself.
package struct PowerHold: Hashable, Sendable, Codable {
    package var side: BedSide
    package var until: Date

    package init(side: BedSide, until: Date) {
        self.side = side
        self.until = until
    }

    /// `schedule` with the hold applied, or nil when no window of it started before `now` and
    /// ends at or before `until` (the hold is over, or belongs to another schedule) or the held
    /// window would last a day or more.
    package func applied(to schedule: PodSchedule, now: Date) -> PodSchedule? {
        guard schedule.side == side, until > now, let zone = TimeZone(identifier: schedule.timeZoneIdentifier) else { return nil }
        let today = LocalDateTime(now, in: zone).date
        for day in [today, today.adding(days: -1)] {
            for (index, w) in schedule.powerWindows.enumerated() {
                guard let i = LocalTimeResolver.interval(of: w, startingOn: day, in: zone), i.start <= now, i.end <= until,
                      until.timeIntervalSince(i.start) < 86_400 else { continue }
                // The minute the pod switches off: the hold's, rounded up to a whole minute.
                let off = TimeOfDay(wrapping: Int(LocalDateTime(until.addingTimeInterval(59), in: zone).timeOfDay.minuteOfDay))
                guard off != w.on else { return nil }
                var windows = schedule.powerWindows
                var rest = w
                rest.days.remove(day.weekday.mask)
                var held = w
                held.days = day.weekday.mask
                held.off = off
                if rest.days.isEmpty { windows[index] = held } else { windows[index] = rest; windows.insert(held, at: index + 1) }
                var out = schedule
                out.powerWindows = windows
                return out
            }
        }
        return nil
    }
}
