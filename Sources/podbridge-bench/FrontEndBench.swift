import Foundation
import NightModel
import SleepAnalysis

/// Front-end benchmark: accuracy of heart and breathing rates against the NightModel's
/// ground truth at three noise levels, phantom readings on an empty side, the time to run
/// an 8-hour two-sided night, and the live pipeline's CPU per hour of data.
func runFrontEndBench(options: BenchOptions) throws {
    let hours = options.quick ? 2.0 : 8.0
    print("front-end nights: \(hours) h, two sides, 2 channels, pump on, seeds 11 and 12")
    for noise in NoiseLevel.allCases {
        var scores: [FrontEndNightScore] = []
        var seconds = 0.0
        for seed: UInt64 in [11, 12] {
            let config = NightConfig(seed: seed, duration: hours * 3600, noise: noise)
            let run = FrontEndNightRun(config: config, chunkFrames: 500)
            scores += run.scores
            seconds += run.frontEndSeconds
        }
        let s = FrontEndNightScore.pooled(scores)
        let tag = "frontend.\(noise.rawValue)"
        print("\(tag).hr_mae: \(fmt(s.hrMAE)) bpm")
        print("\(tag).hr_coverage: \(fmt(100 * s.hrCoverage)) % of in-bed minutes")
        print("\(tag).br_mae: \(fmt(s.brMAE)) /min")
        print("\(tag).br_coverage: \(fmt(100 * s.brCoverage)) % of in-bed minutes")
        print("\(tag).beat_sensitivity: \(fmt(100 * s.beatSensitivity)) % of true beats found within 100 ms")
        print("\(tag).beat_timing_sd: \(fmt(1000 * s.beatTimingSD, 1)) ms")
        print("\(tag).presence_agreement: \(fmt(100 * s.presenceAgreement)) % of seconds")
        print("\(tag).seconds_per_night: \(fmt(seconds / Double(scores.count / 2) * 8 / hours, 3)) s (8-h two-sided night, front end only, CPU time)")
    }

    // The model itself: rendering a night's piezo for both sides (what the virtual pod does).
    let renderStart = threadCPUSeconds()
    var sim = NightSimulator(config: NightConfig(seed: 15, duration: hours * 3600))
    let planSeconds = threadCPUSeconds() - renderStart
    var checksum = 0
    for side in 0..<2 {
        var left = Int(hours * 3600 * 500)
        while left > 0 { let n = min(left, 25_000); checksum &+= Int(sim.piezo(side: side, count: n)[0]); left -= n }
    }
    let renderSeconds = threadCPUSeconds() - renderStart
    print("nightmodel.plan_seconds: \(fmt(planSeconds, 3)) s (stages, rates, beats for two sides)")
    print("nightmodel.render_seconds_per_night: \(fmt(renderSeconds * 8 / hours, 3)) s (8-h two-sided 2-channel piezo, CPU time; checksum \(checksum & 0xFF))")

    // An empty side next to an occupied one: no phantom presence or vitals.
    let emptyConfig = NightConfig(seed: 13, duration: hours * 3600,
                                  sides: [SideConfig(), .empty], noise: .high)
    let emptyRun = FrontEndNightRun(config: emptyConfig, chunkFrames: 500)
    let phantom = emptyRun.outputs[1].seconds
    print("frontend.empty_side.present_seconds: \(phantom.filter(\.present).count) of \(phantom.count) s (high noise, pump on)")
    print("frontend.empty_side.heart_rate_readings: \(phantom.filter { $0.heartRate.value != nil }.count) s")

    // Live: one hour in 0.1-s pushes (as frames arrive), both sides.
    let live = FrontEndNightRun(config: NightConfig(seed: 14, duration: 3600), chunkFrames: 50)
    print("frontend.live_cpu: \(fmt(100 * live.frontEndSeconds / 3600, 4)) % of one core (two sides, 0.1-s pushes)")
    print("frontend.live_seconds_per_hour: \(fmt(live.frontEndSeconds, 3)) s")
}

/// CPU time of the calling thread (not wall time, so other processes on a shared machine
/// do not inflate the figure).
private func threadCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// Plays a NightModel night through one front end per side, timing (thread CPU) only the front end.
struct FrontEndNightRun {
    var outputs: [FrontEndOutput] = []
    /// What the model played (the smart-wake bench scores its moments against it).
    var truth: GroundTruth
    var scores: [FrontEndNightScore] = []
    var frontEndSeconds = 0.0

    static let epoch = 1_750_000_000.0

