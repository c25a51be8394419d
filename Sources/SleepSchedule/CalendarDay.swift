import Foundation

/// A calendar date in the proleptic Gregorian calendar with no time zone attached: the local
/// date a night is attributed to, or the date an `HH:mm` is resolved on. Pure arithmetic
/// (days from civil), so it never depends on the hub's own zone or locale.
public struct CalendarDay: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// Nil for dates that do not exist (month 13, 30 February, …).
    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), day >= 1, day <= Self.daysIn(month: month, year: year) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// The date `days` days after 1970-01-01.
    public init(daysSinceEpoch days: Int) {
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468
        let era = TimeOfDay.floorDiv(z, 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        self.year = yoe + era * 400 + (m <= 2 ? 1 : 0)
        self.month = m
        self.day = d
    }

    /// Days since 1970-01-01 (negative before).
    public var daysSinceEpoch: Int {
        // Howard Hinnant's days_from_civil.
        let y = month <= 2 ? year - 1 : year
        let era = TimeOfDay.floorDiv(y, 400)
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    public var weekday: Weekday { Weekday(daysSinceEpoch: daysSinceEpoch) }

    public func adding(days: Int) -> CalendarDay { CalendarDay(daysSinceEpoch: daysSinceEpoch + days) }

    /// `yyyy-MM-dd`.
    public var description: String {
        func pad(_ v: Int, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
    }

    public static func < (lhs: CalendarDay, rhs: CalendarDay) -> Bool { lhs.daysSinceEpoch < rhs.daysSinceEpoch }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

/// An instant seen on the wall clock of a zone: its local date and the time of day.
public struct LocalDateTime: Hashable, Sendable, CustomStringConvertible {
    public let date: CalendarDay
    /// Seconds after local midnight, 0 ≤ value < 86 400.
    public let secondOfDay: Double
    /// The zone's offset from UTC at that instant, in seconds.
    public let utcOffsetSeconds: Int

    public init(_ instant: Date, in zone: TimeZone) {
        let offset = zone.secondsFromGMT(for: instant)
        let local = instant.timeIntervalSince1970 + Double(offset)
        let days = (local / 86_400).rounded(.down)
        self.date = CalendarDay(daysSinceEpoch: Int(days))
        self.secondOfDay = min(max(local - days * 86_400, 0), 86_400.nextDown)
        self.utcOffsetSeconds = offset
    }

    /// Minutes after local midnight, fractional.
    public var minuteOfDay: Double { secondOfDay / 60 }

    /// The wall-clock time truncated to the minute.
    public var timeOfDay: TimeOfDay { TimeOfDay(wrapping: Int(minuteOfDay.rounded(.down))) }

    public var description: String { "\(date) \(timeOfDay)" }
}
