import Foundation
import NightModel
import SleepAnalysis
import SleepDomain

/// A synthetic night rendered as raw piezo, run through the real front end, with the
/// generator's own stages as the reference: what the staging tests and `make bench` judge
/// the shipped model by on physiology it was not fitted to.
package struct SyntheticNight: Sendable {
    package var name: String
    /// Beats and per-second vitals, as the front end produced them from the piezo.
    package var output: FrontEndOutput
    package var reference: [InputFormats.StagedInterval]

    /// A `TextbookNight` (one channel, capacitance of a sleeper in bed throughout).
    package static func textbook(seed: UInt64, restingHeartRate: Double, breathingRate: Double,
                                 pattern: TextbookNight.Pattern = .typical) -> SyntheticNight {
        let night = TextbookNight(seed: seed, restingHeartRate: restingHeartRate, breathingRate: breathingRate, pattern: pattern)
        let samples = night.samples()
        let out = frontEnd(piezo: samples, sampleRate: TextbookNight.fs, start: TextbookNight.start) { _ in [1800, 2050, 1600] }
        let reference = night.stages.enumerated().map { i, s in
            InputFormats.StagedInterval(start: TextbookNight.start + Double(i) * epochLength,
                                        end: TextbookNight.start + Double(i + 1) * epochLength, stage: s)
        }
        let name = pattern == .typical ? "textbook\(seed)" : "textbook_\(pattern.rawValue)\(seed)"
        return SyntheticNight(name: name, output: out, reference: reference)
    }

    /// A NightModel night of one sleeper on the left side (one channel, no pump), in bed the
    /// whole time; the reference is `SideTruth.epochStage`, the stage of most of each epoch.
    package static func nightModel(seed: UInt64, hours: Double = 7) -> SyntheticNight {
        let sleeper = SleeperProfile(getsIn: 0, getsOutBeforeEnd: 0)
        let config = NightConfig(seed: seed, duration: hours * 3600, sides: [SideConfig(sleeper: sleeper), .empty],
                                 pumpVibration: false, channelsPerSide: 1)
        var sim = NightSimulator(config: config)
        let start = 1_750_000_020.0
        let piezo = sim.piezo(side: 0, count: Int(config.duration * config.sampleRate))
        let out = frontEnd(piezo: piezo, sampleRate: config.sampleRate, start: start) { sim.capacitance(side: 0, at: $0) }
        let truth = sim.truth.sides[0]
        let reference = (0..<(truth.stage.count / 30)).map { e in
            InputFormats.StagedInterval(start: start + Double(e * 30), end: start + Double(e * 30 + 30),
                                        stage: truth.epochStage(startingAt: e * 30))
        }
        return SyntheticNight(name: "nightmodel\(seed)", output: out, reference: reference)
    }

    /// One channel of piezo from `start`, with a capacitance reading every 0.5 s (`capacitance`
    /// of the seconds since `start`), through a fresh front end.
    private static func frontEnd(piezo: [Int32], sampleRate: Double, start: Double,
                                 capacitance: (Double) -> [Int32]) -> FrontEndOutput {
        let seconds = Double(piezo.count) / sampleRate
        let caps = stride(from: 0.0, to: seconds, by: 0.5).map { CapacitanceSample(time: start + $0, values: capacitance($0)) }
        return SignalFrontEnd.analyze(piezo: piezo, channels: 1,
                                      clock: SampleClock(sampleIndex: 0, time: start, sampleRate: sampleRate), capacitance: caps)
    }

    /// The night staged by `analyzer`, scored against its reference.
    package func evaluate(_ analyzer: SleepAnalyzer) -> StagingEvaluation {
        StagingEvaluation(reference: reference, predicted: analyzer.analyze(beats: output.beats, vitals: output.seconds))
    }
}
