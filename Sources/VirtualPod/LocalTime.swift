import PodProtocol

/// The pod's wall clock: what SET_CLOCK gave it, turned into local weekday and minute.
///
/// Pure arithmetic on ticks and milliseconds (no Foundation calendars): the pod knows only
/// a UTC offset, never a time zone, exactly like the firmware it stands for (§7.4).
struct LocalTime: Sendable, Hashable {
    /// ISO weekday, 1 = Monday … 7 = Sunday.
    var weekday: Int
    /// Minutes since local midnight.
    var minuteOfDay: Int
    /// Local days since 1970-01-01 (which day "today" is, for a disarmed alarm).
    var dayNumber: Int64

    /// Local wall time at `unixMillis` with `offsetMinutes` east of UTC.
    init(unixMillis: Int64, offsetMinutes: Int16) {
        let local = unixMillis + Int64(offsetMinutes) * 60_000
        let day = Self.floorDiv(local, 86_400_000)
        dayNumber = day
        let msOfDay = local - day * 86_400_000
        // 1970-01-01 was a Thursday (ISO weekday 4).
        weekday = Int(((day % 7) + 7 + 3) % 7) + 1
        minuteOfDay = Int(msOfDay / 60_000)
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }
}

extension ClockAnchor {
    /// UTC milliseconds at `tick` (one tick is 2 ms, §7.3).
    func unixMillis(atTick t: UInt64) -> Int64 {
        unixMillis + (Int64(bitPattern: t) - Int64(bitPattern: tick)) * Int64(1000 / Wire.tickRate)
    }

    /// The first tick after `t` at which the local clock shows a whole minute (hh:mm:00.000).
    func nextMinuteTick(after t: UInt64) -> UInt64 {
        let msPerTick = Int64(1000 / Wire.tickRate)
        let local = unixMillis(atTick: t) + Int64(utcOffsetMinutes) * 60_000
        let boundary = (LocalTime.floorDiv(local, 60_000) + 1) * 60_000
        let anchorLocal = unixMillis + Int64(utcOffsetMinutes) * 60_000
        // Smallest tick whose time is at or past the boundary.
        let delta = boundary - anchorLocal
        let ticks = (delta + msPerTick - 1) / msPerTick
        let next = Int64(bitPattern: tick) + ticks
        return next > Int64(bitPattern: t) ? UInt64(next) : t + 1
    }
}
