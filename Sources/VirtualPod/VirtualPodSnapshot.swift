import NightModel
import PodProtocol

/// The virtual pod's state at one moment, for tests and status displays. Published by the
/// pod's thread before it writes the frames of each round, so a response the hub has
/// received is always reflected here.
public struct VirtualPodSnapshot: Sendable {
    /// The tty a hub opens now; nil while "unplugged".
    public var ttyPath: String?
    /// 1 after start, +1 for every replug after a disconnect.
    public var attachCount = 0
    /// The pod's tick now (500 per simulated second since its last boot).
    public var tick: UInt64 = 0
    /// Simulated seconds since the virtual pod started (model time; not reset by reboots).
    public var simulatedSeconds: Double = 0
    public var bootCount: UInt32 = 0
    /// The clock the hub set, nil while not valid.
    public var clock: ClockAnchor?
    /// A successful HELLO on the current link.
    public var linkReady = false
    public var streaming: StreamMask = []
    /// What GET_SCHEDULE would answer, per side.
    public var schedules: [ScheduleReport] = []
    /// Power stage per side.
    public var powerOn: [Bool] = []
    /// Whether each side's alarm is vibrating.
    public var vibrating: [Bool] = []
    public var alarmsFired: [FiredAlarm] = []
    /// What the model played so far, including the sleepers' answers to alarms (nil when replaying).
    public var truth: GroundTruth?
    /// Every clock the hub set, with the simulated moment it was applied.
    public var appliedClocks: [AppliedClock] = []
    public var framesSent: UInt64 = 0
    public var bytesSent: UInt64 = 0
    /// Frames lost because the hub did not read or the pod was stalled/unplugged.
    public var transmitDropped: UInt64 = 0
    /// Frames withheld by `Fault.dropFrames`.
    public var faultDroppedFrames: UInt64 = 0
    /// Frames sent with a damaged CRC by `Fault.badCRC`.
    public var corruptedFrames: UInt64 = 0
    /// Garbage bursts written by `Fault.garbage`.
    public var garbageBursts: UInt64 = 0
    public var requestsAnswered: UInt64 = 0
    /// Requests answered from the retry cache, not acted on again (§7.2).
    public var retransmitsFromCache: UInt64 = 0
    /// What the pod's own receiver counted on frames from the hub.
    public var receiver = DecoderCounters()
    /// The night (or the replay) is over, or the pod was stopped.
    public var finished = false

    public init() {}
}

/// A SET_CLOCK the pod applied: the anchor it answered and where that fell in model time.
public struct AppliedClock: Sendable, Hashable {
    public var anchor: ClockAnchor
    public var bootCount: UInt32
    /// Model ticks (500 per simulated second since the virtual pod started) at application.
    public var modelTick: UInt64
}
