import PodProtocol
import SleepAnalysis

/// Why a capture could not be analysed.
public enum CaptureAnalysisError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The bytes are not a capture (magic missing) or a record header is impossible.
    case unreadable(Capture.ReadError)
    /// No SET_CLOCK answer in the capture: no sample can be placed in time.
    case noClockAnchor(streamFrames: Int)

    public var description: String {
        switch self {
        case .unreadable(let e):
            e.description
        case .noClockAnchor(let n):
            "no clock anchor (SET_CLOCK answer) in the capture, so its \(n) streamed frames cannot be placed in time"
        }
    }

    /// The error as a user sees it, naming the file.
    public func message(file: String) -> String { "\(file): \(description)" }
}

/// A capture (firmware-protocol.md §9) run through the same router and front ends as the
/// live hub: per side, the beat times and per-second vitals, ready for `SleepAnalyzer`.
/// Pure: takes the file's bytes, never the file.
///
/// Samples are placed by their ticks and the clock anchors recorded in the capture (the
/// SET_CLOCK answers), never by receive times, so a capture analysed later, or one the
/// virtual pod played at 100×, gives what the hub would have seen live.
public struct CaptureAnalysis: Sendable {
    /// One side's front-end output over the whole capture.
    public struct SideResult: Sendable, Hashable {
        /// J-peak times, Unix seconds, ascending.
        public var beats: [Double] = []
        /// One entry per second the front end emitted, ascending (except after a clock
        /// that stepped back, counted in `counters`).
        public var vitals: [SecondVitals] = []
    }

    public var left = SideResult()
    public var right = SideResult()
    /// The router's counters (frames, drops before an anchor, tick gaps, reboots).
    public var counters: PodSignalCounters
    /// Records in the capture, and pod → hub frames among them that failed their CRC or
    /// framing checks (skipped).
    public var records = 0
    public var invalidFrames = 0
    /// The last record was cut short (a recorder killed mid-write); everything before it
    /// was used.
    public var truncatedTail = false
    /// Clock anchors in the capture, in order.
    public var anchors: [ClockAnchor] = []
    /// The pod's serial from a HELLO answer in the capture, if one was recorded.
    public var serial: String?

    public subscript(side: Side) -> SideResult { side == .left ? left : right }

    /// The UTC offset (minutes) of the last anchor: the sleeper's local time as the hub
    /// set it when the capture was recorded.
    public var utcOffsetMinutes: Int16? { anchors.last?.utcOffsetMinutes }

    /// What a user should know about the capture although it was analysed (a cut-short
    /// tail, damaged frames, data no anchor could place, lost samples), naming the file.
    public func warnings(file: String) -> [String] {
        var w: [String] = []
        if truncatedTail { w.append("\(file): the last record is cut short (recorder stopped mid-write); everything before it was used") }
        if invalidFrames > 0 { w.append("\(file): \(invalidFrames) damaged frame(s) skipped (CRC or framing)") }
        for side in Side.allCases {
            let c = counters[side]
            if c.droppedBeforeAnchor > 0 {
                w.append("\(file): \(side): \(c.droppedBeforeAnchor) frame(s) before any clock anchor dropped")
            }
            if c.staleFrames > 0 { w.append("\(file): \(side): \(c.staleFrames) frame(s) from an unannounced pod restart dropped") }
            if c.missingSamples > 0 {
                w.append("\(file): \(side): \(c.missingSamples) samples missing in \(c.tickGaps) gap(s) (not filled in)")
            }
        }
        return w
    }

    /// Reads and analyses a whole capture.
    public init(capture bytes: [UInt8], frontEnd: FrontEndConfig = FrontEndConfig(),
                sampleRate: Int = Wire.tickRate) throws(CaptureAnalysisError) {
        var router = PodSignalRouter(frontEnd: frontEnd, sampleRate: sampleRate)
        var left = SideResult(), right = SideResult()
        var anchors: [ClockAnchor] = []
        var serial: String?
        var streamFrames = 0
        var records = 0
        var invalid = 0
        func collect(_ outputs: [SideOutput]) {
            for o in outputs {
                if o.side == .left {
                    left.beats += o.output.beats
                    left.vitals += o.output.seconds
                } else {
                    right.beats += o.output.beats
                    right.vitals += o.output.seconds
                }
            }
        }
        let truncated: Bool
        do {
            truncated = try Capture.forEachRecord(in: bytes) { _, direction, frame in
                records += 1
                guard direction == .podToHub else { return }
                switch FrameDecoder.parse(frame: frame) {
                case .failure:
                    invalid += 1
                case .success(let decoded):
                    switch decoded.message {
                    case .piezo, .capacitance:
                        streamFrames += 1
                    case .response(let r):
                        if case .clock(let a) = r.body, r.status == .ok { anchors.append(a) }
                        if case .hello(let info) = r.body, r.status == .ok { serial = info.serial }
                    default:
                        break
                    }
                    collect(router.apply(decoded.message))
                }
            }
        } catch {
            throw .unreadable(error)
        }
        guard !anchors.isEmpty else { throw .noClockAnchor(streamFrames: streamFrames) }
        collect(router.finish())
        self.left = left
        self.right = right
        self.counters = router.counters
        self.records = records
        self.invalidFrames = invalid
        self.truncatedTail = truncated
        self.anchors = anchors
        self.serial = serial
    }
}
