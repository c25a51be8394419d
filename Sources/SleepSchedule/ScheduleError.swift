import SleepDomain

/// Everything the schedule module refuses, with a message a person can act on.
package enum ScheduleError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A configuration value out of range.
    case invalidConfiguration(String)
    /// Bedtime, lead and delay add up to a power window of a whole day or more.
    case powerWindowTooLong(minutes: Int)
    /// After rounding, power-on and power-off fell on the same minute.
    case emptyPowerWindow(TimeOfDay)
    /// Bedtime and wake are the same time: a night of no length (or of a whole day).
    case bedtimeIsWake(TimeOfDay)

    package var description: String {
        switch self {
        case .invalidConfiguration(let message): return "invalid schedule configuration: \(message)"
        case .powerWindowTooLong(let minutes):
            return "power window of \(minutes) min is a day or longer; shorten the warm-up lead or the off delay"
        case .emptyPowerWindow(let time):
            return "power-on and power-off both round to \(time); the window would be empty"
        case .bedtimeIsWake(let time):
            return "bedtime and wake are both \(time): a night needs a wake time after its bedtime"
        }
    }
}
