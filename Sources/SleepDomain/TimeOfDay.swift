/// A local wall-clock time of day with minute resolution, the unit the pod's schedule speaks
/// (`HH:mm`). It carries no date and no time zone on purpose: the pod knows neither, and the hub
/// resolves it against a date and the pod's zone only when an instant is needed.
public struct TimeOfDay: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    public static let minutesPerDay = 1440

    /// Minutes after local midnight, always in 0..<1440.
    public let minuteOfDay: Int

    /// Nil when `minuteOfDay` is outside 0..<1440.
    public init?(minuteOfDay: Int) {
        guard (0..<Self.minutesPerDay).contains(minuteOfDay) else { return nil }
        self.minuteOfDay = minuteOfDay
    }

    /// Any integer number of minutes, wrapped onto the 24-hour clock (-10 is 23:50, 1450 is 00:10).
    public init(wrapping minutes: Int) {
        self.minuteOfDay = floorMod(minutes, Self.minutesPerDay)
    }

    /// Nil unless 0 ≤ hour ≤ 23 and 0 ≤ minute ≤ 59.
    public init?(hour: Int, minute: Int) {
        guard (0...23).contains(hour), (0...59).contains(minute) else { return nil }
        self.minuteOfDay = hour * 60 + minute
    }

    /// Parses exactly `HH:mm` (two digits, colon, two digits); nil for anything else.
    public init?(_ text: String) {
        let chars = Array(text.utf8)
        guard chars.count == 5, chars[2] == UInt8(ascii: ":") else { return nil }
        func digit(_ c: UInt8) -> Int? {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) ? Int(c - UInt8(ascii: "0")) : nil
        }
        guard let h1 = digit(chars[0]), let h2 = digit(chars[1]),
              let m1 = digit(chars[3]), let m2 = digit(chars[4]) else { return nil }
        self.init(hour: h1 * 10 + h2, minute: m1 * 10 + m2)
    }

    public var hour: Int { minuteOfDay / 60 }
    public var minute: Int { minuteOfDay % 60 }

    /// `HH:mm`, zero-padded, 24-hour.
    public var description: String {
        let h = hour, m = minute
        return (h < 10 ? "0" : "") + String(h) + ":" + (m < 10 ? "0" : "") + String(m)
    }

    /// This time moved by `minutes` (negative allowed), wrapping at midnight.
    public func adding(minutes: Int) -> TimeOfDay {
        TimeOfDay(wrapping: minuteOfDay + minutes)
    }

    /// Rounded to a multiple of `step` minutes (wrapping at midnight, so 23:58 to the nearest
    /// 5 minutes is 00:00). `step` must be ≥ 1; values ≤ 1 return the time unchanged.
    public func rounded(toStep step: Int, rule: RoundingRule) -> TimeOfDay {
        TimeOfDay(wrapping: Self.round(minuteOfDay, toStep: step, rule: rule))
    }

    public static func < (lhs: TimeOfDay, rhs: TimeOfDay) -> Bool { lhs.minuteOfDay < rhs.minuteOfDay }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = TimeOfDay(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an HH:mm time: \(text)")
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// Rounds an absolute minute count (may be negative or ≥ 1440) without wrapping, so callers
    /// can tell when rounding carried a time across midnight.
    public static func round(_ minutes: Int, toStep step: Int, rule: RoundingRule) -> Int {
        guard step > 1 else { return minutes }
        let down = floorDiv(minutes, step) * step
        switch rule {
        case .down: return down
        case .up: return down == minutes ? minutes : down + step
        case .nearest: return (minutes - down) * 2 >= step ? down + step : down
        }
    }
}

/// How a time is snapped to the schedule step. Ties under `.nearest` go to the later time.
public enum RoundingRule: String, Sendable, Hashable, Codable, CaseIterable {
    case nearest, down, up
}
