import Foundation

/// Local days in a time zone: which date an instant falls on, the wake-date rule, day spans
/// and RFC 3339 times. Pure (Foundation's zone rules, no clock reads).
///
/// **The wake-date rule**, the one every module uses (analyzer, store, export, schedule
/// inference): a session belongs to the local date of its end instant, whatever time it
/// started: overnight sleep, naps, night-shift sleep and sessions over 24 h alike. A night
/// that ends exactly at local midnight belongs to the new day: the sleeper got up on that
/// date, and the store (its `wake_date` column, day queries and exports) has always dated
/// sessions this way, so no stored row changes meaning.
public struct LocalCalendar: Sendable {
    public let timeZone: TimeZone
    private let calendar: Calendar

    public init(timeZone: TimeZone) {
        self.timeZone = timeZone
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    /// The local date containing the instant `unix` (seconds). Midnight belongs to the new day.
    public func localDate(ofUnix unix: Int64) -> CalendarDay {
        let local = unix + Int64(offsetSeconds(atUnix: unix))
        return CalendarDay(daysSinceEpoch: Int(floorDiv(Int(local), 86_400)))
    }

    /// The wake date of a session ending at `end` (Unix seconds): the date of the end instant.
    public func wakeDate(sessionEnd end: Int64) -> CalendarDay { localDate(ofUnix: end) }

    /// The wake date of a session ending at `end` (Unix seconds, fractional).
    public func wakeDate(sessionEnd end: Double) -> CalendarDay {
        wakeDate(sessionEnd: Int64(end.rounded(.down)))
    }

    /// Unix seconds of the first instant of `date` in this zone (local midnight, or the first
    /// valid time after it on a day whose midnight is skipped by a DST change).
    public func startOfDay(_ date: CalendarDay) -> Int64 {
        let components = DateComponents(year: date.year, month: date.month, day: date.day, hour: 0, minute: 0, second: 0)
        let start = calendar.date(from: components)!
        return Int64(calendar.startOfDay(for: start).timeIntervalSince1970.rounded(.down))
    }

    /// The half-open span of Unix seconds `[start of from, start of the day after to)`:
    /// sessions whose end falls in it have a wake date in `from...to`.
    public func span(from: CalendarDay, to: CalendarDay) -> Range<Int64> {
        startOfDay(from)..<startOfDay(to.next)
    }

    /// Offset from UTC in seconds at instant `unix`.
    public func offsetSeconds(atUnix unix: Int64) -> Int {
        timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(unix)))
    }

    /// RFC 3339 timestamp of `unix` in this zone with its offset, e.g. `2024-03-10T03:30:00-04:00`
    /// (UTC renders as `+00:00`).
    public func rfc3339(_ unix: Int64) -> String {
        let offset = offsetSeconds(atUnix: unix)
        let local = Int(unix) + offset
        let days = floorDiv(local, 86_400)
        let secondsOfDay = local - days * 86_400
        let sign = offset < 0 ? "-" : "+"
        let absOffset = abs(offset)
        let time = "\(zeroPadded(secondsOfDay / 3600, 2)):\(zeroPadded(secondsOfDay % 3600 / 60, 2)):\(zeroPadded(secondsOfDay % 60, 2))"
        return "\(CalendarDay(daysSinceEpoch: days))T\(time)\(sign)\(zeroPadded(absOffset / 3600, 2)):\(zeroPadded(absOffset % 3600 / 60, 2))"
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
