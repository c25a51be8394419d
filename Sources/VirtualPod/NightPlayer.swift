import NightModel
import PodProtocol
import SleepDomain

/// Turns the physiology model into the pod's streamed messages at the spec's rates (§6.3):
/// a 50-sample PIEZO block per side every 100 ms, CAPACITANCE at 2 Hz per side,
/// ENVIRONMENT every 5 s — all placed on *model* ticks (500 per simulated second since the
/// virtual pod started), which the engine maps to the pod's own ticks.
///
/// Samples are pulled from the model whether or not they are streamed, so the signal at a
/// given moment of the night depends only on the seed, never on when the hub listened.
struct NightPlayer: Sendable {
    static let blockSamples: UInt64 = 50
    static let capacitancePeriod: UInt64 = 250
    static let environmentPeriod: UInt64 = 2500

    private var simulator: NightSimulator
    let sides: Int
    let channels: Int
    let gain: UInt16
    /// Model tick of the next piezo block's first sample (all sides move together).
    private(set) var nextBlock: UInt64 = 0
    private(set) var nextCapacitance: UInt64 = 0
    private(set) var nextEnvironment: UInt64 = 0

    init(simulator: NightSimulator, sides: Int, gain: UInt16) {
        self.simulator = simulator
        self.sides = min(sides, simulator.config.sides.count)
        self.channels = simulator.config.channelsPerSide
        self.gain = gain
    }

    /// What the model has played, with the sleepers' answers to alarms so far.
    var truth: GroundTruth { simulator.truth }

    /// The alarm started on `side` at `modelTick`: the sleeper there hears it (NightModel's
    /// `alarmHeard`), and the rest of the night follows their answer.
    mutating func alarmStarted(side: Int, atModelTick modelTick: UInt64) {
        guard side < sides else { return }
        simulator.alarmHeard(side: side, at: Double(modelTick) / Double(Wire.tickRate))
    }

    /// The model tick at which the next message falls due.
    var nextDue: UInt64 {
        min(nextBlock + Self.blockSamples, nextCapacitance, nextEnvironment)
    }

    /// Emits (or, for kinds not in `mask`, silently consumes) everything due at or before
    /// `modelTick`, oldest first. `podTick` maps a model tick to the pod's tick, nil for
    /// moments before the pod's last boot (never streamed).
    mutating func play(through modelTick: UInt64, mask: StreamMask, podTick: (UInt64) -> UInt64?,
                       _ emit: (Message) -> Void) {
        while true {
            let blockDue = nextBlock + Self.blockSamples
            let due = min(blockDue, nextCapacitance, nextEnvironment)
            guard due <= modelTick else { return }
            if blockDue == due {
                let start = nextBlock
                for side in 0..<sides {
                    let samples = simulator.piezo(side: side, count: Int(Self.blockSamples))
                    if mask.contains(.piezo), let t = podTick(start) {
                        emit(.piezo(PiezoBlock(side: BedSide(wireValue: UInt8(side))!, channels: UInt8(channels),
                                               gain: gain, firstTick: t, samples: samples)))
                    }
                }
                nextBlock += Self.blockSamples
            }
            if nextCapacitance == due {
                if mask.contains(.capacitance), let t = podTick(due) {
                    let seconds = Double(due) / Double(Wire.tickRate)
                    for side in 0..<sides {
                        emit(.capacitance(CapacitanceReading(side: BedSide(wireValue: UInt8(side))!, tick: t,
                                                             values: simulator.capacitance(side: side, at: seconds))))
                    }
                }
                nextCapacitance += Self.capacitancePeriod
            }
            if nextEnvironment == due {
                if mask.contains(.environment), let t = podTick(due) {
                    let env = simulator.environment(at: Double(due) / Double(Wire.tickRate))
                    func centi(_ v: Double?) -> Int16? {
                        guard let v, v.isFinite, abs(v) < 300 else { return nil }
                        return Int16((v * 100).rounded())
                    }
                    let beds = env.bedTemperature
                    emit(.environment(EnvironmentReading(
                        tick: t, bedLeft: centi(beds.first),
                        bedRight: sides > 1 ? centi(beds.count > 1 ? beds[1] : nil) : nil,
                        ambient: centi(env.ambientTemperature),
                        humidity: env.humidity.isFinite ? UInt16(clamping: Int((min(max(env.humidity, 0), 100) * 100).rounded())) : nil)))
                }
                nextEnvironment += Self.environmentPeriod
            }
        }
    }
}
