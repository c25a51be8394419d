import Foundation
import SleepDomain

/// One recorded sleep session of one side, as plain values the store can hand over. Only the
/// instants matter here; stages and metrics belong to the analyzer.
public struct SleepNight: Hashable, Sendable, Codable {
    /// Got into bed (session start).
    public var start: Date
    /// Got out of bed (session end): the wake instant, whose local date names the night.
    public var end: Date
    /// First epoch asleep, when the analyzer found one.
    public var sleepOnset: Date?
    /// Naps are sessions too, but they say nothing about the usual night: they are skipped.
    public var isNap: Bool

    public init(start: Date, end: Date, sleepOnset: Date? = nil, isNap: Bool = false) {
        self.start = start
        self.end = end
        self.sleepOnset = sleepOnset
        self.isNap = isNap
    }

    /// The same from Unix seconds (what the store keeps).
    public init(startUnix: Double, endUnix: Double, sleepOnsetUnix: Double? = nil, isNap: Bool = false) {
        self.init(
            start: Date(timeIntervalSince1970: startUnix),
            end: Date(timeIntervalSince1970: endUnix),
            sleepOnset: sleepOnsetUnix.map { Date(timeIntervalSince1970: $0) },
            isNap: isNap
        )
    }
}

/// Usual bedtime and wake time as local wall-clock times.
public struct SleepTimes: Hashable, Sendable, Codable, CustomStringConvertible {
    public var bedtime: TimeOfDay
    public var wake: TimeOfDay

    public init(bedtime: TimeOfDay, wake: TimeOfDay) {
        self.bedtime = bedtime
        self.wake = wake
    }

    /// Minutes from bedtime to wake going forward round the clock (a 23:00–07:00 night is 480).
    public var sleepMinutes: Int { floorMod(wake.minuteOfDay - bedtime.minuteOfDay, TimeOfDay.minutesPerDay) }

    /// "23:00–07:00".
    public var description: String { "\(bedtime)–\(wake)" }
}

/// Weekday nights and weekend nights, told apart by the local date of the WAKE (see
/// `ScheduleInferenceConfiguration.weekendWakeDays`).
public enum NightGroup: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case weekday, weekend
    public var description: String { rawValue }
}

/// A schedule the user set by hand. It wins over inference until cleared.
public struct ManualSchedule: Hashable, Sendable, Codable {
    public var weekday: SleepTimes
    public var weekend: SleepTimes

    public init(weekday: SleepTimes, weekend: SleepTimes) {
        self.weekday = weekday
        self.weekend = weekend
    }

    /// The same times every night.
    public init(every times: SleepTimes) {
        self.init(weekday: times, weekend: times)
    }

    public func times(for group: NightGroup) -> SleepTimes {
        group == .weekday ? weekday : weekend
    }
}
