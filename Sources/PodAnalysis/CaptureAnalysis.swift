import PodProtocol
import SleepAnalysis
import SleepDomain

/// Why a capture could not be analysed.
public enum CaptureAnalysisError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The bytes are not a capture (magic missing) or a record header is impossible.
    case unreadable(Capture.ReadError)
    /// No SET_CLOCK answer in the capture: no sample can be placed in time.
    case noClockAnchor(streamFrames: Int)
    /// The anchors place one side's data over more than `InputFormats.maximumSpan`: one of
    /// them is wrong, and staging such a span would not fit in memory.
    case spanTooLong(days: Double)

    public var description: String {
        switch self {
        case .unreadable(let e):
            e.description
        case .noClockAnchor(let n):
            "no clock anchor (SET_CLOCK answer) in the capture, so its \(n) streamed frames cannot be placed in time"
        case .spanTooLong(let days):
            "the capture's clock anchors place its data over \(Int(days.rounded())) days (at most "
                + "\(Int(InputFormats.maximumSpan / 86_400))): a SET_CLOCK answer in it holds a wrong time"
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
public struct CaptureAnalysis: Sendable, Hashable {
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

    public subscript(side: BedSide) -> SideResult { side == .left ? left : right }

    /// The UTC offset (minutes) of the last anchor: the sleeper's local time as the hub
    /// set it when the capture was recorded.
    public var utcOffsetMinutes: Int16? { anchors.last?.utcOffsetMinutes }

    /// What a user should know about the capture although it was analysed (a cut-short
    /// tail, damaged frames, data no anchor could place, lost samples), naming the file.
    public func warnings(file: String) -> [String] {
        var w: [String] = []
        if truncatedTail { w.append("\(file): the last record is cut short (recorder stopped mid-write); everything before it was used") }
        if invalidFrames > 0 { w.append("\(file): \(invalidFrames) damaged frame(s) skipped (CRC or framing)") }
        for side in BedSide.allCases {
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

    /// Reads and analyses a whole capture held in memory (tests, small files). A file is
    /// better fed in chunks to `CaptureStreamAnalyzer`, which gives the same result in
    /// memory that does not grow with the night.
    public init(capture bytes: [UInt8], frontEnd: FrontEndConfig = FrontEndConfig(),
                sampleRate: Int = Wire.tickRate) throws(CaptureAnalysisError) {
        var sink = CaptureRecordSink(frontEnd: frontEnd, sampleRate: sampleRate)
        let truncated: Bool
        do {
            truncated = try Capture.forEachRecord(in: bytes) { _, direction, frame in
                sink.take(direction, frame)
            }
        } catch {
            throw .unreadable(error)
        }
        self = try sink.result(truncatedTail: truncated)
    }

    init(left: SideResult, right: SideResult, counters: PodSignalCounters, records: Int, invalidFrames: Int,
         truncatedTail: Bool, anchors: [ClockAnchor], serial: String?) {
        self.left = left
        self.right = right
        self.counters = counters
        self.records = records
        self.invalidFrames = invalidFrames
        self.truncatedTail = truncatedTail
        self.anchors = anchors
        self.serial = serial
    }
}

/// What a capture's records become, one record at a time: the router and front ends, and
/// the small per-second results. Shared by the whole-file and the streaming paths.
struct CaptureRecordSink: Sendable {
    private var router: PodSignalRouter
    private var left = CaptureAnalysis.SideResult(), right = CaptureAnalysis.SideResult()
    private var anchors: [ClockAnchor] = []
    private var serial: String?
    private var streamFrames = 0
    private var records = 0
    private var invalid = 0

    init(frontEnd: FrontEndConfig, sampleRate: Int) {
        router = PodSignalRouter(frontEnd: frontEnd, sampleRate: sampleRate)
    }

    /// One whole record: pod → hub frames are checked, decoded and routed; the hub's own
    /// frames are only counted.
    mutating func take(_ direction: Capture.Direction, _ frame: UnsafeRawBufferPointer) {
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

    /// The end of the capture: what the front ends still hold, and the result.
    consuming func result(truncatedTail: Bool) throws(CaptureAnalysisError) -> CaptureAnalysis {
        guard !anchors.isEmpty else { throw .noClockAnchor(streamFrames: streamFrames) }
        collect(router.finish())
        for side in [left, right] {
            let times = side.vitals.lazy.map(\.time) + side.beats
            guard let first = times.min(), let last = times.max() else { continue }
            if last - first > InputFormats.maximumSpan { throw .spanTooLong(days: (last - first) / 86_400) }
        }
        return CaptureAnalysis(left: left, right: right, counters: router.counters, records: records,
                               invalidFrames: invalid, truncatedTail: truncatedTail, anchors: anchors, serial: serial)
    }

    private mutating func collect(_ outputs: [SideOutput]) {
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
}
