import SleepDomain

/// Everything the schedule module refuses, with a message a person can act on.
package enum ScheduleError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A configuration value out of range.
    case invalidConfiguration(String)
    /// Bedtime, lead and delay add up to a power window of a whole day or more.
    case powerWindowTooLong(sleepMinutes: Int, leadMinutes: Int, delayMinutes: Int)
    /// After rounding, power-on and power-off fell on the same minute.
    case emptyPowerWindow(TimeOfDay)
    /// Bedtime and wake are the same time: a night of no length (or of a whole day).
    case bedtimeIsWake(TimeOfDay)

    package var description: String {
        switch self {
        case .invalidConfiguration(let message): return "invalid schedule configuration: \(message)"
        case .powerWindowTooLong(let sleep, let lead, let delay):
            // Named from the night first: a manual bedtime and wake are what people change, and
            // the message used to name only settings they had never touched.
            return "a night of \(Self.duration(sleep)) from bedtime to wake, with the \(lead)-min warm-up before it "
                + "and the \(delay)-min off delay after it, keeps the power on for \(Self.duration(sleep + lead + delay)), a day or longer: "
                + "give a shorter night (or shorten schedule.conversion.warmUpLeadMinutes or powerOffDelayMinutes)"
        case .emptyPowerWindow(let time):
            return "power-on and power-off both round to \(time); the window would be empty"
        case .bedtimeIsWake(let time):
            return "bedtime and wake are both \(time): a night needs a wake time after its bedtime"
        }
    }

    private static func duration(_ minutes: Int) -> String {
        minutes % 60 == 0 ? "\(minutes / 60) h" : "\(minutes / 60) h \(minutes % 60) min"
    }
}
