import Foundation
import SleepDomain

/// The hub's `WallClock`. Normally the system clock; for the demo and tests it can run
/// faster than real time from a chosen start, so that a virtual pod playing a night at
/// N× speed and the hub that sets its clock agree on the date and time of day. Data is
/// never timed by this clock: samples are placed by the pod's ticks and the clock anchor.
package struct HubClock: WallClock {
    /// Wall-clock instant the simulated clock was started at.
    package let origin: Date
    /// What the clock read at `origin`.
    package let start: Date
    /// Simulated seconds per real second (1 = real time).
    package let speed: Double

    package init(start: Date? = nil, speed: Double = 1, origin: Date = Date()) {
        self.origin = origin
        self.start = start ?? origin
        self.speed = speed
    }

    package static let system = HubClock()

    package var isAccelerated: Bool { speed != 1 || start != origin }

    package func now() -> Date {
        start.addingTimeInterval(Date().timeIntervalSince(origin) * speed)
    }

    /// Seconds of this clock gone by since `instant`, on the monotonic clock: unlike the
    /// difference of two `now()`s, not thrown off when the system's clock is stepped (NTP
    /// setting a hub that booted without a real-time clock).
    package func seconds(since instant: ContinuousClock.Instant) -> TimeInterval {
        let elapsed = (ContinuousClock.now - instant).components
        return (Double(elapsed.seconds) + Double(elapsed.attoseconds) * 1e-18) * speed
    }

    /// The monotonic instant at which this clock read `seconds` ago.
    package func instant(secondsAgo seconds: TimeInterval) -> ContinuousClock.Instant {
        ContinuousClock.now - .milliseconds(Int64(max(0, seconds) / speed * 1000))
    }

    /// How long to sleep in real time for `simulated` seconds to pass on this clock.
    package func realDuration(of simulated: TimeInterval) -> Duration {
        .milliseconds(Int64(max(0, simulated / speed) * 1000))
    }
}