    init(config: NightConfig, chunkFrames: Int) {
        var sim = NightSimulator(config: config)
        truth = sim.truth
        let clock = SampleClock(sampleIndex: 0, time: Self.epoch, sampleRate: config.sampleRate)
        let total = Int(config.duration * config.sampleRate)
        let ch = config.channelsPerSide
        let capStep = 1 / config.capacitanceRate
        for side in config.sides.indices {
            var fe = SignalFrontEnd()
            var out = FrontEndOutput()
            var index = 0
            var nextCap = 0.0
            var elapsed = 0.0
            while index < total {
                let n = min(chunkFrames, total - index)
                let samples = sim.piezo(side: side, count: n)
                let endT = Double(index + n) / config.sampleRate
                var caps: [(Double, [Int32])] = []
                while nextCap < endT { caps.append((nextCap, sim.capacitance(side: side, at: nextCap))); nextCap += capStep }
                let start = threadCPUSeconds()
                for (t, v) in caps { fe.pushCapacitance(v, at: Self.epoch + t) }
                out.append(fe.pushPiezo(samples, channels: ch, firstSampleIndex: Int64(index), clock: clock))
                elapsed += threadCPUSeconds() - start
                index += n
            }
            let start = threadCPUSeconds()
            out.append(fe.finish())
            elapsed += threadCPUSeconds() - start
            frontEndSeconds += elapsed
            outputs.append(out)
            scores.append(FrontEndNightScore(output: out, truth: sim.truth.sides[side], epoch: Self.epoch))
        }
    }
}

/// Per-minute comparison of front-end vitals with the ground truth, over in-bed minutes
/// (minutes the sleeper was present for all 60 s). A minute has a reading when at least
/// `minSeconds` of its seconds carry a value; its estimate is the mean of those values.
struct FrontEndNightScore {
    static let minSeconds = 20
    var hrErrors: [Double] = []
    var brErrors: [Double] = []
    var inBedMinutes = 0
    var agreeSeconds = 0
    var totalSeconds = 0
    /// Detected-minus-true J-peak offsets of matched beats, and the number of true beats.
    var beatOffsets: [Double] = []
    var trueBeats = 0

    var beatSensitivity: Double { trueBeats == 0 ? .nan : Double(beatOffsets.count) / Double(trueBeats) }
    var beatTimingSD: Double {
        guard beatOffsets.count > 1 else { return .nan }
        let m = mean(beatOffsets)
        return (beatOffsets.map { ($0 - m) * ($0 - m) }.reduce(0, +) / Double(beatOffsets.count - 1)).squareRoot()
    }

    var hrMAE: Double { hrErrors.isEmpty ? .nan : hrErrors.reduce(0, +) / Double(hrErrors.count) }
    var brMAE: Double { brErrors.isEmpty ? .nan : brErrors.reduce(0, +) / Double(brErrors.count) }
    var hrCoverage: Double { inBedMinutes == 0 ? .nan : Double(hrErrors.count) / Double(inBedMinutes) }
    var brCoverage: Double { inBedMinutes == 0 ? .nan : Double(brErrors.count) / Double(inBedMinutes) }
    var presenceAgreement: Double { totalSeconds == 0 ? .nan : Double(agreeSeconds) / Double(totalSeconds) }

    init() {}

    init(output: FrontEndOutput, truth: SideTruth, epoch: Double) {
        let n = truth.present.count
        var hr = [Double?](repeating: nil, count: n), br = [Double?](repeating: nil, count: n)
        var present = [Bool?](repeating: nil, count: n)
        for v in output.seconds {
            let i = Int((v.time - epoch).rounded())
            guard i >= 0, i < n else { continue }
            hr[i] = v.heartRate.value
            br[i] = v.breathingRate.value
            present[i] = v.present
        }
        for i in 0..<n {
            totalSeconds += 1
            if present[i] == truth.present[i] { agreeSeconds += 1 }
        }
        // Each true J-peak matched to the nearest detected beat within 100 ms.
        let detected = output.beats.map { $0 - epoch }
        var j = 0
        for b in truth.beatTimes {
            let target = b + BCGTemplate.jDelay
            while j + 1 < detected.count && detected[j + 1] <= target { j += 1 }
            var best = Double.infinity
            for k in [j, j + 1] where k < detected.count && abs(detected[k] - target) < abs(best) { best = detected[k] - target }
            if abs(best) < 0.1 { beatOffsets.append(best) }
        }
        trueBeats = truth.beatTimes.count
        for m in 0..<(n / 60) {
            let r = (m * 60)..<(m * 60 + 60)
            guard r.allSatisfy({ truth.present[$0] }) else { continue }
            inBedMinutes += 1
            let tHR = r.compactMap { truth.heartRate[$0] }, tBR = r.compactMap { truth.breathingRate[$0] }
            let eHR = r.compactMap { hr[$0] }, eBR = r.compactMap { br[$0] }
            if eHR.count >= Self.minSeconds, !tHR.isEmpty { hrErrors.append(abs(mean(eHR) - mean(tHR))) }
            if eBR.count >= Self.minSeconds, !tBR.isEmpty { brErrors.append(abs(mean(eBR) - mean(tBR))) }
        }
    }

    static func pooled(_ all: [FrontEndNightScore]) -> FrontEndNightScore {
        var p = FrontEndNightScore()
        for s in all {
            p.hrErrors += s.hrErrors; p.brErrors += s.brErrors
            p.beatOffsets += s.beatOffsets; p.trueBeats += s.trueBeats
            p.inBedMinutes += s.inBedMinutes; p.agreeSeconds += s.agreeSeconds; p.totalSeconds += s.totalSeconds
        }
        return p
    }
}

private func mean(_ a: [Double]) -> Double { a.reduce(0, +) / Double(a.count) }

private func fmt(_ v: Double, _ decimals: Int = 2) -> String {
    guard v.isFinite else { return "n/a" }
    return String(format: "%.\(decimals)f", v)
}
