/// The two sides of the bed, each with its own sleeper, power stage and vibration motor.
public enum BedSide: String, Sendable, Hashable, Codable, CaseIterable, Comparable, CustomStringConvertible {
    case left, right
    public var description: String { rawValue }
    public static func < (lhs: BedSide, rhs: BedSide) -> Bool { lhs == .left && rhs == .right }
}

/// Vibration patterns the pod's motor plays (the peers' pods know `rise` and `double`).
public enum AlarmPattern: String, Sendable, Hashable, Codable, CaseIterable {
    /// Intensity ramps up over the duration.
    case rise
    /// Pairs of pulses at full intensity.
    case double
}

/// Alarm parameters from configuration (the time comes from the wake time).
public struct AlarmSettings: Hashable, Sendable, Codable {
    public var enabled: Bool = true
    /// 0…100 %.
    public var intensity: Int = 60
    public var pattern: AlarmPattern = .rise
    /// How long the motor runs, 1…600 s.
    public var durationSeconds: Int = 120

    public init(enabled: Bool = true, intensity: Int = 60, pattern: AlarmPattern = .rise, durationSeconds: Int = 120) {
        self.enabled = enabled
        self.intensity = intensity
        self.pattern = pattern
        self.durationSeconds = durationSeconds
    }
}

/// One power window as the pod stores it: on at `on` on each day in `days` (local date of the
/// power-ON), off at the first `off` after that. `off` earlier than `on` crosses midnight and
/// is valid (on 22:30, off 07:30 switches off the next morning).
public struct PowerWindow: Hashable, Sendable, Codable, CustomStringConvertible {
    public var days: WeekdayMask
    public var on: ClockTime
    public var off: ClockTime

    public init(days: WeekdayMask, on: ClockTime, off: ClockTime) {
        self.days = days
        self.on = on
        self.off = off
    }

    public var crossesMidnight: Bool { off < on }

    /// Wall-clock minutes from on to off (ignores a DST change inside the window).
    public var durationMinutes: Int { ClockTime.floorMod(off.minuteOfDay - on.minuteOfDay, ClockTime.minutesPerDay) }

    public var description: String { "on \(on) off \(off)\(crossesMidnight ? " (+1 day)" : "") [\(days)]" }
}

/// One alarm entry: vibrate at `time` on each day in `days` (local date of the alarm).
public struct AlarmEntry: Hashable, Sendable, Codable, CustomStringConvertible {
    public var days: WeekdayMask
    public var time: ClockTime
    public var intensity: Int
    public var pattern: AlarmPattern
    public var durationSeconds: Int

    public init(days: WeekdayMask, time: ClockTime, intensity: Int, pattern: AlarmPattern, durationSeconds: Int) {
        self.days = days
        self.time = time
        self.intensity = intensity
        self.pattern = pattern
        self.durationSeconds = durationSeconds
    }

    public var description: String {
        "alarm \(time) \(pattern) \(intensity)% \(durationSeconds)s [\(days)]"
    }
}

/// What one side of the pod should hold: its power windows and alarms as local `HH:mm` in the
/// pod's time zone. Equatable, so the push policy can compare desired with acknowledged.
public struct PodSchedule: Hashable, Sendable, Codable {
    public var side: BedSide
    /// The zone the `HH:mm` values are in (the pod's, not necessarily the hub's).
    public var timeZoneIdentifier: String
    public var powerWindows: [PowerWindow]
    /// Empty when the alarm is disabled.
    public var alarms: [AlarmEntry]

    public init(side: BedSide, timeZoneIdentifier: String, powerWindows: [PowerWindow], alarms: [AlarmEntry]) {
        self.side = side
        self.timeZoneIdentifier = timeZoneIdentifier
        self.powerWindows = powerWindows
        self.alarms = alarms
    }

    /// One line per entry, for the CLI and logs.
    public var lines: [String] {
        ["\(side) (\(timeZoneIdentifier)):"] + powerWindows.map { "  power \($0)" } + alarms.map { "  \($0)" }
    }
}
