import PodProtocol
import SleepDomain

/// The pod's wall clock: what SET_CLOCK gave it, turned into local weekday and minute.
///
/// Pure arithmetic on ticks and milliseconds (no Foundation calendars): the pod knows only
/// a UTC offset, never a time zone, exactly like the firmware it stands for (§7.4).
struct LocalTime: Sendable, Hashable {
    /// The local day of the week.
    var weekday: Weekday
    /// Minutes since local midnight.
    var minuteOfDay: Int
    /// Local days since 1970-01-01 (which day "today" is, for a disarmed alarm).
    var dayNumber: Int64

    /// Local wall time at `unixMillis` with `offsetMinutes` east of UTC.
    init(unixMillis: Int64, offsetMinutes: Int16) {
        let local = unixMillis + Int64(offsetMinutes) * 60_000
        let day = floorDiv(Int(local), 86_400_000)
        dayNumber = Int64(day)
        weekday = Weekday(daysSinceEpoch: day)
        minuteOfDay = (Int(local) - day * 86_400_000) / 60_000
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
        let boundary = Int64(floorDiv(Int(local), 60_000) + 1) * 60_000
        let anchorLocal = unixMillis + Int64(utcOffsetMinutes) * 60_000
        // Smallest tick whose time is at or past the boundary.
        let delta = boundary - anchorLocal
        let ticks = (delta + msPerTick - 1) / msPerTick
        let next = Int64(bitPattern: tick) + ticks
        return next > Int64(bitPattern: t) ? UInt64(next) : t + 1
    }
}
