import Foundation
import SleepDomain

/// Vibration patterns of the pod's alarm motor (firmware-protocol.md SET_ALARM `pattern`:
/// 0 double, 1 rise, 2 constant).
package enum VibrationPattern: String, Sendable, Hashable, Codable, CaseIterable, NamedChoice {
    /// Two pulses, pause, repeat.
    case double
    /// Intensity rises from 10 % to the set intensity over the first 30 s.
    case rise
    /// Continuous at the set intensity.
    case constant
}

/// Alarm parameters from configuration (the time comes from the wake time).
package struct AlarmPreferences: Hashable, Sendable, Codable {
    package var enabled: Bool = true
    /// 0…100 %.
    package var intensity: Int = 60
    package var pattern: VibrationPattern = .rise
    /// How long the motor runs, 1…600 s.
    package var durationSeconds: Int = 120

    package init(enabled: Bool = true, intensity: Int = 60, pattern: VibrationPattern = .rise, durationSeconds: Int = 120) {
        self.enabled = enabled
        self.intensity = intensity
        self.pattern = pattern
        self.durationSeconds = durationSeconds
    }
}

/// One power window as the pod stores it (one SET_POWER_SCHEDULE): on at `on` on each day in
/// `days` (local date of the power-ON), off at the first `off` after that. `off` earlier than
/// `on` crosses midnight and is valid (on 22:30, off 07:30 switches off the next morning).
/// This module never produces `off == on` (the pod would read it as 24 hours).
package struct PowerWindow: Hashable, Sendable, Codable, CustomStringConvertible {
    package var days: WeekdayMask
    package var on: TimeOfDay
    package var off: TimeOfDay
    /// Power stage level while on, 0…100 %.
    package var level: Int

    package init(days: WeekdayMask, on: TimeOfDay, off: TimeOfDay, level: Int = 100) {
        self.days = days
        self.on = on
        self.off = off
        self.level = level
    }

    package var crossesMidnight: Bool { off < on }

    /// Whether `instant` falls inside this window in `zone`: on a day in `days` at or after
    /// `on` and before `off`, where a window crossing midnight runs on into the next day.
    package func contains(_ instant: Date, in zone: TimeZone) -> Bool {
        let local = LocalDateTime(instant, in: zone)
        let now = local.timeOfDay
        let today = local.date.weekday
        if crossesMidnight {
            return (days.contains(today) && now >= on) || (days.contains(today.advanced(by: -1)) && now < off)
        }
        return days.contains(today) && now >= on && now < off
    }

    /// Wall-clock minutes from on to off (ignores a DST change inside the window).
    package var durationMinutes: Int { floorMod(off.minuteOfDay - on.minuteOfDay, TimeOfDay.minutesPerDay) }

    package var description: String {
        "on \(on) off \(off)\(crossesMidnight ? " (+1 day)" : "") level \(level)% [\(days)]"
    }
}

/// One alarm entry: vibrate at `time` on each day in `days` (local date of the alarm). The pod
/// holds ONE alarm per side, so when a side has two entries (weekday and weekend wake times
/// differ) the push policy keeps the one that fires next in force (`DesiredPodState`).
package struct AlarmEntry: Hashable, Sendable, Codable, CustomStringConvertible {
    package var days: WeekdayMask
    package var time: TimeOfDay
    package var intensity: Int
    package var pattern: VibrationPattern
    package var durationSeconds: Int

    package init(days: WeekdayMask, time: TimeOfDay, intensity: Int, pattern: VibrationPattern, durationSeconds: Int) {
        self.days = days
        self.time = time
        self.intensity = intensity
        self.pattern = pattern
        self.durationSeconds = durationSeconds
    }

    package var description: String {
        "alarm \(time) \(pattern) \(intensity)% \(durationSeconds)s [\(days)]"
    }
}

/// What one side of the pod should hold: its power windows and alarms as local `HH:mm` in the
/// pod's time zone. Equatable, so the push policy can compare desired with acknowledged.
package struct PodSchedule: Hashable, Sendable, Codable {
    package var side: BedSide
    /// The zone the `HH:mm` values are in (the pod's, not necessarily the hub's).
    package var timeZoneIdentifier: String
    /// Power windows: their masks never share a day (the pod keeps one entry per weekday) and
    /// together cover every day.
    package var powerWindows: [PowerWindow]
    /// Alarm entries with disjoint masks; empty when the alarm is disabled.
    package var alarms: [AlarmEntry]

    package init(side: BedSide, timeZoneIdentifier: String, powerWindows: [PowerWindow], alarms: [AlarmEntry]) {
        self.side = side
        self.timeZoneIdentifier = timeZoneIdentifier
        self.powerWindows = powerWindows
        self.alarms = alarms
    }

    /// One line per entry, for the CLI and logs.
    package var lines: [String] {
        ["\(side) (\(timeZoneIdentifier)):"] + powerWindows.map { "  power \($0)" } + alarms.map { "  \($0)" }
    }
}
