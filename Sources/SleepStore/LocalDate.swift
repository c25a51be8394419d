import Foundation

/// A calendar date without a time or zone (`YYYY-MM-DD`), as used for wake dates.
public struct LocalDate: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// Validates the date (including month lengths and leap years).
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month), day >= 1,
              day <= LocalDate.daysIn(month: month, year: year) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses exactly `YYYY-MM-DD`; anything else (or an impossible date) is nil.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2])
        else { return nil }
        self.init(year: y, month: m, day: d)
    }

    public var description: String {
        "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    public static func < (a: LocalDate, b: LocalDate) -> Bool {
        (a.year, a.month, a.day) < (b.year, b.month, b.day)
    }

    /// The next calendar day.
    public var next: LocalDate {
        if day < LocalDate.daysIn(month: month, year: year) {
            return LocalDate(unchecked: year, month, day + 1)
        }
        if month < 12 { return LocalDate(unchecked: year, month + 1, 1) }
        return LocalDate(unchecked: year + 1, 1, 1)
    }

    private init(unchecked y: Int, _ m: Int, _ d: Int) {
        year = y
        month = m
        day = d
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let date = LocalDate(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a YYYY-MM-DD date: \(text)"))
        }
        self = date
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// Wake-date attribution and local-day arithmetic in a time zone. Pure.
///
/// A session belongs to the local date on which it ends (its wake date), whatever time it
/// started: overnight sleep, naps, night-shift sleep and sessions over 24 h alike.
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
    public func localDate(ofUnix unix: Int64) -> LocalDate {
        let c = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: TimeInterval(unix)))
        // Components of a valid Date in a Gregorian calendar are always a valid date.
        return LocalDate(year: c.year!, month: c.month!, day: c.day!)!
    }

    /// The wake date of a session ending at `end` (Unix seconds).
    public func wakeDate(sessionEnd end: Int64) -> LocalDate { localDate(ofUnix: end) }

    /// Unix seconds of the first instant of `date` in this zone (local midnight, or the first
    /// valid time after it on a day whose midnight is skipped by a DST change).
    public func startOfDay(_ date: LocalDate) -> Int64 {
        let components = DateComponents(year: date.year, month: date.month, day: date.day, hour: 0, minute: 0, second: 0)
        let start = calendar.date(from: components)!
        return Int64(calendar.startOfDay(for: start).timeIntervalSince1970.rounded(.down))
    }

    /// The half-open span of Unix seconds `[start of from, start of the day after to)`:
    /// sessions whose end falls in it have a wake date in `from...to`.
    public func span(from: LocalDate, to: LocalDate) -> Range<Int64> {
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
        let local = unix + Int64(offset)
        let days = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        let secondsOfDay = local - days * 86_400
        let (y, m, d) = LocalCalendar.civil(fromDays: days)
        let sign = offset < 0 ? "-" : "+"
        let absOffset = abs(offset)
        let date = "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))"
        let time = "\(pad(Int(secondsOfDay / 3600), 2)):\(pad(Int(secondsOfDay % 3600 / 60), 2)):\(pad(Int(secondsOfDay % 60), 2))"
        return "\(date)T\(time)\(sign)\(pad(absOffset / 3600, 2)):\(pad(absOffset % 3600 / 60, 2))"
    }

    /// Proleptic Gregorian date of a count of days since 1970-01-01 (Howard Hinnant's algorithm).
    static func civil(fromDays z0: Int64) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (Int(m <= 2 ? y + 1 : y), Int(m), Int(d))
    }
}

/// Zero-padded decimal of a non-negative number.
func pad(_ value: Int, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
}
