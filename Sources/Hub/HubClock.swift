import Foundation
import SleepDomain
import SystemCalls

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
    /// Time shared with an in-process virtual pod (the clocked tests): this clock then runs
    /// on the timeline's running time and stands still while the pod holds it.
    package let timeline: PacedTimeline?
    private let timelineStart: Duration

    package init(start: Date? = nil, speed: Double = 1, origin: Date = Date(), timeline: PacedTimeline? = nil) {
        self.origin = origin
        self.start = start ?? origin
        self.speed = speed
        self.timeline = timeline
        timelineStart = timeline?.elapsed() ?? .zero
    }

    package static let system = HubClock()

    package var isAccelerated: Bool { speed != 1 || start != origin || timeline != nil }

    package func now() -> Date {
        if let timeline { return start.addingTimeInterval((timeline.elapsed() - timelineStart).secondsValue * speed) }
        return start.addingTimeInterval(Date().timeIntervalSince(origin) * speed)
    }

    /// A point on this clock's monotonic time line: unlike a `Date` from `now()`, not thrown
    /// off when the system's clock is stepped (NTP setting a hub that booted without a
    /// real-time clock), and still while a paced timeline is held.
    package struct Mark: Sendable, Hashable {
        fileprivate let running: Duration
    }

    package func mark() -> Mark { Mark(running: running()) }

    /// The mark this clock passed `seconds` ago.
    package func mark(secondsAgo seconds: TimeInterval) -> Mark {
        Mark(running: running() - .milliseconds(Int64(max(0, seconds) / speed * 1000)))
    }

    /// Seconds of this clock gone by since `mark`.
    package func seconds(since mark: Mark) -> TimeInterval {
        (running() - mark.running).secondsValue * speed
    }

    /// How long to sleep in real time for `simulated` seconds to pass on this clock (at least:
    /// a held timeline makes it longer, so timed work checks the clock again when it wakes).
    package func realDuration(of simulated: TimeInterval) -> Duration {
        .milliseconds(Int64(max(0, simulated / speed) * 1000))
    }

    private func running() -> Duration {
        timeline?.elapsed() ?? (ContinuousClock.now - Self.processStart)
    }

    private static let processStart = ContinuousClock.now
}

extension Duration {
    fileprivate var secondsValue: Double {
        let c = components
        return Double(c.seconds) + Double(c.attoseconds) * 1e-18
    }
}
