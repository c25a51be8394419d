// The hub's wall clock, read in one place (receive times of frames, capture records,
// SET_CLOCK). Ticks, not this clock, place samples in time (spec §7.3).
#if canImport(Glibc)
import Glibc
#endif

enum Wallclock {
    /// Microseconds since the Unix epoch (CLOCK_REALTIME).
    static func nowMicros() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec / 1000)
    }
}

extension Wallclock {
    /// The local zone's UTC offset now, in minutes (from TZ / /etc/localtime).
    static func utcOffsetMinutes() -> Int16 {
        var now = time(nil)
        var local = tm()
        guard localtime_r(&now, &local) != nil else { return 0 }
        return Int16(clamping: local.tm_gmtoff / 60)
    }
}
