// The latest readings of each side, as `podbridge stream` shows them: built from decoded
// stream frames only (pure, no I/O). Heart rate, breathing, movement and presence come
// from a `LiveAnalyzer` plugged in by the caller (the signal front end), not from here.
import PodProtocol
import SleepDomain

/// Per-side results of a live analyzer; nil where it has nothing (yet).
public struct SideVitals: Sendable, Hashable {
    public var present: Bool?
    public var heartRate: Double?
    public var breathingRate: Double?
    public var movement: Double?
    public init(present: Bool? = nil, heartRate: Double? = nil, breathingRate: Double? = nil, movement: Double? = nil) {
        self.present = present
        self.heartRate = heartRate
        self.breathingRate = breathingRate
        self.movement = movement
    }
}

/// The seam for live analysis: receives every decoded piezo block and capacitance reading
/// in arrival order (lost frames show as tick gaps, never filled in) and answers with the
/// current vitals per side.
public protocol LiveAnalyzer: AnyObject {
    func consume(_ block: PiezoBlock)
    func consume(_ reading: CapacitanceReading)
    func vitals(for side: BedSide) -> SideVitals
}

/// What the stream view shows for one side.
public struct SideReadings: Sendable, Hashable {
    /// Piezo peak-to-peak over about the last second (counts, first channel).
    public var piezoPeakToPeak: Int64?
    /// Latest capacitance channels (raw counts).
    public var capacitance: [Int32] = []
    /// Bed temperature in °C.
    public var bedTemperature: Double?
    public var vitals = SideVitals()
}

public final class LiveReadings {
    private let sampleRate: Int
    private let analyzer: (any LiveAnalyzer)?
    private var recent: [BedSide: [PiezoBlock]] = [:]
    private var sides: [BedSide: SideReadings] = [:]
    public private(set) var ambientTemperature: Double?
    public private(set) var humidity: Double?
    public private(set) var lastTick: UInt64?

    public init(sampleRate: Int = Wire.tickRate, analyzer: (any LiveAnalyzer)? = nil) {
        self.sampleRate = max(sampleRate, 1)
        self.analyzer = analyzer
    }

    public func apply(_ message: Message) {
        switch message {
        case .piezo(let block):
            analyzer?.consume(block)
            var blocks = recent[block.side, default: []]
            blocks.append(block)
            // Keep about one second of samples.
            while blocks.count > 1, blocks.dropFirst().reduce(0, { $0 + $1.count }) >= sampleRate { blocks.removeFirst() }
            recent[block.side] = blocks
            sides[block.side, default: SideReadings()].piezoPeakToPeak = Self.peakToPeak(blocks)
            lastTick = block.firstTick + UInt64(block.count)
        case .capacitance(let reading):
            analyzer?.consume(reading)
            sides[reading.side, default: SideReadings()].capacitance = reading.values
            lastTick = reading.tick
        case .environment(let env):
            for side in BedSide.allCases where side.index < env.bedCentiCelsius.count {
                sides[side, default: SideReadings()].bedTemperature = env.bedCentiCelsius[side.index].map { Double($0) / 100 }
            }
            ambientTemperature = env.ambientCentiCelsius.map { Double($0) / 100 }
            humidity = env.humidityCentiPercent.map { Double($0) / 100 }
            lastTick = env.tick
        default:
            break
        }
    }

    public func side(_ side: BedSide) -> SideReadings {
        var r = sides[side] ?? SideReadings()
        if let analyzer { r.vitals = analyzer.vitals(for: side) }
        return r
    }

    /// Peak-to-peak of the first channel (samples are interleaved by channel).
    static func peakToPeak(_ blocks: [PiezoBlock]) -> Int64? {
        var low = Int64.max
        var high = Int64.min
        for block in blocks where block.channels > 0 {
            var i = 0
            while i < block.samples.count {
                let v = Int64(block.samples[i])
                low = min(low, v)
                high = max(high, v)
                i += Int(block.channels)
            }
        }
        return high >= low ? high - low : nil
    }
}
