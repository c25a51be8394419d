import Foundation
import SleepDomain
import SleepSchedule

/// A side's wake window: the alarm's `HH:mm` is the latest wake time (`end`), and the hub may
/// wake the sleeper up to `minutes` earlier, at the first good moment. The window is wall
/// time in the pod's zone, like every other schedule value, and is resolved to instants only
/// for one date (see `interval(endingOn:in:)`).
package struct WakeWindow: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The longest window the hub accepts: longer ones would wake people far too early.
    package static let maximumMinutes = 120

    /// The latest wake time: the pod's ordinary alarm, which fires there on its own clock.
    package var end: TimeOfDay
    /// Window length in wall-clock minutes, 1…`maximumMinutes`.
    package var minutes: Int

    /// Nil when `minutes` is outside 1…`maximumMinutes` (0 means no window: a fixed alarm).
    package init?(end: TimeOfDay, minutes: Int) {
        guard (1...Self.maximumMinutes).contains(minutes) else { return nil }
        self.end = end
        self.minutes = minutes
    }

    /// Decoding checks the length like `init?(end:minutes:)`: a bad configuration is an error,
    /// not a window of 0 or 600 minutes.
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let end = try c.decode(TimeOfDay.self, forKey: .end)
        let minutes = try c.decode(Int.self, forKey: .minutes)
        guard let window = WakeWindow(end: end, minutes: minutes) else {
            throw DecodingError.dataCorruptedError(forKey: .minutes, in: c,
                debugDescription: "a wake window is 1…\(Self.maximumMinutes) minutes, not \(minutes)")
        }
        self = window
    }

    /// The wall time the window opens (may be the previous day when `end` is just after midnight).
    package var start: TimeOfDay { end.adding(minutes: -minutes) }

    package var description: String { "\(start)–\(end) (\(minutes) min)" }

    /// The window's real interval for the alarm that fires on local `date` in `zone`.
    ///
    /// The end is the pod's alarm instant (`LocalTimeResolver`: a skipped end fires at the
    /// transition, a repeated one at its first occurrence), so hub and pod agree on it. The
    /// start is the wall time `minutes` earlier: skipped → the transition (wall minutes
    /// that do not exist are not in the window, so a window across spring-forward is shorter
    /// in real time); repeated → the latest occurrence before the end; and never more than
    /// `minutes` real minutes before the end (a window across fall-back is never longer than
    /// its wall length, even when its start lies before the repeated hour). A start at or
    /// after the end gives an empty window: the alarm fires at the end.
    package func interval(endingOn date: CalendarDay, in zone: TimeZone) -> DateInterval {
        let endInstant = LocalTimeResolver.resolve(end, on: date, in: zone).fireInstant
        let startWall = end.minuteOfDay - minutes
        let startDate = startWall < 0 ? date.adding(days: -1) : date
        let startInstant: Date
        switch LocalTimeResolver.resolve(start, on: startDate, in: zone) {
        case .exact(let d), .skipped(let d): startInstant = d
        case .repeated(let first, let second): startInstant = second < endInstant ? second : first
        }
        let earliest = endInstant.addingTimeInterval(-Double(minutes) * 60)
        return DateInterval(start: min(max(startInstant, earliest), endInstant), end: endInstant)
    }

    /// The next window whose end is strictly after `instant`, on a day in `days` (the day of
    /// the alarm). Nil for an empty mask.
    package func nextInterval(days: WeekdayMask, after instant: Date, in zone: TimeZone) -> DateInterval? {
        guard let fire = LocalTimeResolver.nextFiring(of: end, days: days, after: instant, in: zone) else { return nil }
        // The alarm's own local date (a skipped end fires at the transition, still that date).
        let date = LocalDateTime(fire, in: zone).date
        let candidate = interval(endingOn: date, in: zone)
        return candidate.end == fire ? candidate : interval(endingOn: date.adding(days: -1), in: zone)
    }
}
