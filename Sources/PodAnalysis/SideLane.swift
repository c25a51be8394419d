import PodProtocol
import SleepAnalysis
import SleepDomain

/// One side's path through the router: tick bookkeeping, placement of ticks on the
/// side's sample index, the short hold that puts capacitance before later piezo, and the
/// side's front end.
struct SideLane: Sendable {
    /// A piezo block waiting for the capacitance reading that follows it.
    struct Held: Sendable {
        var samples: [Int32]
        var channels: Int
        var index: Int64
        var count: Int
    }

    let side: BedSide
    let config: FrontEndConfig
    let sampleRate: Int
    var frontEnd: SignalFrontEnd
    var counters = SideSignalCounters()
    /// Counters of front ends this lane finished and replaced.
    private var retiredFrontEnds = FrontEndCounters()

    /// The anchor whose time is sample index 0 of this side (its first anchor, or the one
    /// in force when the front end was last restarted).
    private var reference: ClockAnchor?
    private var clock: SampleClock
    /// The anchor the last frame of this side was placed with.
    private var anchorUsed: ClockAnchor?
    private var era = 0
    /// The tick the next piezo block should start at (same boot).
    private var expectedTick: UInt64?
    /// One past the highest sample index routed, and the highest capacitance index.
    private var nextIndex: Int64?
    private var lastCapacitanceIndex: Int64?
    private var held: [Held] = []

    init(side: BedSide, config: FrontEndConfig, sampleRate: Int) {
        self.side = side
        self.config = config
        self.sampleRate = sampleRate
        frontEnd = SignalFrontEnd(config: config)
        clock = SampleClock(sampleIndex: 0, time: 0, sampleRate: Double(sampleRate))
    }

    var reportedCounters: SideSignalCounters {
        var c = counters
        c.frontEnd = retiredFrontEnds.adding(frontEnd.counters)
        return c
    }

    // MARK: Frames in

    mutating func route(_ block: PiezoBlock, anchor: ClockAnchor, era: Int, into out: inout [SideOutput]) {
        enter(era: era)
        let count = block.count
        let first = block.firstTick
        if let expected = expectedTick {
            if first < expected {
                // Ticks never run backwards within a boot: far behind means the pod restarted
                // unannounced and no anchor can place these samples.
                if expected - first > UInt64(sampleRate) {
                    counters.staleFrames += 1
                    return
                }
                counters.repeatedSamples += Int(min(UInt64(count), expected - first))
            } else if first > expected {
                counters.tickGaps += 1
                counters.missingSamples += Int(first - expected)
            }
        }
        expectedTick = max(expectedTick ?? 0, first + UInt64(count))
        let index = place(first, anchor: anchor, into: &out)
        held.append(Held(samples: block.samples, channels: Int(block.channels), index: index, count: count))
        nextIndex = max(nextIndex ?? Int64.min, index + Int64(count))
        counters.piezoFrames += 1
        counters.samples += count
        release(into: &out)
    }

    mutating func route(_ reading: CapacitanceReading, anchor: ClockAnchor, era: Int,
                        into out: inout [SideOutput]) {
        enter(era: era)
        let index = place(reading.tick, anchor: anchor, into: &out)
        frontEnd.pushCapacitance(reading.values, at: clock.time(ofSample: index))
        lastCapacitanceIndex = max(lastCapacitanceIndex ?? Int64.min, index)
        counters.capacitanceFrames += 1
        release(into: &out)
    }

    /// Everything held goes to the front end, which emits all it still holds back.
    mutating func finish() -> FrontEndOutput {
        var o = FrontEndOutput()
        for h in held {
            o.append(frontEnd.pushPiezo(h.samples, channels: h.channels, firstSampleIndex: h.index, clock: clock))
        }
        held.removeAll()
        o.append(frontEnd.finish())
        return o
    }

    // MARK: Time placement

    private mutating func enter(era newEra: Int) {
        guard newEra != era else { return }
        era = newEra
        expectedTick = nil
    }

    /// The sample index of `tick` under `anchor`, counted from the lane's reference anchor:
    /// round((anchor − reference) in samples) + (tick − anchor.tick).
    private func index(ofTick tick: UInt64, under anchor: ClockAnchor) -> Int64 {
        guard let reference else { return Int64(tick) - Int64(anchor.tick) }
        let shift = ((Double(anchor.unixMillis) - Double(reference.unixMillis)) * Double(sampleRate) / 1000).rounded()
        // Anchors decades apart are still placed; absurd ones are clamped, never trap.
        let limit = Double(1 << 60)
        return Int64(min(max(shift, -limit), limit)) + Int64(tick) - Int64(anchor.tick)
    }

    /// Places a tick; restarts the front end when a new anchor moves the data more than a
    /// second before what this side has already seen (the hub's clock stepped back), since
    /// the front end would drop all of it as already processed.
    private mutating func place(_ tick: UInt64, anchor: ClockAnchor, into out: inout [SideOutput]) -> Int64 {
        if reference == nil { setReference(anchor) }
        var index = index(ofTick: tick, under: anchor)
        if let used = anchorUsed, used != anchor {
            var seen = nextIndex
            if let c = lastCapacitanceIndex { seen = max(seen ?? c + 1, c + 1) }
            if let seen, index < seen - Int64(sampleRate) {
                restartFrontEnd(anchor: anchor, into: &out)
                index = self.index(ofTick: tick, under: anchor)
            }
        }
        anchorUsed = anchor
        return index
    }

    private mutating func setReference(_ anchor: ClockAnchor) {
        reference = anchor
        clock = SampleClock(sampleIndex: 0, time: Double(anchor.unixMillis) / 1000, sampleRate: Double(sampleRate))
    }

    private mutating func restartFrontEnd(anchor: ClockAnchor, into out: inout [SideOutput]) {
        let o = finish()
        if !o.seconds.isEmpty || !o.beats.isEmpty { out.append(SideOutput(side: side, output: o)) }
        retiredFrontEnds = retiredFrontEnds.adding(frontEnd.counters)
        frontEnd = SignalFrontEnd(config: config)
        setReference(anchor)
        nextIndex = nil
        lastCapacitanceIndex = nil
        counters.frontEndRestarts += 1
    }

    // MARK: Capacitance before piezo

    /// Passes on the held blocks a capacitance reading at or after their last sample has
    /// covered, and any held longer than a second (the capacitance stream is late or off).
    private mutating func release(into out: inout [SideOutput]) {
        guard let last = held.last else { return }
        let newestEnd = last.index + Int64(last.count)
        let hold = Int64(sampleRate)
        var o = FrontEndOutput()
        var k = 0
        while k < held.count {
            let h = held[k]
            let covered = lastCapacitanceIndex.map { $0 >= h.index + Int64(h.count) - 1 } ?? false
            guard covered || newestEnd - h.index > hold else { break }
            o.append(frontEnd.pushPiezo(h.samples, channels: h.channels, firstSampleIndex: h.index, clock: clock))
            k += 1
        }
        guard k > 0 else { return }
        held.removeFirst(k)
        if !o.seconds.isEmpty || !o.beats.isEmpty { out.append(SideOutput(side: side, output: o)) }
    }
}
