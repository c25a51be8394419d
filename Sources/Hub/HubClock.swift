import Foundation
import SleepDomain

/// The hub's `WallClock`. Normally the system clock; for the demo and tests it can run
/// faster than real time from a chosen start, so that a virtual pod playing a night at
/// N× speed and the hub that sets its clock agree on the date and time of day. Data is
/// never timed by this clock: samples are placed by the pod's ticks and the clock anchor.
public struct HubClock: WallClock {
    /// Wall-clock instant the simulated clock was started at.
    public let origin: Date
    /// What the clock read at `origin`.
    public let start: Date
    /// Simulated seconds per real second (1 = real time).
    public let speed: Double

    public init(start: Date? = nil, speed: Double = 1, origin: Date = Date()) {
        self.origin = origin
        self.start = start ?? origin
        self.speed = speed
    }

    public static let system = HubClock()

    public var isAccelerated: Bool { speed != 1 || start != origin }

    public func now() -> Date {
        start.addingTimeInterval(Date().timeIntervalSince(origin) * speed)
    }

    /// How long to sleep in real time for `simulated` seconds to pass on this clock.
    public func realDuration(of simulated: TimeInterval) -> Duration {
        .milliseconds(Int64(max(0, simulated / speed) * 1000))
    }
}
