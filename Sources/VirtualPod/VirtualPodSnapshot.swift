import NightModel
import PodProtocol

/// The virtual pod's state at one moment, for tests and status displays. Published by the
/// pod's thread before it writes the frames of each round, so a response the hub has
/// received is always reflected here.
package struct VirtualPodSnapshot: Sendable {
    /// The tty a hub opens now; nil while "unplugged".
    package var ttyPath: String?
    /// 1 after start, +1 for every replug after a disconnect.
    package var attachCount = 0
    /// The pod's tick now (500 per simulated second since its last boot).
    package var tick: UInt64 = 0
    /// Simulated seconds since the virtual pod started (model time; not reset by reboots).
    package var simulatedSeconds: Double = 0
    package var bootCount: UInt32 = 0
    /// The clock the hub set, nil while not valid.
    package var clock: ClockAnchor?
    /// A successful HELLO on the current link.
    package var linkReady = false
    package var streaming: StreamMask = []
    /// What GET_SCHEDULE would answer, per side.
    package var schedules: [ScheduleReport] = []
    /// Power stage per side.
    package var powerOn: [Bool] = []
    /// Whether each side's alarm is vibrating.
    package var vibrating: [Bool] = []
    package var alarmsFired: [FiredAlarm] = []
    /// Every power change with its cause (the hub's SET_POWER or the pod's schedule).
    package var powerLog: [PowerChange] = []
    /// What the model played so far, including the sleepers' answers to alarms (nil when replaying).
    package var truth: GroundTruth?
    /// Every clock the hub set, with the simulated moment it was applied.
    package var appliedClocks: [AppliedClock] = []
    package var framesSent: UInt64 = 0
    package var bytesSent: UInt64 = 0
    /// Frames lost because the hub did not read or the pod was stalled/unplugged.
    package var transmitDropped: UInt64 = 0
    /// Frames withheld by `Fault.dropFrames`.
    package var faultDroppedFrames: UInt64 = 0
    /// Frames sent with a damaged CRC by `Fault.badCRC`.
    package var corruptedFrames: UInt64 = 0
    /// Garbage bursts written by `Fault.garbage`.
    package var garbageBursts: UInt64 = 0
    package var requestsAnswered: UInt64 = 0
    /// Requests answered from the retry cache, not acted on again (§7.2).
    package var retransmitsFromCache: UInt64 = 0
    /// What the pod's own receiver counted on frames from the hub.
    package var receiver = DecoderCounters()
    /// The night (or the replay) is over, or the pod was stopped.
    package var finished = false

    package init() {}
}

/// A SET_CLOCK the pod applied: the anchor it answered and where that fell in model time.
package struct AppliedClock: Sendable, Hashable {
    package var anchor: ClockAnchor
    package var bootCount: UInt32
    /// Model ticks (500 per simulated second since the virtual pod started) at application.
    package var modelTick: UInt64
}
