import SleepDomain

/// What the simulator actually played, so the analyzer can be scored against it.
package struct GroundTruth: Sendable {
    /// Whole seconds in the night; per-second arrays have this many entries.
    package var duration: Int
    package var sides: [SideTruth]
    /// When the pump ran (model seconds).
    package var pumpBursts: [PumpBurst]
    /// The alarms the sleepers heard, in order, and what they did (`NightSimulator.alarmHeard`).
    package var alarmReactions: [AlarmReaction] = []
}

/// One side's truth, per second of model time (index = second) and per heartbeat.
package struct SideTruth: Sendable {
    package var occupied: Bool
    package var present: [Bool]
    /// Stage per second; nil while the side is empty.
    package var stage: [SleepStage?]
    /// Beats per minute over each second (time-weighted 60/RR, so a minute's mean equals
    /// the minute's beat count rate); nil while empty.
    package var heartRate: [Double?]
    /// Breaths per minute in each second; nil while empty.
    package var breathingRate: [Double?]
    /// True when a movement burst touches the second.
    package var movement: [Bool]
    /// Heartbeat (R-wave) times in model seconds; the BCG J-peak follows by `BCGTemplate.jDelay`.
    package var beatTimes: [Double]
}

extension SideTruth {
    /// The reference stage of the `length`-second epoch that starts `second` seconds into the
    /// night: the stage most of its in-bed seconds had, or nil when the side was in bed for
    /// half the epoch or less. The one rule every scoring of a simulated night uses.
    package func epochStage(startingAt second: Int, length: Int = 30) -> SleepStage? {
        var counts: [SleepStage: Int] = [:]
        var inBed = 0
        for i in second..<(second + length) {
            guard i >= 0, i < present.count, present[i], let s = stage[i] else { continue }
            inBed += 1
            counts[s, default: 0] += 1
        }
        guard 2 * inBed > length else { return nil }
        return SleepStage.allCases.max { counts[$0, default: 0] < counts[$1, default: 0] }
    }
}

extension GroundTruth {
    /// Per-second truth for every side. Columns:
    /// `t` (seconds, model time + `timeOffset`), `side` (0 left, 1 right), `present` (0/1),
    /// `stage` (awake/core/deep/rem, empty when absent), `heart_rate` (bpm, empty when absent),
    /// `breathing_rate` (per minute, empty when absent), `movement` (0/1).
    package func csv(timeOffset: Double = 0) -> String {
        var out = "t,side,present,stage,heart_rate,breathing_rate,movement\n"
        out.reserveCapacity(duration * sides.count * 40)
        for s in 0..<duration {
            for (k, side) in sides.enumerated() {
                out += Self.format(Double(s) + timeOffset, decimals: 0)
                out += ",\(k),\(side.present[s] ? 1 : 0),\(side.stage[s]?.rawValue ?? ""),"
                if let hr = side.heartRate[s] { out += Self.format(hr, decimals: 2) }
                out += ","
                if let br = side.breathingRate[s] { out += Self.format(br, decimals: 2) }
                out += ",\(side.movement[s] ? 1 : 0)\n"
            }
        }
        return out
    }

    /// One side's heartbeats in the analyzer's beats-CSV format: header `beat_time`, one
    /// R-wave time per line in seconds (model time + `timeOffset`, e.g. Unix seconds).
    package func beatsCSV(side: Int, timeOffset: Double = 0) -> String {
        guard sides.indices.contains(side) else { return "beat_time\n" }
        var out = "beat_time\n"
        out.reserveCapacity(sides[side].beatTimes.count * 18)
        for t in sides[side].beatTimes { out += Self.format(t + timeOffset, decimals: 4) + "\n" }
        return out
    }

    /// Fixed-point formatting without Foundation's locale-dependent formatters.
    static func format(_ v: Double, decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let negative = v < 0
        let scaled = (abs(v) * scale).rounded()
        let whole = Int64(scaled / scale)
        let frac = Int64(scaled - Double(whole) * scale)
        var s = (negative && scaled != 0 ? "-" : "") + String(whole)
        if decimals > 0 {
            var f = String(frac)
            while f.count < decimals { f = "0" + f }
            s += "." + f
        }
        return s
    }
}
