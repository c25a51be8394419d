import Foundation

/// The one notion of "now" (the hub's wall clock), injectable so tests and the accelerated demo
/// control time (outbox due times, backoff, leases, retention cut-offs, schedule instants)
/// without sleeping. Data is never timed by it: samples are placed by the pod's ticks.
public protocol WallClock: Sendable {
    /// The current instant.
    func now() -> Date
}

extension WallClock {
    /// Current time in whole Unix seconds (UTC), rounded down.
    public func unixSeconds() -> Int64 { Int64(now().timeIntervalSince1970.rounded(.down)) }

    /// Current time in Unix microseconds (UTC), rounded down; 0 before 1970.
    public func unixMicros() -> UInt64 {
        let micros = (now().timeIntervalSince1970 * 1_000_000).rounded(.down)
        return micros > 0 ? UInt64(micros) : 0
    }
}

/// The system's real-time clock.
public struct SystemClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
}
