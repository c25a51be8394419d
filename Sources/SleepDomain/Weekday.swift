/// Days of the week numbered as the pod's weekday mask numbers them (bit 0 = Monday).
public enum Weekday: Int, CaseIterable, Sendable, Hashable, Codable, CustomStringConvertible {
    case monday = 0, tuesday, wednesday, thursday, friday, saturday, sunday

    /// The weekday of a day counted from 1970-01-01, which was a Thursday.
    public init(daysSinceEpoch: Int) {
        self = Weekday(rawValue: floorMod(daysSinceEpoch + 3, 7))!
    }

    /// ISO 8601 number: 1 = Monday … 7 = Sunday.
    public var isoNumber: Int { rawValue + 1 }

    /// The single-bit mask for this day.
    public var mask: WeekdayMask { WeekdayMask(rawValue: 1 << UInt8(rawValue)) }

    /// The weekday `days` later (negative goes back), wrapping round the week.
    public func advanced(by days: Int) -> Weekday {
        Weekday(rawValue: floorMod(rawValue + days, 7))!
    }

    public var description: String {
        ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"][rawValue]
    }
}

/// The set of days a schedule or alarm applies to, bit 0 = Monday … bit 6 = Sunday: exactly the
/// byte the pod receives. Bit 7 is reserved on the wire; this type never holds it (the protocol
/// codec rejects a byte that has it before building a mask).
public struct WeekdayMask: OptionSet, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x7F }

    public static let monday = WeekdayMask(rawValue: 1 << 0)
    public static let tuesday = WeekdayMask(rawValue: 1 << 1)
    public static let wednesday = WeekdayMask(rawValue: 1 << 2)
    public static let thursday = WeekdayMask(rawValue: 1 << 3)
    public static let friday = WeekdayMask(rawValue: 1 << 4)
    public static let saturday = WeekdayMask(rawValue: 1 << 5)
    public static let sunday = WeekdayMask(rawValue: 1 << 6)
    public static let mondayToFriday: WeekdayMask = [.monday, .tuesday, .wednesday, .thursday, .friday]
    public static let saturdayAndSunday: WeekdayMask = [.saturday, .sunday]
    public static let everyDay = WeekdayMask(rawValue: 0x7F)

    public init(_ days: some Sequence<Weekday>) {
        self.init(rawValue: days.reduce(0) { $0 | $1.mask.rawValue })
    }

    public func contains(_ day: Weekday) -> Bool { contains(day.mask) }

    /// The days in the set, Monday first.
    public var days: [Weekday] { Weekday.allCases.filter { contains($0) } }

    /// Every day moved by `days` (−1 turns {Sat, Sun} into {Fri, Sat}), wrapping round the week.
    /// Used to move a wake-day mask to the day a power-on before midnight actually fires.
    public func shifted(byDays days: Int) -> WeekdayMask {
        WeekdayMask(self.days.map { $0.advanced(by: days) })
    }

    /// "Mon,Tue,Wed", or "every day" / "none".
    public var description: String {
        if self == .everyDay { return "every day" }
        if isEmpty { return "none" }
        return days.map(\.description).joined(separator: ",")
    }
}
