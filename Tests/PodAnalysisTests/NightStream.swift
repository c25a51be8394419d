import NightModel
import PodProtocol
import SleepDomain

/// A NightModel night as a pod streams it: per side a 50-sample PIEZO block every 100 ms
/// (sent when complete) and a CAPACITANCE reading every 250 ticks, oldest first, with
/// ticks counted from `firstTick`.
struct NightStream {
    var simulator: NightSimulator
    let firstTick: UInt64
    /// Model ticks already streamed.
    private(set) var modelTick: UInt64 = 0

    init(_ config: NightConfig, firstTick: UInt64 = 0) {
        simulator = NightSimulator(config: config)
        self.firstTick = firstTick
    }

    /// The messages of the next `seconds` of the night.
    mutating func next(seconds: Double) -> [Message] {
        let end = modelTick + UInt64(seconds * 500)
        var out: [Message] = []
        let sides = simulator.config.sides.count
        let channels = UInt8(simulator.config.channelsPerSide)
        while modelTick < end {
            for side in 0..<sides {
                let samples = simulator.piezo(side: side, count: 50)
                out.append(.piezo(PiezoBlock(side: BedSide(wireValue: UInt8(side))!, channels: channels, gain: 16,
                                             firstTick: firstTick + modelTick, samples: samples)))
            }
            modelTick += 50
            if modelTick % 250 == 0 {
                for side in 0..<sides {
                    let values = simulator.capacitance(side: side, at: Double(modelTick) / 500)
                    out.append(.capacitance(CapacitanceReading(side: BedSide(wireValue: UInt8(side))!,
                                                               tick: firstTick + modelTick, values: values)))
                }
            }
        }
        return out
    }
}

/// A night config with the sleeper(s) in bed from the first second to the last.
func inBedNight(seed: UInt64, duration: Double, left: Bool = true, right: Bool = true,
                channels: Int = 2, pump: Bool = false) -> NightConfig {
    let sleeper = SleeperProfile(getsIn: 0, getsOutBeforeEnd: 0, sleepOnsetLatency: 30, bathroomTrip: false)
    let sides = [left ? SideConfig(sleeper: sleeper) : .empty, right ? SideConfig(sleeper: sleeper) : .empty]
    return NightConfig(seed: seed, duration: duration, sides: sides, pumpVibration: pump, channelsPerSide: channels)
}
