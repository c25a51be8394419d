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
    package static func textbook(seed: UInt64, restingHeartRate: Double, breathingRate: Double) -> SyntheticNight {
        let night = TextbookNight(seed: seed, restingHeartRate: restingHeartRate, breathingRate: breathingRate)
        var fe = SignalFrontEnd()
        let clock = SampleClock(sampleIndex: 0, time: TextbookNight.start, sampleRate: TextbookNight.fs)
        let samples = night.samples()
        var out = FrontEndOutput()
        var i = 0, nextCap = 0.0
        while i < samples.count {
            let n = min(5_000, samples.count - i)
            let end = Double(i + n) / TextbookNight.fs
            while nextCap < end { fe.pushCapacitance([1800, 2050, 1600], at: TextbookNight.start + nextCap); nextCap += 0.5 }
            out.append(fe.pushPiezo(Array(samples[i..<(i + n)]), channels: 1, firstSampleIndex: Int64(i), clock: clock))
            i += n
        }
        out.append(fe.finish())
        let reference = night.stages.enumerated().map { i, s in
            InputFormats.StagedInterval(start: TextbookNight.start + Double(i) * epochLength,
                                        end: TextbookNight.start + Double(i + 1) * epochLength, stage: s)
        }
        return SyntheticNight(name: "textbook\(seed)", output: out, reference: reference)
    }

    /// A NightModel night of one sleeper on the left side (one channel, no pump), in bed the
    /// whole time; the reference is the stage filling most seconds of each 30-s epoch.
    package static func nightModel(seed: UInt64, hours: Double = 7) -> SyntheticNight {
        let sleeper = SleeperProfile(getsIn: 0, getsOutBeforeEnd: 0)
        let config = NightConfig(seed: seed, duration: hours * 3600, sides: [SideConfig(sleeper: sleeper), .empty],
                                 pumpVibration: false, channelsPerSide: 1)
        var sim = NightSimulator(config: config)
        let start = 1_750_000_020.0
        let clock = SampleClock(sampleIndex: 0, time: start, sampleRate: config.sampleRate)
        var fe = SignalFrontEnd()
        var out = FrontEndOutput()
        let total = Int(config.duration * config.sampleRate)
        var index = 0, nextCap = 0.0
        while index < total {
            let n = min(5_000, total - index)
            let samples = sim.piezo(side: 0, count: n)
            let end = Double(index + n) / config.sampleRate
            while nextCap < end { fe.pushCapacitance(sim.capacitance(side: 0, at: nextCap), at: start + nextCap); nextCap += 0.5 }
            out.append(fe.pushPiezo(samples, channels: 1, firstSampleIndex: Int64(index), clock: clock))
            index += n
        }
        out.append(fe.finish())
        let truth = sim.truth.sides[0]
        var reference: [InputFormats.StagedInterval] = []
        for e in 0..<(truth.stage.count / 30) {
            var counts: [SleepStage: Int] = [:]
            for s in (e * 30)..<(e * 30 + 30) { if let st = truth.stage[s] { counts[st, default: 0] += 1 } }
            let top = counts.max { $0.value < $1.value }
            reference.append(InputFormats.StagedInterval(start: start + Double(e * 30), end: start + Double(e * 30 + 30),
                                                         stage: (top?.value ?? 0) >= 16 ? top?.key : nil))
        }
        return SyntheticNight(name: "nightmodel\(seed)", output: out, reference: reference)
    }

    /// The night staged by `analyzer`, scored against its reference.
    package func evaluate(_ analyzer: SleepAnalyzer) -> StagingEvaluation {
        StagingEvaluation(reference: reference, predicted: analyzer.analyze(beats: output.beats, vitals: output.seconds))
    }
}
