import SleepAnalysis
import PodProtocol
import SleepDomain

/// What the router did with one side's frames. Lost data is counted, never filled in:
/// a gap in the ticks stays a gap in the samples the front end sees.
public struct SideSignalCounters: Sendable, Hashable {
    /// Piezo blocks passed to this side's front end.
    public var piezoFrames = 0
    /// Capacitance readings passed to this side's front end.
    public var capacitanceFrames = 0
    /// Samples per channel passed to the front end.
    public var samples = 0
    /// Piezo blocks and capacitance readings dropped because no clock anchor was in force
    /// (before the first SET_CLOCK answer, or after a BOOT until the new one).
    public var droppedBeforeAnchor = 0
    /// Samples per channel in the piezo blocks dropped for want of an anchor.
    public var samplesBeforeAnchor = 0
    /// Places where a block started later than the previous one ended (same boot).
    public var tickGaps = 0
    /// Samples per channel those gaps left out.
    public var missingSamples = 0
    /// Samples per channel whose ticks had already been received (dropped by the front end).
    public var repeatedSamples = 0
    /// Frames whose ticks lay more than a second behind the side's under the same anchor
    /// and boot: a pod restart nobody announced. Dropped, since no anchor places them.
    public var staleFrames = 0
    /// Blocks that cannot be samples (no channels, samples not a whole number of frames,
    /// ticks beyond 2^52): dropped.
    public var malformedFrames = 0
    /// Times the side's front end was finished and restarted because a new anchor put
    /// the data more than a second earlier than what it had already seen (clock stepped back).
    public var frontEndRestarts = 0
    /// The side's front end's own counters (bridged gaps, filter resets, rejected readings),
    /// summed over its restarts.
    public var frontEnd = FrontEndCounters()

    public init() {}
}

/// The router's counters: anchors and reboots for the whole pod, the rest per side.
public struct PodSignalCounters: Sendable, Hashable {
    /// Distinct clock anchors taken.
    public var anchors = 0
    /// Pod restarts seen: BOOT events, or a new anchor whose tick lies below ticks already seen.
    public var reboots = 0
    public var left = SideSignalCounters()
    public var right = SideSignalCounters()

    public init() {}

    public subscript(side: BedSide) -> SideSignalCounters {
        get { side == .left ? left : right }
        set { if side == .left { left = newValue } else { right = newValue } }
    }
}

extension FrontEndCounters {
    /// Sum of two front ends' counters (a side's front end before and after a restart).
    func adding(_ o: FrontEndCounters) -> FrontEndCounters {
        var c = self
        c.frames += o.frames
        c.bridgedGaps += o.bridgedGaps
        c.resets += o.resets
        c.overlappingSamples += o.overlappingSamples
        c.partialFrames += o.partialFrames
        c.rejectedCapacitance += o.rejectedCapacitance
        return c
    }
}
