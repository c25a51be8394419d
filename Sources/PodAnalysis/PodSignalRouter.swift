import PodProtocol
import SleepAnalysis
import SleepDomain

/// What the router produced for one side in one call: the seconds (and their beats) that
/// side's front end completed.
public struct SideOutput: Sendable, Hashable {
    public var side: BedSide
    public var output: FrontEndOutput

    public init(side: BedSide, output: FrontEndOutput) {
        self.side = side
        self.output = output
    }
}

/// Pod messages in, per-side front-end output out: the glue between the protocol and the
/// signal front end, the same live (daemon, `podbridge stream`) and offline (captures).
///
/// Time comes only from ticks and clock anchors (firmware-protocol.md §7.3): each side's
/// samples are placed on a continuous sample index counted from the first anchor that
/// side used, every tick mapped through the anchor in force when it arrived. So a pod
/// reboot (ticks restart at 0, a new anchor follows) lands the new samples after the old
/// ones at their true times: the front end sees a gap, not overlapping data. Piezo or
/// capacitance with no anchor in force (before the first one, or after a BOOT until the
/// next one) cannot be placed and is dropped and counted.
///
/// The front end needs each capacitance reading before the piezo samples 8 s later; the
/// router guarantees more: piezo blocks wait (at most one second of samples) until a
/// capacitance reading at or after their last tick has arrived, so readings always enter
/// before the samples that follow them.
public struct PodSignalRouter: Sendable {
    public let frontEndConfig: FrontEndConfig
    /// Ticks (and piezo samples) per second.
    public let sampleRate: Int
    /// The anchor in force; nil before the first and between a BOOT and the next.
    public private(set) var currentAnchor: ClockAnchor?

    private var lanes: [SideLane]
    private var bootEra = 0
    /// Highest tick seen in the current boot (a new anchor below it means the pod restarted).
    private var highestTick: UInt64?
    private var anchorsTaken = 0
    private var reboots = 0

    /// Largest tick accepted (2^52 ticks at 500 Hz is nearly 300 000 years): keeps every
    /// index calculation exact in Int64 and Double.
    static let maxTick: UInt64 = 1 << 52

    public init(frontEnd: FrontEndConfig = FrontEndConfig(), sampleRate: Int = 500) {
        var config = frontEnd
        let rate = max(sampleRate, 1)
        config.sampleRate = Double(rate)
        self.frontEndConfig = config
        self.sampleRate = rate
        lanes = BedSide.allCases.map { SideLane(side: $0, config: config, sampleRate: rate) }
    }

    public var counters: PodSignalCounters {
        var c = PodSignalCounters()
        c.anchors = anchorsTaken
        c.reboots = reboots
        for lane in lanes { c[lane.side] = lane.reportedCounters }
        return c
    }

    /// The hub got a SET_CLOCK answer. Repeating the anchor in force changes nothing; an
    /// anchor whose tick lies below ticks already seen means the pod restarted.
    public mutating func anchor(_ anchor: ClockAnchor) {
        guard anchor.tick <= Self.maxTick else { return }
        if let current = currentAnchor, current == anchor { return }
        if let high = highestTick, anchor.tick < high {
            bootEra += 1
            reboots += 1
        }
        currentAnchor = anchor
        anchorsTaken += 1
        highestTick = max(highestTick ?? 0, anchor.tick)
    }

    /// Routes one message: PIEZO and CAPACITANCE to their side's front end; a SET_CLOCK
    /// answer with its anchor to `anchor(_:)`; a BOOT event ends the anchor in force (the
    /// pod's ticks restart at 0); everything else is ignored.
    public mutating func apply(_ message: Message) -> [SideOutput] {
        var out: [SideOutput] = []
        switch message {
        case .piezo(let block):
            route(block, into: &out)
        case .capacitance(let reading):
            route(reading, into: &out)
        case .response(let r):
            if r.request == .setClock, r.status == .ok, case .clock(let a) = r.body { anchor(a) }
        case .event(let e) where e.kind == .boot:
            currentAnchor = nil
            highestTick = nil
            bootEra += 1
            reboots += 1
        default:
            break
        }
        return Self.merged(out)
    }

    /// End of the data (end of a capture, the daemon stopping): releases held blocks and
    /// every second the front ends still hold for lookahead.
    public mutating func finish() -> [SideOutput] {
        var out: [SideOutput] = []
        for i in lanes.indices {
            let o = lanes[i].finish()
            if !o.seconds.isEmpty || !o.beats.isEmpty { out.append(SideOutput(side: lanes[i].side, output: o)) }
        }
        return Self.merged(out)
    }

    // MARK: Routing

    private mutating func route(_ block: PiezoBlock, into out: inout [SideOutput]) {
        let i = block.side.index
        guard block.channels >= 1, block.samples.count % Int(block.channels) == 0,
              block.firstTick <= Self.maxTick else {
            lanes[i].counters.malformedFrames += 1
            return
        }
        guard let anchor = currentAnchor else {
            lanes[i].counters.droppedBeforeAnchor += 1
            lanes[i].counters.samplesBeforeAnchor += block.count
            return
        }
        guard block.count > 0 else { return }
        highestTick = max(highestTick ?? 0, block.firstTick + UInt64(block.count) - 1)
        lanes[i].route(block, anchor: anchor, era: bootEra, into: &out)
    }

    private mutating func route(_ reading: CapacitanceReading, into out: inout [SideOutput]) {
        let i = reading.side.index
        guard reading.tick <= Self.maxTick else {
            lanes[i].counters.malformedFrames += 1
            return
        }
        guard let anchor = currentAnchor else {
            lanes[i].counters.droppedBeforeAnchor += 1
            return
        }
        highestTick = max(highestTick ?? 0, reading.tick)
        lanes[i].route(reading, anchor: anchor, era: bootEra, into: &out)
    }

    /// One output per side, left first, empty ones left out.
    private static func merged(_ parts: [SideOutput]) -> [SideOutput] {
        guard parts.count > 1 else {
            return parts.filter { !$0.output.seconds.isEmpty || !$0.output.beats.isEmpty }
        }
        var result: [SideOutput] = []
        for side in BedSide.allCases {
            var o = FrontEndOutput()
            for p in parts where p.side == side { o.append(p.output) }
            if !o.seconds.isEmpty || !o.beats.isEmpty { result.append(SideOutput(side: side, output: o)) }
        }
        return result
    }
}
